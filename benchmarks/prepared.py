"""Background summaries (``CompactionPolicy(prepare_at=...)``) against summaries made at
the trigger: the render time at the compactions, with a summarizer that takes 2 s.

The seeded coding-agent session of :mod:`benchmarks.session` drives one timeline per
variant, the same summarizer (2 s a call, as an LLM summary does) in both. After each
render the agent "calls its model" for ``MODEL_SECONDS``; while no summary is being
made in the background that wait changes nothing measured, so it ends as soon as the
summarizer is idle (the run takes minutes, not the hour of a real session).

``python -m benchmarks.prepared`` prints the table; ``python -m benchmarks`` includes it.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

import attrs

from benchmarks._util import p95
from benchmarks.peer_strategies import SUMMARY_TEXT
from benchmarks.session import SYSTEM_PROMPT, generate, is_request_point
from benchmarks.strategies import Ours
from timeline import CompactionPolicy, SummaryRequest

__all__ = ["MODEL_SECONDS", "SUMMARY_SECONDS", "report", "run"]

SUMMARY_SECONDS = 2.0
"""How long the summarizer takes per call."""
MODEL_SECONDS = 3.0
"""How long the agent's own model call takes between two renders."""


@attrs.define(eq=False)
class SlowSummarizer:
    """A summarizer that takes :data:`SUMMARY_SECONDS` (a model call), thread-safe, that
    says when it is idle."""

    name: str = "slow"
    seconds: float = SUMMARY_SECONDS
    calls: int = 0
    _busy: int = 0
    _idle: threading.Condition = attrs.field(factory=threading.Condition)

    def summarize(self, request: SummaryRequest) -> str:
        with self._idle:
            self.calls += 1
            self._busy += 1
        try:
            time.sleep(self.seconds)
            return SUMMARY_TEXT
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> None:
        """Return when no summary is being made, or after ``timeout`` seconds."""
        with self._idle:
            self._idle.wait_for(lambda: self._busy == 0, timeout)


def _session(
    turns: int, budget: int, seed: int, prepare_at: float | None, seconds: tuple[float, float]
) -> dict[str, Any]:
    summary_seconds, model_seconds = seconds
    summarizer = SlowSummarizer(seconds=summary_seconds)
    ours = Ours(budget, check_payloads=False, summarizer=summarizer)
    tl = ours.tl
    tl.policy = CompactionPolicy(max_tokens=budget, prepare_at=prepare_at)
    at_trigger: list[float] = []
    others: list[float] = []
    after: list[int] = []
    prepared = 0
    for event in generate(turns, seed):
        ours.add(event)
        if not is_request_point(event):
            continue
        start = time.perf_counter()
        view = tl.render(SYSTEM_PROMPT)
        elapsed = time.perf_counter() - start
        stats = view.compaction
        if stats is not None and stats.tier == "summarize" and not stats.skipped:
            at_trigger.append(elapsed)
            after.append(stats.tokens_after or 0)
            prepared += stats.prepared
        else:
            others.append(elapsed)
        summarizer.wait_idle(model_seconds)  # the agent's model call
    return {
        "name": "summary made at the trigger"
        if prepare_at is None
        else f"prepare_at={prepare_at} (background)",
        "compactions": len(at_trigger),
        "prepared": prepared,
        "median": statistics.median(at_trigger) if at_trigger else 0.0,
        "p95": p95(at_trigger),
        "max": max(at_trigger, default=0.0),
        "others_median": statistics.median(others) if others else 0.0,
        "tokens_after": statistics.mean(after) if after else 0.0,
        "summaries": summarizer.calls,
    }


def run(
    turns: int = 150,
    budget: int = 32_000,
    seed: int = 0,
    prepare_at: float = 0.8,
    seconds: tuple[float, float] = (SUMMARY_SECONDS, MODEL_SECONDS),
) -> dict[str, Any]:
    """Both variants over the same session, one after the other (``seconds``: the
    summarizer's time per call and the agent's model call)."""
    started = time.perf_counter()
    rows = [_session(turns, budget, seed, p, seconds) for p in (None, prepare_at)]
    return {
        "turns": turns,
        "budget": budget,
        "rows": rows,
        "seconds": time.perf_counter() - started,
    }


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def report(res: dict[str, Any]) -> list[str]:
    """The comparison table."""
    out = [
        "| variant | compactions (prepared) | render at the trigger: median | p95 | max | "
        "other renders: median | mean tokens after a compaction | summarizer calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["rows"]:
        out.append(
            f"| {r['name']} | {r['compactions']} ({r['prepared']}) | {_time(r['median'])} | "
            f"{_time(r['p95'])} | {_time(r['max'])} | {_time(r['others_median'])} | "
            f"{r['tokens_after']:,.0f} | {r['summaries']} |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prepare-at", type=float, default=0.8)
    args = parser.parse_args()
    res = run(args.turns, args.budget, args.seed, args.prepare_at)
    print("\n".join(report(res)))
    print(f"({res['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
