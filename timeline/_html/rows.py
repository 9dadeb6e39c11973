"""Rows of the HTML view: each block is one line a person can scan (what it is, the tool
and its key arguments, a one-line preview, its marks and tokens) that opens in place on
its full text; compaction cards say where a compaction cut and what it did.

Every text from the conversation is HTML-escaped here; the page's Content-Security-Policy
would block a script even if something slipped through.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any, Final

import attrs

from timeline._compaction import pruned_replacement
from timeline._html.breakdown import CATEGORIES, category_of, plural
from timeline._model import (
    CONV_RANGE_SUMMARY,
    TURN_HEADER,
    Block,
    block_type,
    media_kind,
    media_ref,
    native_provider,
)

__all__ = [
    "IMAGE_LIMIT",
    "TEXT_LIMIT",
    "Item",
    "compaction_html",
    "digest_text",
    "key_args",
    "preview",
    "ran_in",
    "row_html",
]

TEXT_LIMIT: Final = 6_000
"""Characters of a block's text shown when it is opened (the rest is elided)."""
IMAGE_LIMIT: Final = 512 * 1024
"""Largest image (bytes) embedded as a thumbnail; a larger one is described instead."""
PREVIEW: Final = 160
_COLORS: Final = {c.name: c.color for c in CATEGORIES}
_PREFERRED: Final = (
    "path",
    "file_path",
    "file",
    "filename",
    "command",
    "cmd",
    "query",
    "pattern",
    "url",
    "name",
)
_KIND: Final = {
    "header": "turn",
    "tool_call": "tool call",
    "tool_result": "tool result",
    "summary": "summary",
    "reasoning": "thinking",
    "attachment": "attachment",
}
_MARKS: Final = {
    "out": "not in the prompt",
    "evicted": "evicted",
    "superseded": "superseded",
    "hidden": "hidden",
    "pruned": "pruned (cache TTL)",
    "cleared": "cleared",
    "pinned": "pinned",
    "truncated": "truncated",
    "checkpoint": "cache checkpoint",
    "error": "error",
}


@attrs.frozen
class Item:
    """One block on the page: its tokens (as rendered, or as it would render) and marks
    (``prompt``, ``out``, ``evicted``, ``superseded``, ``hidden``, ``cleared``,
    ``pinned``, ``truncated``, ``checkpoint``)."""

    block: Block
    tokens: int
    marks: tuple[str, ...]


def preview(text: str, width: int = PREVIEW) -> str:
    """The first non-blank line of ``text``, whitespace collapsed, cut to ``width``."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= width else words[: width - 1] + "…"
    return ""


def _short(value: Any, width: int = 48) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def key_args(text: str, limit: int = 3) -> str:
    """The key arguments of a tool call's JSON parameters (``path=src/app.py``): the
    usual keys first (path, command, query...), then the others, at most ``limit``."""
    try:
        params = json.loads(text) if text else {}
    except ValueError:
        return _short(text)
    if not isinstance(params, dict):
        return _short(params)
    keys = [k for k in _PREFERRED if k in params]
    keys += [k for k in params if k not in keys]
    shown = [f"{k}={_short(params[k])}" for k in keys[:limit]]
    more = len(params) - len(shown)
    return ", ".join(shown) + (f", +{more}" if more > 0 else "")


def _kind(b: Block) -> str:
    spec = block_type(b.type)
    known = _KIND.get(spec.render)
    if known is not None:
        return known
    if b.type in ("user.prompt", "assistant.completion"):
        return b.type.split(".")[0]
    return b.type.rsplit(".", 1)[-1] if b.type.startswith("react.") else b.type


def _image(b: Block) -> str:
    """A thumbnail of an inline image (a data: URI); what the media is otherwise: a
    reference (URL or file id, never fetched), audio, an image too large to embed. A
    provider's opaque item (its bytes are the item, not media) shows nothing here."""
    if native_provider(b) is not None:
        return ""
    if b.data is not None and b.mime.startswith("image/"):
        if len(b.data) <= IMAGE_LIMIT:
            uri = f"data:{escape(b.mime)};base64,{base64.b64encode(b.data).decode()}"
            alt = f"{b.mime} image, {len(b.data):,} bytes"
            return f'<img class="thumb" src="{uri}" alt="{escape(alt)}">'
        return f'<span class="media">{escape(b.mime)}, {len(b.data):,} bytes (not embedded)</span>'
    ref = media_ref(b)
    if ref is not None:
        label = escape(_short(ref.label, 80))
        return f'<span class="media">{ref.media} at {label} (not fetched)</span>'
    if b.data is not None:
        kind = media_kind(b) or "data"
        return f'<span class="media">{kind}: {escape(b.mime)}, {len(b.data):,} bytes</span>'
    return ""


def _headline(b: Block, tool: str | None) -> tuple[str, str]:
    """(name, one-line text) of a block's row: the tool and its key arguments or the
    first line of its output, a summary's span, the first line of anything else."""
    text = b.replacement_text if b.hidden and b.replacement_text else b.text
    render = block_type(b.type).render
    if render == "tool_call":
        return b.tool_id or tool or "", key_args(b.text)
    if render == "tool_result":
        lines = len(b.text.splitlines())
        size = f" ({plural(lines, 'line')})" if lines > 1 else ""
        return tool or b.tool_id or "", preview(text) + size
    if render == "summary":
        covered = list(b.meta.get("covered_turn_ids", []))
        span = f"turns {covered[0]} to {covered[-1]}" if covered else "no turns"
        return "", f"{span}: {preview(text)}"
    if b.type == TURN_HEADER:
        return "", b.turn_id
    provider = native_provider(b)
    if provider is not None:  # a provider's opaque item: which provider, which kind
        return f"{provider} {b.meta.get('kind', '?')}", preview(text)
    if render == "attachment":
        return str(b.meta.get("name") or ""), preview(text)
    return b.tool_id or "", preview(text)


def _entry(value: Any) -> str:
    """One digest entry on one line: a mapping's values (``t195 read_file src/db.py``),
    or the value itself."""
    if isinstance(value, Mapping):
        return " · ".join(f"{k}={_short(v, 200)}" for k, v in sorted(value.items()))
    return _short(value, 400)


def digest_text(digest: Mapping[str, Any]) -> str:
    """A compaction digest as text: each non-empty section with its count, an entry per
    line (compact: the digest of every compaction is on the page)."""
    lines = []
    for key in sorted(digest):
        value = digest[key]
        if isinstance(value, list):
            if value:
                lines.append(f"{key} ({len(value)}):")
                lines += [f"  {_entry(v)}" for v in value]
        elif value not in (None, "", 0, {}):
            lines.append(f"{key}: {_entry(value)}")
    return "\n".join(lines) or "(empty)"


def _body(b: Block) -> str:
    text = b.replacement_text if b.hidden and b.replacement_text else b.text
    if b.hidden:
        text = f"(hidden; rendered as its replacement)\n{text}\n\n(original)\n{b.text}"
    if len(text) > TEXT_LIMIT:
        rest = len(text) - TEXT_LIMIT
        text = text[:TEXT_LIMIT] + f"\n[... {rest:,} more characters: store.read({b.path!r}) ...]"
    parts = [f'<pre tabindex="0">{escape(text) or "(empty)"}</pre>']
    digest = b.meta.get("compaction_digest") if b.type == CONV_RANGE_SUMMARY else None
    if isinstance(digest, Mapping) and digest:
        parts.append(
            '<details class="digest"><summary>compaction digest</summary>'
            f'<pre tabindex="0">{escape(digest_text(digest))}</pre></details>'
        )
    ids = f"{b.path} · {b.id}" + (f" · {b.ts}" if b.ts else "")
    parts.append(f'<p class="ids">{escape(ids)}</p>')
    return "".join(parts)


def row_html(item: Item, scale: int, tools: Mapping[str, str], terms: str = "") -> str:
    """One block as a ``<details class="block">`` row; ``scale`` sizes its token meter,
    ``tools`` names the tool of a result by its call id, ``terms`` are the page's numbers
    of the terms search finds it by."""
    b = item.block
    category = category_of(b.type)
    marks = [m for m in item.marks if m in _MARKS]
    if "hidden" in marks and b.replacement_text == pruned_replacement(b):
        marks[marks.index("hidden")] = "pruned"  # hidden by the cache-TTL pruning tier
    if b.meta.get("is_error"):
        marks.append("error")
    classes = " ".join(["block", *marks, *(["header"] if b.type == TURN_HEADER else [])])
    name, line = _headline(b, tools.get(b.call_id or ""))
    # every history row is evicted (its section says so): no badge for that
    badges = "".join(f'<span class="badge {m}">{_MARKS[m]}</span>' for m in marks if m != "evicted")
    width = min(100.0, 100 * item.tokens / scale) if scale else 0.0
    return (
        f'<details class="{classes}" style="--c:{_COLORS[category]}" '
        f'data-type="{escape(b.type)}" data-tokens="{item.tokens}" '
        f'data-path="{escape(b.path)}" data-turn="{escape(b.turn_id)}" data-t="{terms}">'
        f'<summary><span class="kind">{escape(_kind(b))}</span>'
        f'<span class="what">{f"<b>{escape(name)}</b> " if name else ""}'
        f'<span class="line">{escape(line)}</span></span>{_image(b)}'
        f'<span class="badges">{badges}</span>'
        f'<span class="tok">{item.tokens:,}<i style="width:{width:.1f}%"></i></span></summary>'
        f"{_body(b)}</details>"
    )


def _tiers(meta: Mapping[str, Any]) -> list[str]:
    """What each tier of the compaction did, as its summary's ``meta`` records it
    (``tiers``: a list of mappings with ``tier`` and figures; or one ``tier``)."""
    facts = []
    tiers = meta.get("tiers")
    if isinstance(tiers, list):
        for t in tiers:
            if isinstance(t, Mapping):
                name = escape(str(t.get("tier", "?")))
                rest = ", ".join(
                    f"{escape(str(k))} {escape(str(v))}" for k, v in t.items() if k != "tier"
                )
                facts.append(f"tier {name}" + (f": {rest}" if rest else ""))
    elif meta.get("tier"):
        facts.append(f"tier: {escape(str(meta['tier']))}")
    return facts


def ran_in(summary: Block) -> str:
    """`` in turn t37``: the turn during which the compaction ran ("" for a summary made
    before that was recorded; it sits where it cut, which may be an earlier turn)."""
    turn = summary.meta.get("ran_in_turn")
    return f" in turn {turn}" if isinstance(turn, str) and turn else ""


def compaction_html(item: Item, number: int, kept: Block | None, cut_after: Block | None) -> str:
    """The card of one compaction: where it cut, what it summarized and kept, each tier,
    the summarizer; its summary (and digest) open in place below."""
    b = item.block
    meta = b.meta
    covered = list(meta.get("covered_turn_ids", []))
    span = f"{covered[0]} to {covered[-1]}" if covered else "nothing"
    where = (
        f"cut after <code>{escape(cut_after.path)}</code> in turn {escape(cut_after.turn_id)}"
        if cut_after is not None
        else f"cut in turn {escape(b.turn_id)}"
    )
    if ran_in(b):
        where = f"ran{escape(ran_in(b))}; {where}"
    if meta.get("split_turn_id"):
        where += " (mid-turn: the turn's start is summarized)"
    facts = [
        where,
        f"summarized {plural(int(meta.get('compacted_block_count', 0)), 'block')}; the "
        f"summary covers {plural(len(covered), 'turn')} ({escape(span)})",
        "kept verbatim from "
        + (f"<code>{escape(kept.path)}</code>" if kept is not None else "here on"),
        *_tiers(meta),
        f"summarizer: {escape(str(meta.get('summarizer', '?')))}"
        + (
            f" (error: {escape(str(meta['summarizer_error']))})"
            if meta.get("summarizer_error")
            else ""
        ),
    ]
    lis = "".join(f"<li>{f}</li>" for f in facts)
    latest = "" if "superseded" in item.marks else " (in the prompt)"
    return (
        f'<section class="compaction" data-summary="{escape(b.path)}" '
        f'aria-label="compaction {number}"><h3>compaction {number}{latest}</h3>'
        f"<ul>{lis}</ul>"
    )


def tool_names(blocks: Iterable[Block]) -> dict[str, str]:
    """Tool name by call id, from the tool calls among ``blocks``."""
    return {
        b.call_id: b.tool_id
        for b in blocks
        if b.call_id and b.tool_id and block_type(b.type).render == "tool_call"
    }


def turn_summary(items: Sequence[Item]) -> str:
    """A turn's line: its blocks, tokens and the tools it called (``read_file x3``)."""
    calls: dict[str, int] = {}
    for i in items:
        if block_type(i.block.type).render == "tool_call":
            name = i.block.tool_id or "?"
            calls[name] = calls.get(name, 0) + 1
    tools = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in calls.items())
    tokens = sum(i.tokens for i in items)
    return f"{plural(len(items), 'block')}, {tokens:,} tok" + (f" · {tools}" if tools else "")
