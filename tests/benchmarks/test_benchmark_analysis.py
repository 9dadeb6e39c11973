"""The benchmark analysis quotes only figures of the same run (a template filled by
``benchmarks.__main__._figures``)."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from benchmarks import tiers
from benchmarks.__main__ import _figures, _tier_figures

ANALYSIS = Path(__file__).parent.parent.parent / "benchmarks" / "ANALYSIS.md"


def fake_run() -> dict[str, Any]:
    def row(name: str, median: float, work: float | None) -> dict[str, Any]:
        return {"name": name, "median": median, "p95": 2 * median, "tokenizer_work": work}

    ours = row("block-timeline", 1.0, 1.046) | {"payload_over": 0, "payload_max": 31_000}
    return {
        "compare": [
            ours,
            row("block-timeline (tiktoken counter)", 2.0, 1.046),
            row("LangChain SummarizationMiddleware (memoized counter)", 4.0, 1.0),
            row("LangChain SummarizationMiddleware (plain counter)", 5.0, 70.0),
            row("LangChain trim_messages (plain counter)", 9.0, 1_800.0),
        ],
        "growth": [
            {"name": "block-timeline", "ratio": 1.01},
            {"name": "LangChain trim_messages (plain counter)", "ratio": 5.0},
        ],
        "memory": {"evict": {150: 2**20, 600: 1.5 * 2**20}},
    }


def fake_tiers() -> dict[str, Any]:
    def row(name: str, cost: float, visible: float, cached: float = 0.0) -> dict[str, Any]:
        return {
            "name": name,
            "total_cost_per_request": cost,
            "user_visible": visible,
            "summary_cached": cached,
        }

    return {
        "rows": [
            row(tiers.SUMMARIZE_ONLY, 4_000.0, 8.0),
            row(tiers.TIERED, 3_000.0, 20.0),
            row(tiers.OFFLOAD, 2_500.0, 24.0),
            row("ours, tiered + CacheWarmSummarizer", 3_100.0, 18.0, 0.9),
            row(tiers.PEER, 5_000.0, 8.0),
            row(tiers.STACKED, 4_500.0, 8.0),
        ]
    }


def fake_prepared() -> dict[str, Any]:
    def row(p95: float, prepared: int, calls: int) -> dict[str, Any]:
        return {"p95": p95, "prepared": prepared, "compactions": 38, "summaries": calls}

    return {"rows": [row(2.01, 0, 39), row(0.031, 38, 40)]}


def test_analysis_is_filled_from_the_run() -> None:
    """Every placeholder of ANALYSIS.md has a figure, and the text quotes the run's."""
    template = ANALYSIS.read_text()
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    goals = ["| render p95 | 0.25x | met |", "| payload | 0 over | missed |"]
    figures = {**_figures(fake_run(), goals), **_tier_figures(fake_tiers(), fake_prepared())}
    assert fields == set(figures)
    text = template.format_map(figures)
    assert "1 of 2 goals are met in this run" in text
    assert "our p95 0.25x" in text and "0 of our requests over budget" in text
    assert "within 1.50x (1.00 → 1.50 MiB) from 150 to 600 turns" in text
    assert "costs 0.60x of SummarizationMiddleware's input" in text
    assert "keeps 2.50x as many of the user's own" in text and "90% served" in text
    flat = " ".join(text.split())
    assert "brings the cost to 0.50x of SummarizationMiddleware's (0.83x of the tiered" in flat
    assert "2.01 s at the p95" in flat and "31 ms at the p95, 38 of 38" in flat
    assert "for 40 summarizer calls (39 without)" in flat
