"""A ``/context``-style report: what the next prompt spends its budget on.

:func:`context_usage` is plain data (the documented ``timeline inspect --json`` shape);
:func:`context_report` prints it. Per-type tokens add up to the prompt's tokens and the
shares to 100%: truncated blocks count at their truncated size, and the calibration from
the provider's last usage report gets a row of its own.
"""

from __future__ import annotations

import warnings
from typing import Any

from timeline.block import CONV_RANGE_SUMMARY
from timeline.policy import NoBudgetWarning, compaction_status
from timeline.timeline import Timeline
from timeline.view import RenderedContext

__all__ = [
    "CALIBRATION_ROW",
    "SYSTEM_ROW",
    "context_report",
    "context_usage",
    "percent_shares",
    "plural",
    "usage_report",
    "view_usage",
]

BAR = 30
SYSTEM_ROW = "system prompt"
CALIBRATION_ROW = "provider overhead"
"""Tokens the provider reported beyond our count of the same prompt (last usage report)."""

_PALETTE = (32, 36, 33, 35, 34, 31, 92, 96, 93, 95, 94, 91)


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


def view_usage(view: RenderedContext) -> dict[str, Any]:
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


def context_usage(tl: Timeline, system: str = "") -> dict[str, Any]:
    """The ``inspect --json`` document: conversation, version and :func:`view_usage`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)  # the report says it
        usage = view_usage(tl.render(system))
    return {
        "conversation": tl.conversation_id,
        "version": tl.version,
        "compaction": compaction_status(tl.policy),
        **usage,
    }


def _paint(text: str, code: int, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def context_report(tl: Timeline, system: str = "", *, color: bool = False) -> str:
    """Context usage by block type with a bar each, checkpoints and summaries."""
    usage = context_usage(tl, system)
    return usage_report(usage, color=color)


def usage_report(usage: dict[str, Any], *, color: bool = False) -> str:
    """The text form of :func:`context_usage` (ANSI colours only when ``color``)."""
    tokens, budget = usage["tokens"], usage["budget"]
    lines = [f"conversation {usage['conversation']!r} (version {usage['version']})"]
    if budget:
        used = f"{tokens:,} of {budget:,} tokens ({usage['used']:.1f}% of the budget)"
    else:
        used = plural(tokens, "token")
    lines.append(f"next prompt: {used}, {plural(usage['blocks'], 'block')}")
    lines.append(usage["compaction"])
    types: dict[str, dict[str, Any]] = usage["types"]
    width = max([len(k) for k in types] + [10])
    scale = max(budget or 0, tokens, 1)
    for n, (name, row) in enumerate(types.items()):
        filled = max(0, round(BAR * row["tokens"] / scale))
        bar = _paint("█" * filled, _PALETTE[n % len(_PALETTE)], color) + "░" * (BAR - filled)
        count = plural(row["blocks"], "block") if row["blocks"] else ""
        lines.append(
            f"  {name:<{width}} {count:>12} {row['tokens']:>9,} tok  {bar} {row['share']:5.1f}%"
        )
    if budget:
        lines.append(f"  {'free':<{width}} {'':>12} {usage['free']:>9,} tok")
    where = [", ".join(usage["cache_checkpoints"])] if usage["cache_checkpoints"] else []
    if SYSTEM_ROW in types:
        where.insert(0, "system")
    lines.append(f"cache checkpoints: {' + '.join(where) or 'none'}")
    for s in usage["summaries"]:
        lines.append(
            f"summary {s['path']}: covers {plural(s['covered_turns'], 'turn')}, "
            f"{plural(s['chars'], 'char')}"
        )
    if usage["truncated"]:
        lines.append(f"truncated for this render: {', '.join(usage['truncated'])}")
    return "\n".join(lines)
