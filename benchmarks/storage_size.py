"""SQLite bytes against the text it stores, over a long session (#16 item 11).

The benchmark session is rendered at every request point and persisted at every turn
end; at the end the store's size (pages in use, WAL included) is compared with the
UTF-8 bytes of the text it holds: every turn-log block and every summary.

    python -m benchmarks.storage_size [--turns 1200]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.session import SYSTEM_PROMPT, generate, is_request_point
from benchmarks.strategies import Ours


def run(turns: int = 1_200, budget: int = 32_000, seed: int = 0) -> dict[str, Any]:
    import index_store

    with tempfile.TemporaryDirectory() as tmp:
        store = index_store.open(f"sqlite:///{Path(tmp) / 'size.db'}")
        ours = Ours(budget)
        last_turn = -1
        for e in generate(turns, seed):
            if e.turn != last_turn and last_turn >= 0:
                ours.tl.persist(store)
            last_turn = e.turn
            ours.add(e)
            if is_request_point(e):
                ours.tl.render(SYSTEM_PROMPT)
        ours.tl.persist(store)
        log = store.turn_log("bench")
        summaries = store.summaries("bench")
        text = sum(len(b.text.encode("utf-8")) for b in [*log, *summaries])
        size = store.size_bytes()
        store.close()
    return {
        "turns": turns,
        "blocks": len(log),
        "summaries": len(summaries),
        "text_bytes": text,
        "size": size,
        "ratio": size / text,
    }


def report(res: dict[str, Any]) -> list[str]:
    return [
        "| turns | turn-log blocks | summaries | text + summaries (UTF-8) | database | ratio |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {res['turns']:,} | {res['blocks']:,} | {res['summaries']:,} | "
        f"{res['text_bytes'] / 2**20:,.2f} MiB | {res['size'] / 2**20:,.2f} MiB | "
        f"{res['ratio']:.2f}x |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=1_200)
    args = parser.parse_args()
    print("\n".join(report(run(turns=args.turns))))


if __name__ == "__main__":
    main()
