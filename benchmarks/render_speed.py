"""Render time per call at 100, 1,000 and 10,000 visible blocks, and tokenizer work.

The steady state of an agent loop: one block appended, then a render. A render must
not re-tokenize old blocks, so its cost is the new block plus a copy of the stream.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks._util import median, p95, us
from timeline import CompactionPolicy, Timeline, blocks


class CountingCounter:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return int(self.inner.count(text))


def run(
    sizes: tuple[int, ...] = (100, 1_000, 10_000),
    repeats: int = 300,
    payload: bool = True,
    collect: bool = True,
) -> dict[str, Any]:
    """``payload=False``: no ``to_anthropic()`` between renders (the column shows 0): the
    payload's copy then leaves nothing behind that slows the next render.
    ``collect=False``: the garbage collector is off while the renders are timed (so one
    can tell a collection's cost from the copy's other after-effects)."""
    import gc

    from timeline import TiktokenCounter

    rows = []
    for n in sizes:
        counter = CountingCounter(TiktokenCounter())
        tl = Timeline("bench", policy=CompactionPolicy(max_tokens=10**9), token_counter=counter)
        tl.begin_turn()
        for i in range(n - 1):
            tl.append(blocks.user_prompt(f"message {i}: the quick brown fox jumps"))
        system = "You are a coding agent."
        tl.render(system)
        render_times = []
        anthropic_times = []
        calls_before = counter.calls
        if not collect:
            gc.disable()
        for i in range(repeats):
            tl.append(blocks.assistant_completion(f"reply {i}"))
            start = time.perf_counter()
            view = tl.render(system)
            render_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            if payload:
                view.to_anthropic()
            anthropic_times.append(time.perf_counter() - start)
        gc.enable()
        retokenized = counter.calls - calls_before - repeats
        rows.append(
            {
                "blocks": n,
                "render_median": median(render_times),
                "render_p95": p95(render_times),
                "anthropic_median": median(anthropic_times),
                "per_block": median(render_times) / n,
                "extra_tokenizer_calls": retokenized,
            }
        )
    return {"rows": rows}


def report(result: dict[str, Any]) -> list[str]:
    lines = [
        "| visible blocks | render median | render p95 | per block | + to_anthropic() | "
        "old blocks re-tokenized |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['blocks']:,} | {us(r['render_median'])} | {us(r['render_p95'])} | "
            f"{r['per_block'] * 1e9:,.0f} ns | {us(r['anthropic_median'])} | "
            f"{r['extra_tokenizer_calls']} |"
        )
    return lines


if __name__ == "__main__":
    import sys

    flags = set(sys.argv[1:])
    result = run(payload="--no-payload" not in flags, collect="--no-gc" not in flags)
    print("\n".join(report(result)))
