"""Figures of many runs: each session's shares, then their mean over seeds, as tables."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks._util import p95
from benchmarks.recall.runner import Outcome, Run

COLUMNS = (
    ("in prompt", "answer in the rendered prompt (verbatim, recalled or in the summary)"),
    ("recency", "answer in a plain recency window of the same budget"),
    ("recency+BM25", "answer in a recency window plus BM25 hits from older history"),
    ("in summary", "answer in the summary of the prompt"),
    ("visible", "every evidence block itself in the prompt"),
    ("search@5", "every evidence block in the top 5 of one store.search with the question"),
    ("search@10", "the same, top 10"),
    ("prompt or search", "answer in the prompt, or every evidence block in the top 10"),
    ("BM25@10", "every evidence block in the top 10 of a plain BM25 over every block"),
)


def shares(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The share of ``outcomes`` meeting each column's test, in percent."""
    n = len(outcomes) or 1

    def pct(test: Iterable[bool]) -> float:
        return 100.0 * sum(test) / n

    def top(rank: int | None, k: int) -> bool:
        return rank is not None and rank <= k

    o = outcomes
    return {
        "in prompt": pct(x.in_prompt for x in o),
        "recency": pct(x.recency for x in o),
        "recency+BM25": pct(x.recency_bm25 for x in o),
        "in summary": pct(x.in_summary for x in o),
        "visible": pct(x.visible for x in o),
        "search@5": pct(top(x.search_rank, 5) for x in o),
        "search@10": pct(top(x.search_rank, 10) for x in o),
        "prompt or search": pct(x.in_prompt or top(x.search_rank, 10) for x in o),
        "BM25@10": pct(top(x.reference_rank, 10) for x in o),
    }


def run_figures(run: Run) -> dict[str, Any]:
    """One run's figures (shares in percent, counts per conversation, times in ms)."""
    searches = [s * 1e3 for s in run.search_seconds]
    return {
        **shares(run.outcomes),
        "questions": len(run.outcomes),
        "compactions": run.compactions,
        "compaction bound": run.bound,
        "prefix changes": run.prefix_changes,
        "renders": run.renders,
        "summary tokens": statistics.mean(run.summary_tokens) if run.summary_tokens else 0.0,
        "search ms": statistics.mean(searches) if searches else 0.0,
        "search p95 ms": p95(searches),
    }


def mean_over_seeds(figures: Sequence[dict[str, Any]]) -> dict[str, float]:
    keys = figures[0].keys()
    return {k: statistics.mean(float(f[k]) for f in figures) for k in keys}


def spread(figures: Sequence[dict[str, Any]], key: str) -> str:
    """Lowest and highest seed of ``key``, for the reader to judge the mean."""
    values = [float(f[key]) for f in figures]
    return f"{min(values):.1f}-{max(values):.1f}"


def table(rows: list[tuple[str, str, int, list[dict[str, Any]]]]) -> str:
    """One markdown table: a row per (shape, policy, budget), means over seeds."""
    head = [name for name, _ in COLUMNS]
    extra = [
        "compactions",
        "compaction bound",
        "prefix changes",
        "summary tokens",
        "search ms",
        "search p95 ms",
    ]
    out = [
        "| shape | policy | budget | seeds | questions | " + " | ".join(head + extra) + " |",
        "|---|---|---:|---:|---:|" + "---:|" * (len(head) + len(extra)),
    ]
    for shape, policy, budget, figures in rows:
        m = mean_over_seeds(figures)
        cells = [f"{m[k]:.1f}%" for k in head]
        cells += [f"{m['compactions']:.1f}", f"{m['compaction bound']:.1f}"]
        cells += [f"{m['prefix changes']:.1f}"]
        cells += [
            f"{m['summary tokens']:.0f}",
            f"{m['search ms']:.2f}",
            f"{m['search p95 ms']:.2f}",
        ]
        out.append(
            f"| {shape} | {policy} | {budget:,} | {len(figures)} | {m['questions']:.0f} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(out)


def legend() -> str:
    lines = [f"- **{name}**: {what}." for name, what in COLUMNS]
    lines += [
        "- **compactions**, **prefix changes**: per conversation; a prefix change is a render "
        "whose prompt differs from the previous one before that one's last cache checkpoint "
        "(a prompt-cache break).",
        "- **compaction bound**: the most compactions the session's new content allows, its "
        "tokens as the prompt counts them (each block with its framing and turn header, "
        "`Timeline.block_tokens`) over `(trigger_ratio - keep_ratio) x budget` (what one "
        "compaction frees); more compactions than this would be thrashing.",
        "- **summary tokens**: the summary's size when a question is asked (mean).",
        "- **search ms**, **search p95 ms**: one `store.search` with the question.",
    ]
    return "\n".join(lines)
