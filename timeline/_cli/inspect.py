"""A ``/context``-style report: what the next prompt spends its budget on.

:func:`context_breakdown` is plain data (the documented ``timeline inspect --json`` shape);
:func:`breakdown_report` prints it: a bar by category (system, summary, user, assistant, tool
calls, tool results, thinking, free) drawn to the budget with the compaction trigger
marked, then the rows by block type (the figures of :mod:`timeline._html.breakdown`, the
calibration from the provider's last usage report said in words). The colours are the
HTML page's (:data:`~timeline._html.breakdown.CATEGORIES`).
"""

from __future__ import annotations

import warnings
from typing import Any

import msgspec

from timeline._cli.output import printable
from timeline._cli.words import compaction_status, plural
from timeline._compaction import NoBudgetWarning
from timeline._core import Timeline
from timeline._html import (
    CATEGORIES,
    SYSTEM_ROW,
    calibration_note,
    category_of,
    token_breakdown,
)
from timeline._model import ToolSpec

__all__ = ["BAR", "breakdown_report", "cache_lines", "context_breakdown"]

BAR = 50
"""Cells of the category bar (the whole budget, or the prompt without one)."""
TYPE_BAR = 30
_ANSI = {c.name: c.ansi for c in CATEGORIES}
_TRIGGER_MARK = "┃"


def context_breakdown(
    tl: Timeline, system: str = "", tools: tuple[ToolSpec, ...] = ()
) -> dict[str, Any]:
    """The ``inspect --json`` document: conversation, version and :func:`token_breakdown`,
    plus the provider's last usage report (``breakdown_report``, or None)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)  # the report says it
        breakdown = token_breakdown(tl.render(system, tools=tools))
    state = tl.snapshot().state
    report = state.usage
    return {
        "conversation": tl.conversation_id,
        "version": tl.version,
        "compaction": compaction_status(tl.policy),
        **breakdown,
        "breakdown_report": None
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


def _category_bar(breakdown: dict[str, Any], color: bool) -> list[str]:
    """The bar (one cell = 1/BAR of the budget) and a line per category."""
    cats = {k: v for k, v in breakdown["categories"].items() if k != "free"}
    budget, trigger = breakdown["budget"], breakdown["trigger"]
    scale = max(budget or 0, breakdown["tokens"], 1)
    cells = _cells([v["tokens"] for v in cats.values()], scale, BAR)
    drawn = [(name, "█") for name, n in zip(cats, cells, strict=True) for _ in range(n)]
    drawn += [("free", "░")] * (BAR - len(drawn))
    if trigger:
        at = min(BAR - 1, int(BAR * trigger / scale))
        drawn[at] = ("trigger", _TRIGGER_MARK)
    bar = "".join(_paint(ch, "1;31" if n == "trigger" else _ANSI[n], color) for n, ch in drawn)
    note = f" {_TRIGGER_MARK} compaction at {trigger:,}" if trigger else ""
    lines = [f"  {bar}{note}"]
    width = max(len(k) for k in breakdown["categories"])
    for name, row in breakdown["categories"].items():
        swatch = _paint("■" if name != "free" else "□", _ANSI[name], color)
        lines.append(f"  {swatch} {name:<{width}} {row['tokens']:>9,} tok  {row['share']:5.1f}%")
    return lines


def cache_lines(breakdown: dict[str, Any], shown: int = 5) -> list[str]:
    """The provider's cache figures of the last request and the latest cache breaks,
    with their likely cause (nothing when ``record_usage`` never had cache figures)."""
    report = breakdown.get("breakdown_report") or {}
    read = report.get("cache_read_tokens")
    lines: list[str] = []
    if read is not None:
        written = report.get("cache_write_tokens")
        wrote = "" if written is None else f", wrote {written:,}"
        lines.append(
            f"prompt cache, last request: read {read:,}{wrote} of "
            f"{report['prompt_tokens']:,} prompt tokens"
        )
    breaks = breakdown.get("cache_breaks") or []
    if breaks:
        lines.append(f"cache breaks: {len(breaks):,} (the latest {min(shown, len(breaks))}):")
    for b in breaks[-shown:]:
        lines.append(
            f"  {b['ts']} {b['cause']}: read {b['read_tokens']:,} of {b['expected_tokens']:,} "
            f"cached tokens; {printable(b['detail'])}"
        )
    return lines


def breakdown_report(breakdown: dict[str, Any], *, color: bool = False) -> str:
    """The text form of :func:`context_breakdown` (ANSI colours only when ``color``); names
    from the conversation are escaped (:func:`~timeline._cli.output.printable`)."""
    tokens, budget = breakdown["tokens"], breakdown["budget"]
    name = printable(repr(breakdown["conversation"]))
    lines = [f"conversation {name} (version {breakdown['version']})"]
    if budget:
        used = f"{tokens:,} of {budget:,} tokens ({breakdown['used']:.1f}% of the budget)"
    else:
        used = plural(tokens, "token")
    tools = f", {plural(len(breakdown['tools']), 'tool')}" if breakdown["tools"] else ""
    lines.append(f"next prompt: {used}, {plural(breakdown['blocks'], 'block')}{tools}")
    lines.append(breakdown["compaction"])
    lines += _category_bar(breakdown, color)
    if breakdown["tools"]:
        lines.append(f"tools: {printable(', '.join(breakdown['tools']))}")
    types: dict[str, dict[str, Any]] = breakdown["types"]
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
    note = calibration_note(breakdown)
    if note:
        lines.append(f"  ({note})")
    lines += cache_lines(breakdown)
    where = (
        [printable(", ".join(breakdown["cache_checkpoints"]))]
        if breakdown["cache_checkpoints"]
        else []
    )
    if SYSTEM_ROW in types:
        where.insert(0, "system")
    if breakdown["tools"]:
        where.insert(0, "tools")
    lines.append(f"cache checkpoints: {' + '.join(where) or 'none'}")
    for s in breakdown["summaries"]:
        lines.append(
            f"summary {printable(s['path'])}: covers {plural(s['covered_turns'], 'turn')}, "
            f"{plural(s['chars'], 'char')}"
        )
    if breakdown["truncated"]:
        lines.append(f"truncated for this render: {printable(', '.join(breakdown['truncated']))}")
    return "\n".join(lines)
