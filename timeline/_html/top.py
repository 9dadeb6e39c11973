"""The top of the HTML view: the toolbar (search, jumps) and the next prompt as a
``/context``-style picture: a bar by category drawn to the budget with the compaction
trigger, a strip of the prompt's blocks in order with the cache checkpoints, the figures
by category and by block type."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from timeline._html.breakdown import CATEGORIES, View, calibration_note, category_of, plural
from timeline._html.rows import Item

__all__ = ["next_prompt", "toolbar"]

_COLORS = {c.name: c.color for c in CATEGORIES}


def toolbar() -> str:
    """Search and jumps (the page's script makes them work; keys in the hint)."""
    return (
        '<nav class="tools" aria-label="search and jumps">'
        '<input type="search" id="q" placeholder="search blocks ( / )" '
        'aria-label="search the conversation" autocomplete="off">'
        '<button type="button" id="q-prev" aria-label="previous match">&#9650;</button>'
        '<button type="button" id="q-next" aria-label="next match">&#9660;</button>'
        '<span id="q-count" aria-live="polite"></span>'
        '<span class="sep"></span>'
        '<input type="text" id="turn" placeholder="turn, e.g. t12" size="9" '
        'aria-label="jump to turn" autocomplete="off">'
        '<button type="button" id="turn-prev">&#9664; turn</button>'
        '<button type="button" id="turn-next">turn &#9654;</button>'
        '<button type="button" id="cmp-prev">&#9664; compaction</button>'
        '<button type="button" id="cmp-next">compaction &#9654;</button>'
        "</nav>"
    )


def _headline(breakdown: dict[str, Any], view: View) -> str:
    tokens, budget, trigger = breakdown["tokens"], breakdown["budget"], breakdown["trigger"]
    if budget:
        used = f"{tokens:,} of {budget:,} tokens ({breakdown['used']:.1f}% of the budget)"
    else:
        used = f"{tokens:,} tokens; no budget: compaction off"
    bits = [used, plural(breakdown["blocks"], "block")]
    if view.tools:
        bits.append(plural(len(view.tools), "tool"))
    bits.append(plural(len(view.cache_points), "cache checkpoint"))
    if trigger:
        bits.append(f"compaction at {trigger:,} ({100 * trigger / budget:.0f}%)")
    return f'<p class="headline">{" · ".join(bits)}</p>'


def _bar(breakdown: dict[str, Any]) -> str:
    """Category slices sized to the budget (to the prompt without one), the free space,
    and the trigger line."""
    tokens, budget, trigger = breakdown["tokens"], breakdown["budget"], breakdown["trigger"]
    scale = max(budget or 0, tokens, 1)
    cats = breakdown["categories"]
    segs = []
    for name, row in cats.items():
        if name == "free":
            continue
        width = 100 * row["tokens"] / scale
        segs.append(
            f'<span class="seg" style="width:{width:.3f}%;background:{_COLORS[name]}" '
            f'title="{escape(name)}: {row["tokens"]:,} tokens"></span>'
        )
    described = ", ".join(f"{k} {v['tokens']:,} tokens" for k, v in cats.items())
    marks = ""
    if trigger:
        marks = (
            f'<span class="trigger" style="left:{100 * trigger / scale:.3f}%">'
            f"<span>compaction at {trigger:,}</span></span>"
        )
    end = f'<span class="budget-end">budget {budget:,}</span>' if budget else ""
    return (
        f'<div class="ctx" role="img" aria-label="next prompt by category: {escape(described)}">'
        f"{''.join(segs)}{marks}</div>{end}"
    )


def _strip(view: View, prompt: Sequence[Item]) -> str:
    """The prompt's blocks in order (width by tokens) with the cache checkpoints."""
    scale = max(view.budget or 0, view.tokens, 1)
    parts = []
    if view.tools:  # first in the cached prefix
        names = ", ".join(t.name for t in view.tools)
        parts.append(
            f'<span class="seg" style="width:{100 * view.tools_tokens / scale:.3f}%;'
            f'background:{_COLORS["tools"]}" title="tool definitions ({escape(names)}): '
            f'{view.tools_tokens:,} tokens"></span>'
        )
    if view.system:
        width = 100 * (view.system_tokens + view.framing_tokens) / scale
        parts.append(
            f'<span class="seg" style="width:{width:.3f}%;background:{_COLORS["system"]}" '
            f'title="system prompt: {view.system_tokens:,} tokens, framing: '
            f'{view.framing_tokens:,}"></span>'
        )
    offset = view.system_tokens + view.framing_tokens + view.tools_tokens
    ticks = []
    for item in prompt:
        b = item.block
        width = 100 * item.tokens / scale
        color = _COLORS[category_of(b.type)]
        parts.append(
            f'<span class="seg" style="width:{width:.3f}%;background:{color}" '
            f'title="{escape(b.path)}: {item.tokens:,} tokens"></span>'
        )
        offset += item.tokens
        if "checkpoint" in item.marks:
            ticks.append(
                f'<span class="ckpt" style="left:{100 * offset / scale:.3f}%" '
                f'title="cache checkpoint after {escape(b.path)}"></span>'
            )
    budget = ""
    if view.budget:
        budget = f'<span class="budget-line" style="left:{100 * view.budget / scale:.3f}%"></span>'
    return (
        '<div class="strip" role="img" aria-label="the prompt\'s blocks in order, '
        f'{plural(len(view.cache_points), "cache checkpoint")} (dashed)">'
        f"{''.join(parts)}{''.join(ticks)}{budget}</div>"
    )


def _tables(breakdown: dict[str, Any]) -> str:
    scale_name = "of the budget" if breakdown["budget"] else "of the prompt"
    rows = "".join(
        f'<tr><th scope="row"><i class="sw" style="background:{_COLORS[name]}"></i>'
        f"{escape(name)}</th><td>{row['tokens']:,}</td><td>{row['share']:.1f}%</td></tr>"
        for name, row in breakdown["categories"].items()
    )
    types = "".join(
        f'<tr><th scope="row"><i class="sw" style="background:{_COLORS[category_of(name)]}">'
        f"</i>{escape(name)}</th><td>{row['blocks']:,}</td><td>{row['tokens']:,}</td>"
        f"<td>{row['share']:.1f}%</td></tr>"
        for name, row in breakdown["types"].items()
    )
    note = calibration_note(breakdown)
    note_html = f'<p class="sub calibration">{escape(note)}</p>' if note else ""
    return (
        '<div class="tables"><table class="legend"><caption>by category</caption>'
        f'<tr><th scope="col">category</th><th scope="col">tokens</th>'
        f'<th scope="col">{scale_name}</th></tr>{rows}</table>{note_html}'
        '<details class="types"><summary>by block type</summary><table>'
        '<tr><th scope="col">type</th><th scope="col">blocks</th><th scope="col">tokens</th>'
        f'<th scope="col">share</th></tr>{types}</table></details></div>'
    )


def next_prompt(breakdown: dict[str, Any], view: View, prompt: Sequence[Item]) -> str:
    """The section the page opens on: what the model sees next."""
    return (
        '<section id="next" aria-labelledby="next-h"><h2 id="next-h">What the model sees '
        f"next</h2>{_headline(breakdown, view)}{_bar(breakdown)}{_strip(view, prompt)}"
        f"{_tables(breakdown)}</section>"
    )
