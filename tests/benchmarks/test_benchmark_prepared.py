"""The background-summary benchmark (benchmarks/prepared.py) on a short session with a
fast summarizer: each variant does what its row says."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks import prepared

pytestmark = pytest.mark.slow  # benchmark runs


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return prepared.run(turns=40, budget=16_000, seconds=(0.02, 0.05))


def test_both_variants_compact_the_same_session(result: dict[str, Any]) -> None:
    """The same session compacts in both variants, about as often."""
    at_trigger, background = result["rows"]
    assert at_trigger["compactions"] >= 3
    assert abs(at_trigger["compactions"] - background["compactions"]) <= 2


def test_only_the_background_variant_prepares(result: dict[str, Any]) -> None:
    """Summaries made at the trigger are never prepared; with prepare_at most are."""
    at_trigger, background = result["rows"]
    assert at_trigger["prepared"] == 0
    assert background["prepared"] >= background["compactions"] // 2


def test_the_report_has_a_row_per_variant(result: dict[str, Any]) -> None:
    """The table has a header, a rule and one row per variant."""
    lines = prepared.report(result)
    assert len(lines) == 4
    assert "prepare_at=0.8" in lines[3]
