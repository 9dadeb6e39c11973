"""The HTML page's usage figures: the categories, shares and what is free of the budget."""

from __future__ import annotations

import attrs

from tests.helpers.html_page import listing_page
from timeline._html.breakdown import (
    CALIBRATION_ROW,
    category_of,
    percent_shares,
    token_breakdown,
)


def test_usage_categories_hold_only_the_categories_shown() -> None:
    """A category no block falls in has no slice, and the slices plus ``free`` add up
    to the budget."""
    tl, _ = listing_page()
    usage = token_breakdown(tl.render("sys"))
    shown = {category_of(name) for name in usage["types"]}
    assert set(usage["categories"]) == shown | {"free"}
    assert sum(c["tokens"] for c in usage["categories"].values()) == usage["budget"]


def test_usage_free_is_what_the_prompt_leaves_of_the_budget() -> None:
    tl, _ = listing_page()
    view = tl.render("sys")
    usage = token_breakdown(view)
    assert usage["budget"] == 50_000
    assert usage["free"] == 50_000 - view.tokens


def test_one_token_the_rows_do_not_explain_is_provider_overhead() -> None:
    """A prompt one token over the rows' sum shows a "provider overhead" row (an excess
    of any size, however small), and no row is negative."""
    tl, _ = listing_page()
    view = tl.render("sys")
    rows = sum(row["tokens"] for row in token_breakdown(view)["types"].values())
    over = attrs.evolve(view, count_tokens=lambda: rows + 1)
    types = token_breakdown(over)["types"]
    assert types[CALIBRATION_ROW]["tokens"] == 1
    assert all(row["tokens"] >= 0 for row in types.values())


def test_shares_of_a_one_token_total() -> None:
    assert percent_shares([1], 1) == [100.0]
    assert percent_shares([0, 0], 0) == [0.0, 0.0]
    assert percent_shares([1, 2, 1], 4) == [25.0, 50.0, 25.0]


def test_usage_category_shares_are_of_the_budget() -> None:
    tl, _ = listing_page()
    usage = token_breakdown(tl.render("sys"))
    for row in usage["categories"].values():
        assert row["share"] == round(100 * row["tokens"] / 50_000, 1)
