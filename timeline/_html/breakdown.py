"""What one rendered prompt spends its budget on, by block type (plain data).

Per-type tokens are the timeline's own counts (truncated blocks at their truncated size)
and their shares add up to 100%. The prompt's ``tokens`` are calibrated by the provider's
last usage report: the difference from the rows is ``calibration``. The provider counting
more than the rows (its framing, tool schemas) is a row of its own, ``provider overhead``;
counting fewer (the per-block counts are upper bounds) is no row and no share, only the
figure. ``free`` is what ``tokens`` leave of the budget, the same figure in the bar.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

import attrs

from timeline._cache import SentRequest
from timeline._model import (
    CONV_RANGE_SUMMARY,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
    block_type,
)

__all__ = [
    "CALIBRATION_ROW",
    "CATEGORIES",
    "Category",
    "SYSTEM_ROW",
    "TOOLS_ROW",
    "View",
    "calibration_note",
    "category_of",
    "percent_shares",
    "plural",
    "token_breakdown",
]


class View(SentRequest, Protocol):
    """What the token breakdown and the HTML page read of a rendered prompt: what a request
    showed, with its totals (:class:`~timeline._render.context.RenderedContext` has all
    of it)."""

    @property
    def tokens(self) -> int: ...
    @property
    def budget(self) -> int | None: ...
    @property
    def truncated_paths(self) -> tuple[str, ...]: ...
    @property
    def compaction_trigger(self) -> int | None: ...


SYSTEM_ROW = "system prompt"
"""The system prompt with the prompt's framing (``system_tokens + framing_tokens``)."""
TOOLS_ROW = "tool definitions"
"""The request's tool definitions, with the provider's tool-use instructions."""
CALIBRATION_ROW = "provider overhead"
"""Tokens the provider reported beyond our count of the same prompt (last usage report)."""


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
    Category("tools", "94", "#3b8eea"),
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
    user-side types and notes). The ``system prompt``, ``tool definitions`` and
    ``provider overhead`` rows are ``system``, ``tools`` and ``other``."""
    if block_type_name == SYSTEM_ROW:
        return "system"
    if block_type_name == TOOLS_ROW:
        return "tools"
    if block_type_name == CALIBRATION_ROW:
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
    types: dict[str, dict[str, Any]], budget: int | None, free: int | None
) -> dict[str, dict[str, Any]]:
    """Tokens per bar category, each with its share of the budget (of the rows without
    one), and ``free`` (what the prompt leaves of the budget) last."""
    sums = {c.name: 0 for c in CATEGORIES if c.name != "free"}
    for name, row in types.items():
        sums[category_of(name)] += row["tokens"]
    scale = budget or sum(sums.values())
    out = {
        name: {"tokens": value, "share": round(100 * value / scale, 1) if scale else 0.0}
        for name, value in sums.items()
        if value
    }
    if budget and free is not None:
        out["free"] = {"tokens": free, "share": round(100 * free / budget, 1)}
    return out


def token_breakdown(view: View) -> dict[str, Any]:
    """Usage of one rendered prompt by block type (``types`` ordered by tokens) and by
    bar category (``categories``, in bar order; shares of the budget), with the
    compaction ``trigger`` in tokens when the policy has one and the ``calibration`` of
    ``tokens`` against the rows (0 without a usage report)."""
    trigger = view.compaction_trigger
    rows: dict[str, list[int]] = {}
    if view.system:
        rows[SYSTEM_ROW] = [0, view.system_tokens + view.framing_tokens]
    if view.tools:
        rows[TOOLS_ROW] = [0, view.tools_tokens]
    for block, cost in zip(view.blocks, view.block_tokens, strict=True):
        row = rows.setdefault(block.type, [0, 0])
        row[0] += 1
        row[1] += cost
    calibration = view.tokens - sum(tokens for _, tokens in rows.values())
    if calibration > 0:
        rows[CALIBRATION_ROW] = [0, calibration]
    ordered = sorted(rows.items(), key=lambda kv: -kv[1][1])
    counted = [tokens for _, (_, tokens) in ordered]
    shares = percent_shares(counted, sum(counted))
    budget = view.budget
    free = max(0, budget - view.tokens) if budget else None
    types = {
        name: {"blocks": count, "tokens": tokens, "share": share}
        for (name, (count, tokens)), share in zip(ordered, shares, strict=True)
    }
    return {
        "tokens": view.tokens,
        "budget": budget,
        "trigger": trigger if budget else None,
        "free": free,
        "used": round(100 * view.tokens / budget, 1) if budget else None,
        "blocks": len(view.blocks),
        "tools": [t.name for t in view.tools],
        "calibration": calibration,
        "types": types,
        "categories": _categories(types, budget, free),
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


def calibration_note(breakdown: dict[str, Any]) -> str:
    """The calibration from the provider's last usage report, in words ("" without one):
    what it is, never a share of the prompt."""
    calibration = breakdown["calibration"]
    report = breakdown.get("breakdown_report")
    said = f" at {report['prompt_tokens']:,} tokens" if report else ""
    if calibration > 0:
        return (
            f"calibrated: the provider counted the last prompt{said}, {calibration:,} more "
            "than its blocks: the provider overhead row"
        )
    if calibration < 0:
        return (
            f"calibrated: the provider counted the last prompt{said}, {-calibration:,} fewer "
            "than these rows (upper bounds); the total is calibrated to its count"
        )
    return ""
