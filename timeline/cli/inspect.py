"""A ``/context``-style report: what the next prompt spends its budget on.

:func:`context_usage` is plain data (the documented ``timeline inspect --json`` shape);
:func:`usage_report` prints it: a bar by category (system, summary, user, assistant, tool
calls, tool results, thinking, free) drawn to the budget with the compaction trigger
marked, then the rows by block type (the figures of :mod:`timeline.render.usage`, the
calibration from the provider's last usage report said in words). The colours are the
HTML page's (:data:`~timeline.render.usage.CATEGORIES`).
"""

from __future__ import annotations

import warnings
from typing import Any

import msgspec

from timeline.cli.output import printable
from timeline.cli.words import compaction_status, plural
from timeline.compaction.policy import NoBudgetWarning
from timeline.core.timeline import Timeline
from timeline.model.tools import ToolSpec
from timeline.render.usage import (
    CATEGORIES,
    SYSTEM_ROW,
    calibration_note,
    category_of,
    view_usage,
)

__all__ = ["BAR", "cache_lines", "context_usage", "usage_report"]

BAR = 50
"""Cells of the category bar (the whole budget, or the prompt without one)."""
TYPE_BAR = 30
_ANSI = {c.name: c.ansi for c in CATEGORIES}
_TRIGGER_MARK = "┃"


def context_usage(
    tl: Timeline, system: str = "", tools: tuple[ToolSpec, ...] = ()
) -> dict[str, Any]:
    """The ``inspect --json`` document: conversation, version and :func:`view_usage`,
    plus the provider's last usage report (``usage_report``, or None)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)  # the report says it
        usage = view_usage(tl.render(system, tools=tools))
    state = tl.snapshot().state
    report = state.usage
    return {
        "conversation": tl.conversation_id,
        "version": tl.version,
        "compaction": compaction_status(tl.policy),
        **usage,
        "usage_report": None
        if report is None
        else {
            "prompt_tokens": report.prompt_tokens,
            "cache_read_tokens": report.cache_read_tokens,
            "cache_write_tokens": report.cache_write_tokens,
        },
        "cache_breaks": [msgspec.to_builtins(b) for b in state.cache_breaks],
    }


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color and text else text


def _cells(values: list[int], scale: int, width: int) -> list[int]:
    """Whole cells per value, adding up to round(width * sum / scale) (largest remainder),
    so small slices round fairly and the bar's length is right."""
    exact = [width * v / scale for v in values]
    cells = [int(x) for x in exact]
    want = min(width, round(sum(exact)))
    order = sorted(range(len(values)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in order[: max(0, want - sum(cells))]:
        cells[i] += 1
    return cells


def _category_bar(usage: dict[str, Any], color: bool) -> list[str]:
    """The bar (one cell = 1/BAR of the budget) and a line per category."""
    cats = {k: v for k, v in usage["categories"].items() if k != "free"}
    budget, trigger = usage["budget"], usage["trigger"]
    scale = max(budget or 0, usage["tokens"], 1)
    cells = _cells([v["tokens"] for v in cats.values()], scale, BAR)
    drawn = [(name, "█") for name, n in zip(cats, cells, strict=True) for _ in range(n)]
    drawn += [("free", "░")] * (BAR - len(drawn))
    if trigger:
        at = min(BAR - 1, int(BAR * trigger / scale))
        drawn[at] = ("trigger", _TRIGGER_MARK)
    bar = "".join(_paint(ch, "1;31" if n == "trigger" else _ANSI[n], color) for n, ch in drawn)
    note = f" {_TRIGGER_MARK} compaction at {trigger:,}" if trigger else ""
    lines = [f"  {bar}{note}"]
    width = max(len(k) for k in usage["categories"])
    for name, row in usage["categories"].items():
        swatch = _paint("■" if name != "free" else "□", _ANSI[name], color)
        lines.append(f"  {swatch} {name:<{width}} {row['tokens']:>9,} tok  {row['share']:5.1f}%")
    return lines


def cache_lines(usage: dict[str, Any], shown: int = 5) -> list[str]:
    """The provider's cache figures of the last request and the latest cache breaks,
    with their likely cause (nothing when ``record_usage`` never had cache figures)."""
    report = usage.get("usage_report") or {}
    read = report.get("cache_read_tokens")
    lines: list[str] = []
    if read is not None:
        written = report.get("cache_write_tokens")
        wrote = "" if written is None else f", wrote {written:,}"
        lines.append(
            f"prompt cache, last request: read {read:,}{wrote} of "
            f"{report['prompt_tokens']:,} prompt tokens"
        )
    breaks = usage.get("cache_breaks") or []
    if breaks:
        lines.append(f"cache breaks: {len(breaks):,} (the latest {min(shown, len(breaks))}):")
    for b in breaks[-shown:]:
        lines.append(
            f"  {b['ts']} {b['cause']}: read {b['read_tokens']:,} of {b['expected_tokens']:,} "
            f"cached tokens; {printable(b['detail'])}"
        )
    return lines


def usage_report(usage: dict[str, Any], *, color: bool = False) -> str:
    """The text form of :func:`context_usage` (ANSI colours only when ``color``); names
    from the conversation are escaped (:func:`~timeline.cli.output.printable`)."""
    tokens, budget = usage["tokens"], usage["budget"]
    lines = [f"conversation {printable(repr(usage['conversation']))} (version {usage['version']})"]
    if budget:
        used = f"{tokens:,} of {budget:,} tokens ({usage['used']:.1f}% of the budget)"
    else:
        used = plural(tokens, "token")
    tools = f", {plural(len(usage['tools']), 'tool')}" if usage["tools"] else ""
    lines.append(f"next prompt: {used}, {plural(usage['blocks'], 'block')}{tools}")
    lines.append(usage["compaction"])
    lines += _category_bar(usage, color)
    if usage["tools"]:
        lines.append(f"tools: {printable(', '.join(usage['tools']))}")
    types: dict[str, dict[str, Any]] = usage["types"]
    names = {k: printable(k) for k in types}
    width = max([len(k) for k in names.values()] + [10])
    scale = max(budget or 0, tokens, 1)
    lines.append("by block type:")
    for name, row in types.items():
        filled = max(0, round(TYPE_BAR * row["tokens"] / scale))
        bar = _paint("█" * filled, _ANSI[category_of(name)], color) + "░" * (TYPE_BAR - filled)
        count = plural(row["blocks"], "block") if row["blocks"] else ""
        lines.append(
            f"  {names[name]:<{width}} {count:>12} {row['tokens']:>9,} tok  {bar} "
            f"{row['share']:5.1f}%"
        )
    note = calibration_note(usage)
    if note:
        lines.append(f"  ({note})")
    lines += cache_lines(usage)
    where = [printable(", ".join(usage["cache_checkpoints"]))] if usage["cache_checkpoints"] else []
    if SYSTEM_ROW in types:
        where.insert(0, "system")
    if usage["tools"]:
        where.insert(0, "tools")
    lines.append(f"cache checkpoints: {' + '.join(where) or 'none'}")
    for s in usage["summaries"]:
        lines.append(
            f"summary {printable(s['path'])}: covers {plural(s['covered_turns'], 'turn')}, "
            f"{plural(s['chars'], 'char')}"
        )
    if usage["truncated"]:
        lines.append(f"truncated for this render: {printable(', '.join(usage['truncated']))}")
    return "\n".join(lines)
