"""The HTML view: one self-contained page (no server, no external asset) that opens on
what the model sees next, as Claude Code's ``/context`` does.

Top to bottom: the next prompt as a bar by category (system, summary, user, assistant,
tool calls, tool results, thinking, free) drawn to the budget with the compaction trigger,
a strip of its blocks in order with the cache checkpoints, and the figures; then the live
window (the next prompt, in order, grouped by turn; the latest compaction's card and
summary first); then the earlier history, collapsed. Each block is one row naming the
tool, its key arguments and a one-line preview, with its marks (hidden, cleared, pinned,
truncated, evicted, cache checkpoint) and tokens, opening in place on its text.

The earlier history is embedded compressed (zlib, base64) and turned into rows by the
page's one inline script when it is opened, a turn at a time: a 200-turn conversation is
a page of a few hundred kilobytes that paints at once. The script also gives the search
box and the jumps between turns and compactions. A Content-Security-Policy allows that
one script (by hash), inline styles and ``data:`` images, and nothing else.
:meth:`RenderedContext.to_html` draws one prompt; :func:`timeline._cli.html_view.timeline_html`
(``timeline inspect ID --html OUT``) a stored conversation, evicted blocks included.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from functools import cache
from html import escape
from importlib.resources import files

from timeline._html.breakdown import View, plural, token_breakdown
from timeline._html.rows import (
    Item,
    compaction_html,
    ran_in,
    row_html,
    tool_names,
    turn_summary,
)
from timeline._html.top import next_prompt, toolbar
from timeline._model import CONV_RANGE_SUMMARY, STOP_WORDS, Block, block_counts, block_type

__all__ = ["Item", "context_html", "page", "query_script", "view_items"]


@cache
def _asset(name: str) -> str:
    return (files("timeline._html") / "assets" / name).read_text(encoding="utf-8")


def view_items(view: View, pinned: Iterable[str] = (), cleared: Iterable[str] = ()) -> list[Item]:
    """The rendered prompt's blocks as page items, in prompt order, with their marks
    (``cleared``: ids the clearing tier shows cleared, which render as hidden blocks)."""
    pinned_ids = set(pinned)
    cleared_ids = set(cleared)
    checkpoints = set(view.cache_points)
    truncated = set(view.truncated_paths)
    items = []
    for i, (b, tokens) in enumerate(zip(view.blocks, view.block_tokens, strict=True)):
        marks = ["prompt"]
        if b.id in cleared_ids:
            marks.append("cleared")
        else:
            marks += ["hidden"] if b.hidden else []
            marks += ["cleared"] if b.meta.get("cleared") else []
        marks += ["pinned"] if b.id in pinned_ids else []
        marks += ["truncated"] if b.path in truncated and b.type != CONV_RANGE_SUMMARY else []
        marks += ["checkpoint"] if i in checkpoints else []
        items.append(Item(b, tokens, tuple(marks)))
    return items


class _Page:
    """What every part of one page needs: the chronology (every item in order, the
    prompt's included), tool names, compaction numbers and the token scale."""

    def __init__(self, chronology: Sequence[Item], prompt: Sequence[Item]) -> None:
        self.chronology = list(chronology)
        self.tools = tool_names(i.block for i in [*chronology, *prompt])
        self.calls = {
            i.block.call_id: i.block
            for i in [*chronology, *prompt]
            if i.block.call_id and block_type(i.block.type).render == "tool_call"
        }
        self.terms: dict[str, int] = {}
        """Every term of the page's blocks, numbered in the order first met."""
        summaries = [i.block.id for i in self.chronology if i.block.type == CONV_RANGE_SUMMARY]
        for i in prompt:
            if i.block.type == CONV_RANGE_SUMMARY and i.block.id not in summaries:
                summaries.append(i.block.id)
        self.number = {sid: n for n, sid in enumerate(summaries, 1)}
        self.position = {i.block.id: n for n, i in enumerate(self.chronology)}
        self.scale = max((i.tokens for i in [*chronology, *prompt]), default=1) or 1

    def row(self, item: Item) -> str:
        return row_html(item, self.scale, self.tools, self._term_ids(item.block))

    def _term_ids(self, b: Block) -> str:
        """The numbers of the terms search finds ``b`` by (a tool result by its call's
        too, as the stores index it), in base 36."""
        call = (
            self.calls.get(b.call_id or "") if block_type(b.type).render == "tool_result" else None
        )
        numbers = self.terms
        ids = sorted(numbers.setdefault(t, len(numbers)) for t in block_counts(b, call))
        return " ".join(_base36(n) for n in ids)

    def _neighbour(self, at: int, step: int) -> Block | None:
        at += step
        while 0 <= at < len(self.chronology):
            b = self.chronology[at].block
            if b.type != CONV_RANGE_SUMMARY:
                return b
            at += step
        return None

    def card(self, item: Item) -> str:
        """A compaction's card (not closed: the caller adds the summary row)."""
        at = self.position.get(item.block.id)
        kept = self._neighbour(at, 1) if at is not None else None
        cut = self._neighbour(at, -1) if at is not None else None
        return compaction_html(item, self.number.get(item.block.id, 0), kept, cut)


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = digits[n % 36]
    while n >= 36:
        n //= 36
        out = digits[n % 36] + out
    return out


def query_script() -> str:
    """The script that reads a search query into terms as the stores do
    (``TimelineSearch.queryTerms``), with :data:`~timeline._model.search_text.STOP_WORDS`
    written in."""
    return _asset("search.js").replace("__STOP_WORDS__", " ".join(sorted(STOP_WORDS)))


def _script() -> str:
    """The page's one script: the query's analysis, then the page's behaviour."""
    return query_script() + _asset("view.js")


def _terms_data(pg: _Page) -> str:
    """The page's term list (each row's ``data-t`` numbers index it), as JSON data."""
    listed = json.dumps(list(pg.terms), ensure_ascii=False, separators=(",", ":"))
    return (
        '<script type="application/json" id="search-terms">'
        f"{listed.replace('<', chr(92) + 'u003c')}</script>"
    )


def _live(pg: _Page, prompt: Sequence[Item]) -> str:
    """The live window: the prompt in order, grouped by turn; a summary as its card."""
    parts: list[str] = []
    current: str | None = None
    for item in prompt:
        b = item.block
        if b.type == CONV_RANGE_SUMMARY:
            if current is not None:
                parts.append("</section>")
                current = None
            parts.append(pg.card(item) + pg.row(item) + "</section>")
            continue
        if b.turn_id != current:
            if current is not None:
                parts.append("</section>")
            current = b.turn_id
            parts.append(
                f'<section class="turn" data-turn="{escape(b.turn_id)}" '
                f'aria-label="turn {escape(b.turn_id)}"><h3>turn {escape(b.turn_id)}</h3>'
            )
        parts.append(pg.row(item))
    if current is not None:
        parts.append("</section>")
    return "".join(parts)


def _history_entries(pg: _Page, history: Sequence[Item]) -> list[dict[str, str]]:
    """The earlier history as entries (a turn's blocks, or a compaction), each with its
    one-line head and its rows (made into DOM only when opened; search reads their text
    from the same HTML)."""
    entries: list[dict[str, str]] = []
    group: list[Item] = []

    def flush() -> None:
        if group:
            turn = group[0].block.turn_id
            entries.append(
                {
                    "k": "turn",
                    "id": turn,
                    "h": f"turn {turn} · {turn_summary(group)}",
                    "b": "".join(pg.row(i) for i in group),
                }
            )
            group.clear()

    for item in history:
        b = item.block
        if b.type == CONV_RANGE_SUMMARY:
            flush()
            number = pg.number.get(b.id, 0)
            covered = list(b.meta.get("covered_turn_ids", []))
            span = f" (turns {covered[0]} to {covered[-1]})" if covered else ""
            entries.append(
                {
                    "k": "compaction",
                    "id": b.path,
                    "h": f"compaction {number}{ran_in(b)}: summarized "
                    f"{plural(int(b.meta.get('compacted_block_count', 0)), 'block')}{span}",
                    "b": pg.card(item) + pg.row(item) + "</section>",
                }
            )
            continue
        if group and group[-1].block.turn_id != b.turn_id:
            flush()
        group.append(item)
    flush()
    return entries


def _payload(entries: list[dict[str, str]]) -> str:
    """The history entries as base64 of zlib-compressed JSON (the page's script reads it
    with the browser's DecompressionStream)."""
    raw = json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.b64encode(zlib.compress(raw, 9)).decode()


def _head(title: str, script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; media-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_asset('view.css')}</style></head>"
    )


def page(
    title: str,
    head: str,
    view: View,
    chronology: Sequence[Item],
    prompt: Sequence[Item],
    notes: str = "",
) -> str:
    """The whole page: ``prompt`` is the next prompt's items in order, ``chronology``
    every item the conversation held in order (the prompt's included); what is not in
    the prompt goes to the collapsed history. ``head`` and ``notes`` (a section after
    the prompt's figures) are escaped HTML."""
    pg = _Page(chronology, prompt)
    in_prompt = {i.block.id for i in prompt}
    history = [i for i in chronology if i.block.id not in in_prompt]
    live = _live(pg, prompt)
    entries = _history_entries(pg, history)
    script = _script()
    turns = len({i.block.turn_id for i in history if i.block.type != CONV_RANGE_SUMMARY})
    compactions = sum(1 for e in entries if e["k"] == "compaction")
    return "".join(
        [
            _head(title, script),
            '<body><header class="top">',
            f'<h1>{escape(title)}</h1><p class="sub">{head} <span class="keys">'
            "(keys: / search, n and N matches, j and k turns, [ and ] compactions)</span></p>",
            toolbar(),
            "</header><main>",
            next_prompt(token_breakdown(view), view, prompt),
            notes,
            '<section id="live" aria-labelledby="live-h">'
            f'<h2 id="live-h">Live window: the next prompt, in order '
            f'<span class="count">({plural(len(prompt), "block")})</span></h2>',
            live,
            "</section>",
            _history(
                sum(i.block.type != CONV_RANGE_SUMMARY for i in history),
                turns,
                compactions,
                _payload(entries) if entries else "",
            ),
            f"</main>{_terms_data(pg)}<script>{script}</script></body></html>",
        ]
    )


def _history(blocks: int, turns: int, compactions: int, payload: str) -> str:
    """``blocks`` counts the history's blocks, its summaries are ``compactions``."""
    if not blocks and not compactions:
        return (
            '<section id="history" aria-labelledby="history-h"><h2 id="history-h">Earlier '
            'history</h2><p class="sub">None: every block is in the next prompt.</p></section>'
        )
    what = (
        f"{plural(blocks, 'block')} in {plural(turns, 'turn')}, {plural(compactions, 'compaction')}"
    )
    return (
        '<section id="history" aria-labelledby="history-h">'
        '<h2 id="history-h">Earlier history: evicted or not in the prompt</h2>'
        f'<details id="history-box"><summary>{what}: open to load</summary>'
        '<div id="history-entries"></div></details>'
        f'<script type="application/octet-stream" id="history-data">{payload}</script>'
        "<noscript><p>Loading the earlier history needs JavaScript; "
        "<code>timeline search</code> finds any block in the store.</p></noscript>"
        "</section>"
    )


def context_html(view: View, *, title: str = "") -> str:
    """The page for one rendered prompt (what :meth:`RenderedContext.to_html` returns)."""
    items = view_items(view)
    head = f"{plural(len(items), 'block')} in the prompt"
    return page(title or "rendered context", head, view, items, items)
