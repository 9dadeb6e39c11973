"""A ``/context``-style report: what the next prompt spends its budget on.

:func:`context_usage` is plain data (the documented ``timeline inspect --json`` shape);
:func:`context_report` prints it. Per-type tokens add up to the prompt's tokens and the
shares to 100%: truncated blocks count at their truncated size, and the calibration from
the provider's last usage report gets a row of its own.
"""

from __future__ import annotations

import warnings
from typing import Any

from timeline.compaction.policy import NoBudgetWarning, compaction_status
from timeline.core.timeline import Timeline
from timeline.render.usage import SYSTEM_ROW, plural, view_usage

__all__ = ["context_report", "context_usage", "usage_report"]

BAR = 30
_PALETTE = (32, 36, 33, 35, 34, 31, 92, 96, 93, 95, 94, 91)


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
