"""A picture of the timeline: one self-contained static HTML page (no server, no script,
no external asset).

Blocks are grouped by turn (``<section class="turn">``), each block is one
``<details class="block">`` coloured by type and with a bar sized by its tokens; opening it
shows the text. Summaries and their compaction digest open in place inside a
``<section class="compaction">`` that says where the compaction cut and what it kept.
Hidden, pinned, evicted and truncated blocks, cache checkpoints and the budget line are
marked. :meth:`RenderedContext.to_html` draws one prompt; :func:`timeline_html` (behind
``timeline inspect ID --html OUT``) draws a stored conversation, evicted blocks included.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

import attrs

from timeline.model.block import CONV_RANGE_SUMMARY, TURN_HEADER, Block
from timeline.render.usage import View, plural, view_usage

__all__ = ["Item", "context_html", "page", "type_color", "view_items"]

TEXT_LIMIT = 6_000
"""Characters of a block's text shown when it is opened (the rest is elided)."""

_KNOWN_COLORS = {
    "turn.header": "#8c8c8c",
    "user.prompt": "#4e79a7",
    "user.attachment": "#76b7b2",
    "assistant.completion": "#59a14f",
    "assistant.thinking": "#a0cbe8",
    "react.tool.call": "#f28e2b",
    "react.tool.result": "#e15759",
    "react.note": "#b07aa1",
    "react.plan": "#9c755f",
    "react.plan.history": "#c9a98f",
    "conv.range.summary": "#edc948",
    "system prompt": "#555b6e",
    "provider overhead": "#bab0ac",
}
_PALETTE = ("#ff9da7", "#86bcb6", "#d37295", "#fabfd2", "#b6992d", "#499894", "#8cd17d")


def type_color(block_type: str) -> str:
    """The colour of a block type (fixed for the known types, stable for any other)."""
    known = _KNOWN_COLORS.get(block_type)
    if known is not None:
        return known
    return _PALETTE[zlib.crc32(block_type.encode()) % len(_PALETTE)]


@attrs.frozen
class Item:
    block: Block
    tokens: int
    marks: tuple[str, ...]
    """``prompt``, ``evicted``, ``hidden``, ``pinned``, ``truncated``, ``checkpoint``."""


_MARK_TEXT = {
    "evicted": "evicted",
    "superseded": "superseded",
    "hidden": "hidden",
    "pinned": "pinned",
    "truncated": "truncated",
    "checkpoint": "cache checkpoint",
}

_CSS = """
:root { color-scheme: light; --bg: #f7f7f4; --ink: #1f2328; --muted: #6a6f76; --line: #d9d9d2; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 20px; margin: 0 0 4px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.prompt { margin: 0 0 8px; }
.pbar { position: relative; display: flex; height: 28px; border: 1px solid var(--line);
  background: repeating-linear-gradient(45deg, #fff, #fff 6px, #f0f0ea 6px, #f0f0ea 12px);
  border-radius: 4px; overflow: visible; }
.seg { height: 100%; border-right: 1px solid rgba(255,255,255,.6); min-width: 1px; }
.ckpt { position: absolute; top: -6px; bottom: -6px; width: 0;
  border-left: 2px dashed #1f2328; }
.budget-line { position: absolute; top: -10px; bottom: -10px; width: 0;
  border-left: 3px solid #c0392b; }
.budget-line span { position: absolute; top: -18px; right: 5px; white-space: nowrap;
  color: #c0392b; font-size: 12px; font-weight: 600; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 14px 0 22px; font-size: 13px; }
.legend i { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.turn, .compaction { background: #fff; border: 1px solid var(--line); border-radius: 6px;
  margin: 0 0 10px; padding: 8px 12px; }
.turn > h2, .compaction > h2 { font-size: 13px; margin: 0 0 6px; color: var(--muted);
  font-weight: 600; }
.turn.out { background: #f3f3ef; }
.compaction { border: 2px solid #edc948; background: #fffbea; }
.compaction ul { margin: 4px 0 8px 18px; padding: 0; color: #3d3d3d; }
.block { margin: 2px 0; border-left: 5px solid var(--c); border-radius: 3px; }
.block > summary { list-style: none; cursor: pointer; display: grid;
  grid-template-columns: minmax(240px, 34%) 1fr 88px; gap: 10px; align-items: center;
  padding: 2px 6px; }
.block > summary::-webkit-details-marker { display: none; }
.block > summary:hover { background: #f2f2ec; }
.label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 13px; }
.label b { font-weight: 600; }
.path { color: var(--muted); font-family: ui-monospace, Menlo, Consolas, monospace;
  font-size: 12px; }
.track { height: 14px; background: #f0f0ea; border-radius: 2px; }
.bar { display: block; height: 100%; width: var(--w); min-width: 2px; background: var(--c);
  border-radius: 2px; }
.tok { text-align: right; font-variant-numeric: tabular-nums; font-size: 12px; }
.badge { display: inline-block; font-size: 11px; padding: 0 6px; margin-left: 4px;
  border-radius: 8px; background: #e8e8e0; color: #333; vertical-align: 1px; }
.badge.evicted, .badge.superseded { background: #d9d9d9; }
.badge.hidden { background: #ffe0b2; }
.badge.pinned { background: #c8e6c9; }
.badge.truncated { background: #ffcdd2; }
.badge.checkpoint { background: #1f2328; color: #fff; }
.block.evicted, .block.superseded { opacity: .6; }
.block.hidden .bar { background: repeating-linear-gradient(90deg, var(--c), var(--c) 4px,
  transparent 4px, transparent 7px); }
.block.checkpoint { box-shadow: inset 0 -2px 0 #1f2328; }
.block.header { opacity: .7; }
.block pre, .digest pre { margin: 4px 0 8px 10px; padding: 8px 10px; max-height: 420px;
  overflow: auto; background: #fafaf7; border: 1px solid #ecece6; border-radius: 4px;
  white-space: pre-wrap; word-break: break-word; font-size: 12px; }
.digest > summary { cursor: pointer; color: #6b5a00; font-weight: 600; font-size: 13px;
  margin: 2px 0 2px 10px; }
.prompt-start { margin: 8px 0; padding: 4px 10px; border-top: 2px dashed #4e79a7;
  color: #4e79a7; font-size: 12px; font-weight: 600; }
"""


def view_items(view: View, pinned: Iterable[str] = ()) -> list[Item]:
    pinned_ids = set(pinned)
    checkpoints = set(view.cache_points)
    truncated = set(view.truncated_paths)
    items = []
    for i, (b, tokens) in enumerate(zip(view.blocks, view.block_tokens, strict=True)):
        marks = ["prompt"]
        marks += ["hidden"] if b.hidden else []
        marks += ["pinned"] if b.id in pinned_ids else []
        marks += ["truncated"] if b.path in truncated and b.type != CONV_RANGE_SUMMARY else []
        marks += ["checkpoint"] if i in checkpoints else []
        items.append(Item(b, tokens, tuple(marks)))
    return items


def _block_html(item: Item, scale: int) -> str:
    b = item.block
    width = 100 * item.tokens / scale if scale else 0
    classes = ["block", *(m for m in item.marks if m != "prompt")]
    if b.type == TURN_HEADER:
        classes.append("header")
    badges = "".join(
        f'<span class="badge {m}">{_MARK_TEXT[m]}</span>' for m in item.marks if m in _MARK_TEXT
    )
    text = b.replacement_text if b.hidden and b.replacement_text else b.text
    if b.type == "react.tool.call":
        text = f"{b.tool_id} {text}"
    if b.data is not None:
        text = f"[{b.mime}, {len(b.data):,} bytes]\n{text}"
    body = (
        text
        if len(text) <= TEXT_LIMIT
        else text[:TEXT_LIMIT] + (f"\n[... {len(text) - TEXT_LIMIT:,} more characters ...]")
    )
    digest = ""
    raw_digest = b.meta.get("compaction_digest") if b.type == CONV_RANGE_SUMMARY else None
    if raw_digest:
        digest = (
            '<details class="digest"><summary>compaction digest</summary><pre>'
            f"{escape(json.dumps(raw_digest, indent=2, ensure_ascii=False))}</pre></details>"
        )
    return (
        f'<details class="{" ".join(classes)}" style="--c:{type_color(b.type)};'
        f'--w:{width:.2f}%" data-type="{escape(b.type)}" data-tokens="{item.tokens}" '
        f'data-path="{escape(b.path)}">'
        f'<summary><span class="label"><b>{escape(b.type)}</b>{badges} '
        f'<span class="path">{escape(b.path)}</span></span>'
        f'<span class="track"><span class="bar"></span></span>'
        f'<span class="tok">{item.tokens:,} tok</span></summary>'
        f"<pre>{escape(body) or '(empty)'}</pre>{digest}</details>"
    )


def _compaction_html(item: Item, number: int, items: Sequence[Item], at: int) -> str:
    meta = item.block.meta
    covered = list(meta.get("covered_turn_ids", []))
    kept = next((i.block for i in items[at + 1 :] if i.block.type != CONV_RANGE_SUMMARY), None)
    span = f"{covered[0]} to {covered[-1]}" if covered else "nothing"
    facts = [
        f"cut at turn {escape(item.block.turn_id)}"
        + (" (mid-turn: the turn's start is summarized)" if meta.get("split_turn_id") else ""),
        f"summarized {plural(int(meta.get('compacted_block_count', 0)), 'block')}; the "
        f"summary covers {plural(len(covered), 'turn')} ({escape(span)})",
        "kept verbatim from "
        + (f"<span class='path'>{escape(kept.path)}</span>" if kept else "here on"),
        f"summarizer: {escape(str(meta.get('summarizer', '?')))}"
        + (
            f" (error: {escape(str(meta['summarizer_error']))})"
            if meta.get("summarizer_error")
            else ""
        ),
    ]
    lis = "".join(f"<li>{f}</li>" for f in facts)
    return (
        f'<section class="compaction" data-summary="{escape(item.block.path)}">'
        f"<h2>compaction {number}</h2><ul>{lis}</ul></section>"
    )


def page(title: str, head: str, items: Sequence[Item], view: View) -> str:
    usage = view_usage(view)
    budget = view.budget
    scale = max((i.tokens for i in items), default=1) or 1
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="sub">{head}</p>',
        _prompt_bar(view, usage),
        _legend(usage),
    ]
    compactions = 0
    current: str | None = None
    started = False
    prompt_marked = False
    for at, item in enumerate(items):
        b = item.block
        starts_prompt = "prompt" in item.marks and "pinned" not in item.marks
        if starts_prompt and not prompt_marked and not started and b.type != CONV_RANGE_SUMMARY:
            # at a section boundary (the top, or right after the latest compaction)
            parts.append('<div class="prompt-start">the next prompt continues here</div>')
            prompt_marked = True
        if b.type == CONV_RANGE_SUMMARY:
            if started:
                parts.append("</section>")
                started, current = False, None
            compactions += 1
            section = _compaction_html(item, compactions, items, at)
            parts.append(section.replace("</section>", _block_html(item, scale) + "</section>"))
            continue
        if b.turn_id != current or not started:
            if started:
                parts.append("</section>")
            current, started = b.turn_id, True
            in_turn = [i for i in items if i.block.turn_id == b.turn_id]
            live = any("prompt" in i.marks for i in in_turn)
            note = "" if live else " (not in the next prompt)"
            parts.append(
                f'<section class="turn{"" if live else " out"}" data-turn="{escape(b.turn_id)}">'
                f"<h2>turn {escape(b.turn_id)}{note}</h2>"
            )
        parts.append(_block_html(item, scale))
    if started:
        parts.append("</section>")
    footer = f"{plural(len(items), 'block')}; budget {budget:,} tokens" if budget else ""
    parts.append(f'<p class="sub">{footer}</p></body></html>')
    return "\n".join(parts)


def _prompt_bar(view: View, usage: dict[str, Any]) -> str:
    budget = view.budget
    scale = max(budget or 0, view.tokens, 1) * 1.04
    segs = []
    if view.system:
        segs.append(
            f'<div class="seg" title="system prompt: {view.system_tokens:,} tokens" '
            f'style="width:{100 * view.system_tokens / scale:.3f}%;'
            f'background:{type_color("system prompt")}"></div>'
        )
    offset = view.system_tokens
    marks = []
    for i, (b, tokens) in enumerate(zip(view.blocks, view.block_tokens, strict=True)):
        segs.append(
            f'<div class="seg" title="{escape(b.type)} {escape(b.path)}: {tokens:,} tokens" '
            f'style="width:{100 * tokens / scale:.3f}%;background:{type_color(b.type)}"></div>'
        )
        offset += tokens
        if i in view.cache_points:
            marks.append(
                f'<div class="ckpt" title="cache checkpoint after {escape(b.path)}" '
                f'style="left:{100 * offset / scale:.3f}%"></div>'
            )
    if budget:
        marks.append(
            f'<div class="budget-line" style="left:{100 * budget / scale:.3f}%">'
            f"<span>budget {budget:,}</span></div>"
        )
    used = (
        f"{view.tokens:,} of {budget:,} tokens ({usage['used']:.1f}%)"
        if budget
        else f"{view.tokens:,} tokens, no budget: compaction off"
    )
    points = plural(len(view.cache_points), "cache checkpoint")
    return (
        f'<p class="prompt"><b>next prompt</b>: {used}, {plural(len(view.blocks), "block")}, '
        f"{points} (dashed)</p>"
        f'<div class="pbar">{"".join(segs)}{"".join(marks)}</div>'
    )


def _legend(usage: dict[str, Any]) -> str:
    rows = "".join(
        f'<span><i style="background:{type_color(name)}"></i>{escape(name)} '
        f"{row['tokens']:,} tok ({row['share']:.1f}%)</span>"
        for name, row in usage["types"].items()
    )
    return f'<div class="legend">{rows}</div>'


def context_html(view: View, *, title: str = "") -> str:
    """The page for one rendered prompt (what :meth:`RenderedContext.to_html` returns)."""
    items = view_items(view)
    head = f"{plural(len(items), 'block')} in the prompt"
    return page(title or "rendered context", head, items, view)
