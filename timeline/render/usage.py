"""What one rendered prompt spends its budget on, by block type (plain data).

Per-type tokens add up to the prompt's tokens and the shares to 100%: truncated blocks
count at their truncated size, and the calibration from the provider's last usage report
gets a row of its own.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

import attrs

from timeline.model.block import (
    CONV_RANGE_SUMMARY,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)
from timeline.model.block_types import block_type

__all__ = [
    "CALIBRATION_ROW",
    "CATEGORIES",
    "Category",
    "SYSTEM_ROW",
    "UNDER_ROW",
    "View",
    "category_of",
    "percent_shares",
    "plural",
    "view_usage",
]


class View(Protocol):
    """What the usage figures and the HTML page read of a rendered prompt
    (:class:`~timeline.render.context.RenderedContext` has all of it)."""

    @property
    def system(self) -> str: ...
    @property
    def system_tokens(self) -> int: ...
    @property
    def blocks(self) -> tuple[Block, ...]: ...
    @property
    def block_tokens(self) -> tuple[int, ...]: ...
    @property
    def tokens(self) -> int: ...
    @property
    def budget(self) -> int | None: ...
    @property
    def cache_points(self) -> tuple[int, ...]: ...
    @property
    def truncated_paths(self) -> tuple[str, ...]: ...
    @property
    def compaction_trigger(self) -> int | None: ...


SYSTEM_ROW = "system prompt"
CALIBRATION_ROW = "provider overhead"
"""Tokens the provider reported beyond our count of the same prompt (last usage report)."""
UNDER_ROW = "provider count below estimate"
"""The same calibration when the provider counted fewer tokens than our estimate (a
negative figure: our per-block counts are upper bounds)."""


@attrs.frozen
class Category:
    """One slice of the ``/context``-style bar: its name, the ANSI colour ``inspect``
    draws it in on a terminal and the same colour for the HTML page (the VS Code terminal
    palette), so the two views match."""

    name: str
    ansi: str
    color: str


CATEGORIES: Final = (
    Category("system", "90", "#8c8c8c"),
    Category("summary", "33", "#e5e510"),
    Category("user", "34", "#2472c8"),
    Category("assistant", "32", "#0dbc79"),
    Category("tool calls", "36", "#11a8cd"),
    Category("tool results", "35", "#bc3fbc"),
    Category("thinking", "91", "#f14c4c"),
    Category("other", "37", "#e5e5e5"),
    Category("free", "2", "#3c3c3c"),
)
"""The categories of the next prompt, in the order the bar draws them (``free`` last)."""

_USER_TYPES: Final = frozenset({TURN_HEADER, USER_PROMPT, USER_ATTACHMENT})


def category_of(block_type_name: str) -> str:
    """The bar category of a block type (by how it renders; ``other`` for custom
    user-side types and notes). ``system prompt`` and ``provider overhead`` rows are
    ``system`` and ``other``."""
    if block_type_name == SYSTEM_ROW:
        return "system"
    if block_type_name in (CALIBRATION_ROW, UNDER_ROW):
        return "other"
    spec = block_type(block_type_name)
    by_render = {
        "summary": "summary",
        "tool_call": "tool calls",
        "tool_result": "tool results",
        "reasoning": "thinking",
    }
    if spec.render in by_render:
        return by_render[spec.render]
    if block_type_name in _USER_TYPES:
        return "user"
    return "assistant" if spec.role == "assistant" else "other"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns``, ``1,024 blocks`` (``many`` for irregular plurals)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def percent_shares(values: list[int], total: int) -> list[float]:
    """Each value's share of ``total`` in percent, one decimal, adding up to exactly 100
    (largest remainder) whenever the values add up to ``total``."""
    if total <= 0:
        return [0.0] * len(values)
    exact = [v * 1000 / total for v in values]
    tenths = [int(x // 1) for x in exact]
    missing = round(sum(exact)) - sum(tenths)
    order = sorted(range(len(values)), key=lambda i: exact[i] - tenths[i], reverse=True)
    for i in order[: max(0, missing)]:
        tenths[i] += 1
    return [t / 10 for t in tenths]


def _categories(
    types: dict[str, dict[str, Any]], tokens: int, budget: int | None
) -> dict[str, dict[str, Any]]:
    """Tokens per bar category, each with its share of the budget (of the prompt without
    one), and ``free``: the rest of the budget, so the slices add up to it. A negative
    calibration (the provider counted fewer tokens than our per-block upper bounds) has
    no slice: the slices are then our own counts, and ``free`` what they leave."""
    sums = {c.name: 0 for c in CATEGORIES if c.name != "free"}
    for name, row in types.items():
        if row["tokens"] > 0:
            sums[category_of(name)] += row["tokens"]
    scale = budget or sum(sums.values())
    out = {
        name: {"tokens": value, "share": round(100 * value / scale, 1) if scale else 0.0}
        for name, value in sums.items()
        if value
    }
    if budget:
        free = max(0, budget - sum(sums.values()))
        out["free"] = {"tokens": free, "share": round(100 * free / budget, 1)}
    return out


def view_usage(view: View) -> dict[str, Any]:
    """Usage of one rendered prompt by block type (``types`` ordered by tokens) and by
    bar category (``categories``, in bar order; shares of the budget), with the
    compaction ``trigger`` in tokens when the policy has one."""
    trigger = view.compaction_trigger
    rows: dict[str, list[int]] = {}
    if view.system:
        rows[SYSTEM_ROW] = [0, view.system_tokens]
    for block, cost in zip(view.blocks, view.block_tokens, strict=True):
        row = rows.setdefault(block.type, [0, 0])
        row[0] += 1
        row[1] += cost
    calibration = view.tokens - sum(tokens for _, tokens in rows.values())
    if calibration:
        rows[CALIBRATION_ROW if calibration > 0 else UNDER_ROW] = [0, calibration]
    ordered = sorted(rows.items(), key=lambda kv: -kv[1][1])
    shares = percent_shares([tokens for _, (_, tokens) in ordered], view.tokens)
    budget = view.budget
    types = {
        name: {"blocks": count, "tokens": tokens, "share": share}
        for (name, (count, tokens)), share in zip(ordered, shares, strict=True)
    }
    return {
        "tokens": view.tokens,
        "budget": budget,
        "trigger": trigger if budget else None,
        "free": max(0, budget - view.tokens) if budget else None,
        "used": round(100 * view.tokens / budget, 1) if budget else None,
        "blocks": len(view.blocks),
        "types": types,
        "categories": _categories(types, view.tokens, budget),
        "cache_checkpoints": [view.blocks[i].path for i in view.cache_points],
        "summaries": [
            {
                "path": b.path,
                "covered_turns": len(b.meta.get("covered_turn_ids", ())),
                "chars": len(b.text),
            }
            for b in view.blocks
            if b.type == CONV_RANGE_SUMMARY
        ],
        "truncated": list(view.truncated_paths),
    }
