"""``python -m benchmarks.compaction_renders``: what the render p95 of the peer comparison
is made of. The same seeded coding session and budget as ``python -m benchmarks``, one
render before every request; each render's CPU time (``time.process_time``, so another
process on the machine adds less) is put with the renders that compacted or with the
others. ``--policy NAME=JSON`` compares policy changes (the mapping
``CompactionPolicy.from_mapping`` takes) on the same session, e.g. ``--policy 'default={}'
--policy 'keep06={"keep_ratio": 0.6}' --policy 'no-recall={"recall": null}'``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from benchmarks._util import median, p95
from benchmarks.session import SYSTEM_PROMPT, generate, is_request_point
from benchmarks.strategies import Ours
from timeline import CompactionPolicy


def run(turns: int, budget: int, changes: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """One pass of the session with ``changes`` to the comparison's policy."""
    ours = Ours(budget, check_payloads=False)
    tl = ours.tl
    if changes:  # (the comparison's policy is the default one at the budget)
        tl.policy = CompactionPolicy.from_mapping({**changes, "max_tokens": budget})
    compactions = [0]
    tl.on_after_compaction = lambda *_a, **_k: compactions.__setitem__(0, compactions[0] + 1)
    compacting: list[float] = []
    others: list[float] = []
    for e in generate(turns, seed):
        ours.add(e)
        if not is_request_point(e):
            continue
        before = compactions[0]
        start = time.process_time()
        tl.render(SYSTEM_PROMPT)
        took = time.process_time() - start
        (compacting if compactions[0] > before else others).append(took)
    every = compacting + others
    return {
        "requests": len(every),
        "compactions": len(compacting),
        "median": median(every),
        "p95": p95(every),
        "compacting_min": min(compacting, default=0.0),
        "compacting_median": median(compacting) if compacting else 0.0,
        "others_median": median(others),
        "others_p95": p95(others),
    }


def report(rows: dict[str, dict[str, Any]]) -> list[str]:
    out = [
        "| policy | requests | compactions | share | median | p95 | compacting: fastest | "
        "compacting: median | others: median | others: p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows.items():
        out.append(
            f"| {name} | {r['requests']:,} | {r['compactions']} | "
            f"{r['compactions'] / r['requests']:.1%} | {r['median'] * 1e6:.0f} µs | "
            f"{r['p95'] * 1e3:.2f} ms | {r['compacting_min'] * 1e3:.2f} ms | "
            f"{r['compacting_median'] * 1e3:.2f} ms | {r['others_median'] * 1e6:.0f} µs | "
            f"{r['others_p95'] * 1e3:.2f} ms |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--policy", action="append", default=[], help="NAME=JSON, repeatable")
    args = parser.parse_args()
    policies = dict(p.split("=", 1) for p in args.policy) or {"default": "{}"}
    rows = {name: run(args.turns, args.budget, json.loads(text)) for name, text in policies.items()}
    print("\n".join(report(rows)))


if __name__ == "__main__":
    main()
