"""Tiered compaction against summarize-only and the peers (#26): the same session and
budget, scored per request on input cost with cache pricing, tokens sent and how many of
the user's own messages are still shown verbatim.

``python -m benchmarks.tiers`` prints the table; ``--sweep`` also measures the
``ClearingPolicy`` settings the shipped defaults were chosen from (docs/compaction.md).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import attrs

from benchmarks.evaluate import Evaluator
from benchmarks.peer_strategies import SUMMARY_TEXT, Stacked, Strands, Summarize
from benchmarks.peers import feed_together
from benchmarks.session import generate
from benchmarks.strategies import Ours
from timeline import CacheWarmSummarizer, ClearingPolicy

__all__ = [
    "OFFLOAD",
    "OFFLOAD_OVER",
    "PEER",
    "STACKED",
    "SUMMARIZE_ONLY",
    "TIERED",
    "report",
    "run",
    "sweep",
]

SUMMARIZE_ONLY = "ours, summarize only"
TIERED = "ours, tiered (ClearingPolicy defaults)"
OFFLOAD_OVER = 1_000
"""The offload limit of the offload row: about 4,000 characters of tool output."""
OFFLOAD = f"ours, tiered + offload over {OFFLOAD_OVER:,} tokens"
PEER = "LangChain SummarizationMiddleware (memoized counter)"
STACKED = "LangChain ContextEditingMiddleware + SummarizationMiddleware"


def _tiered_warm(budget: int) -> Ours:
    """Ours tiered, with the cache-warm LLM summary (a fake model) instead of the
    inventory: its summary requests go through the same simulated cache."""
    sent: list[Ours] = []

    def complete(request: dict[str, Any]) -> str:
        sent[0].note_side(request)
        return SUMMARY_TEXT

    sent.append(
        Ours(
            budget,
            check_payloads=False,
            clearing=ClearingPolicy(),
            summarizer=CacheWarmSummarizer(complete),
            name="ours, tiered + CacheWarmSummarizer",
        )
    )
    return sent[0]


def strategies(budget: int, strands: bool = True) -> list[Any]:
    """The strategies of the comparison, in table order (``strands=False``: without the
    Strands peer, which only the benchmark environment installs)."""
    return [
        Ours(budget, check_payloads=False, name=SUMMARIZE_ONLY),
        Ours(budget, check_payloads=False, clearing=ClearingPolicy(), name=TIERED),
        Ours(
            budget,
            check_payloads=False,
            clearing=ClearingPolicy(offload_over_tokens=OFFLOAD_OVER),
            name=OFFLOAD,
        ),
        _tiered_warm(budget),
        Summarize(budget, memoized=True),
        Stacked(budget, memoized=True),
        *([Strands()] if strands else []),
    ]


def _score(strategy: Any, requests: list[Any], ev: Evaluator, users: set[str]) -> dict[str, Any]:
    side = getattr(strategy, "side", ())
    scores = ev.score(requests, side=side, user_messages=users)
    n = scores["requests"]
    return {
        "name": strategy.name,
        **scores,
        "total_cost_per_request": (scores["cost_per_request"] * n + scores["summary_cost"]) / n,
    }


def run(
    turns: int = 300, budget: int = 32_000, seed: int = 0, strands: bool = True
) -> dict[str, Any]:
    """Every strategy fed the same events in lockstep, then scored the same way."""
    started = time.perf_counter()
    events = list(generate(turns, seed))
    users = {e.text for e in events if e.kind == "user"}
    made = strategies(budget, strands)
    fed = feed_together(made, events)
    ev = Evaluator(budget)
    rows = [_score(s, r, ev, users) for s, r in zip(made, fed, strict=True)]
    return {
        "turns": turns,
        "budget": budget,
        "user_messages": len(users),
        "rows": rows,
        "seconds": time.perf_counter() - started,
    }


SWEEP: dict[str, Callable[[], ClearingPolicy]] = {
    "keep 3, at least budget/10, summary keeps 0.4 (defaults)": lambda: ClearingPolicy(),
    "keep 1": lambda: ClearingPolicy(keep_tool_results=1),
    "keep 8": lambda: ClearingPolicy(keep_tool_results=8),
    "at least budget/40": lambda: ClearingPolicy(clear_at_least_tokens=800),
    "at least budget/4": lambda: ClearingPolicy(clear_at_least_tokens=8_000),
    "summary keeps 0.25": lambda: ClearingPolicy(summary_keep_ratio=0.25),
    "summary keeps 0.6": lambda: ClearingPolicy(summary_keep_ratio=0.6),
    "summary keeps keep_ratio (0.7)": lambda: ClearingPolicy(summary_keep_ratio=None),
}
"""The settings measured around the defaults, at the 32k budget (the clear_at_least
figures are its 40th and 4th)."""


def sweep(turns: int = 300, budget: int = 32_000, seed: int = 0) -> list[dict[str, Any]]:
    """Ours tiered under each :data:`SWEEP` setting, scored like :func:`run`."""
    events = list(generate(turns, seed))
    users = {e.text for e in events if e.kind == "user"}
    made = [
        Ours(budget, check_payloads=False, clearing=make(), name=name)
        for name, make in SWEEP.items()
    ]
    ev = Evaluator(budget)
    return [_score(s, r, ev, users) for s, r in zip(made, feed_together(made, events), strict=True)]


def report(rows: list[dict[str, Any]], user_messages: int) -> list[str]:
    """The comparison table (cost in uncached-input-token units per request)."""
    out = [
        "| strategy | input cost / request | incl. summary requests | mean tokens sent | "
        "cached (sim.) | user messages verbatim (mean of "
        f"{user_messages}) | max tokens | over budget | orphans | summary requests: "
        "number, cached |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        side = (
            f"{r['summary_requests']}, {r['summary_cached']:.1%}" if r["summary_requests"] else "-"
        )
        out.append(
            f"| {r['name']} | {r['cost_per_request']:,.0f} | {r['total_cost_per_request']:,.0f} "
            f"| {r['mean_tokens']:,.0f} | {r['cached']:.1%} | {r['user_visible']:.1f} | "
            f"{r['max_tokens']:,} | {r['over_budget']} | {r['orphans']} | {side} |"
        )
    return out


@attrs.frozen
class _Ratio:
    cost: float
    visible: float


def ratio(rows: list[dict[str, Any]], ours: str, peer: str) -> _Ratio:
    """``ours`` against ``peer``: input cost per request (summary requests included) and
    user messages shown verbatim."""
    by = {r["name"]: r for r in rows}
    a, b = by[ours], by[peer]
    return _Ratio(
        a["total_cost_per_request"] / b["total_cost_per_request"],
        a["user_visible"] / b["user_visible"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    res = run(args.turns, args.budget)
    print("\n".join(report(res["rows"], res["user_messages"])))
    print(f"({res['seconds']:.0f} s)")
    if args.sweep:
        print("\n".join(report(sweep(args.turns, args.budget), res["user_messages"])))


if __name__ == "__main__":
    main()
