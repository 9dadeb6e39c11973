"""What one rendered prompt spends its budget on, by block type (plain data).

Per-type tokens add up to the prompt's tokens and the shares to 100%: truncated blocks
count at their truncated size, and the calibration from the provider's last usage report
gets a row of its own.
"""

from __future__ import annotations

from typing import Any, Protocol

from timeline.model.block import CONV_RANGE_SUMMARY, Block

__all__ = ["CALIBRATION_ROW", "SYSTEM_ROW", "View", "percent_shares", "plural", "view_usage"]


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


SYSTEM_ROW = "system prompt"
CALIBRATION_ROW = "provider overhead"
"""Tokens the provider reported beyond our count of the same prompt (last usage report)."""


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


def view_usage(view: View) -> dict[str, Any]:
    """Usage of one rendered prompt by block type (``types`` ordered by tokens)."""
    rows: dict[str, list[int]] = {}
    if view.system:
        rows[SYSTEM_ROW] = [0, view.system_tokens]
    for block, cost in zip(view.blocks, view.block_tokens, strict=True):
        row = rows.setdefault(block.type, [0, 0])
        row[0] += 1
        row[1] += cost
    calibration = view.tokens - sum(tokens for _, tokens in rows.values())
    if calibration:
        rows[CALIBRATION_ROW] = [0, calibration]
    ordered = sorted(rows.items(), key=lambda kv: -kv[1][1])
    shares = percent_shares([tokens for _, (_, tokens) in ordered], view.tokens)
    budget = view.budget
    return {
        "tokens": view.tokens,
        "budget": budget,
        "free": max(0, budget - view.tokens) if budget else None,
        "used": round(100 * view.tokens / budget, 1) if budget else None,
        "blocks": len(view.blocks),
        "types": {
            name: {"blocks": count, "tokens": tokens, "share": share}
            for (name, (count, tokens)), share in zip(ordered, shares, strict=True)
        },
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
