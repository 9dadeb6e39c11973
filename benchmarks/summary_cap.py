"""The summary cap over session length: summary size and mean request size at 300 and
1,200 turns of the benchmark session (#16 item 10).

The inventory summary folds older requests and shortens its lists so it stays within
``summary_max_tokens`` (10% of the budget by default), so the request size must not
creep as the session grows.
"""

from __future__ import annotations

from typing import Any

from benchmarks.session import SYSTEM_PROMPT, generate, is_request_point
from benchmarks.strategies import Ours
from timeline import TiktokenCounter


def run(
    lengths: tuple[int, ...] = (300, 1_200), budget: int = 32_000, seed: int = 0
) -> dict[str, Any]:
    counter = TiktokenCounter(backend="tiktoken")  # an independent exact count
    rows = []
    for turns in lengths:
        ours = Ours(budget)
        tokens: list[int] = []
        summary_tokens: list[int] = []
        summaries = 0
        for e in generate(turns, seed):
            ours.add(e)
            if is_request_point(e):
                view = ours.tl.render(SYSTEM_PROMPT)
                tokens.append(view.tokens)
                if view.compaction is not None:
                    summaries += 1
                    summary = view.blocks[0]  # a compacted render starts with its summary
                    summary_tokens.append(counter.count(summary.text))
        rows.append(
            {
                "turns": turns,
                "requests": len(tokens),
                "mean_tokens": sum(tokens) / len(tokens),
                "summaries": summaries,
                "summary_max": max(summary_tokens, default=0),
                "summary_last": summary_tokens[-1] if summary_tokens else 0,
                "cap": ours.tl.policy.summary_budget(),
            }
        )
    return {"rows": rows}


def report(res: dict[str, Any]) -> list[str]:
    rows = res["rows"]
    out = [
        "| turns | requests | mean request tokens | vs first | compactions | "
        "largest summary (tiktoken) | last summary | summary cap |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = rows[0]["mean_tokens"]
    for r in rows:
        out.append(
            f"| {r['turns']:,} | {r['requests']:,} | {r['mean_tokens']:,.0f} | "
            f"{r['mean_tokens'] / base:.3f}x | {r['summaries']} | {r['summary_max']:,} | "
            f"{r['summary_last']:,} | {r['cap']:,} |"
        )
    return out
