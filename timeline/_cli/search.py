"""``timeline search``: full-text search of everything a stored conversation held.

The stores mark each match in a snippet with brackets (``[retry]``), which cannot be told
from the text's own. So the markers are read as the query's terms (:func:`match_spans`):
``--json`` gives the plain ``text`` and the ``matches`` as positions in it; a terminal
with colour highlights them; a pipe or ``NO_COLOR`` gets a line of ``^`` under them.
When the page of hits is full, the total is counted (up to :data:`COUNT_CAP`) so the last
line says "10 shown of 25 matches" rather than suggesting there are only 10.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from typing import Any, Final

from timeline._cli.output import color_enabled, emit_json, printable
from timeline._cli.stored import open_store, require
from timeline._cli.words import plural
from timeline._model import query_terms, terms

__all__ = ["COUNT_CAP", "cmd_search", "highlight"]

COUNT_CAP: Final = 1_000
"""The most matches counted for the total; beyond it the total reads "1,000+"."""

_MARKED = re.compile(r"\[([^\[\]]+)\]")
"""A store's match marker, ``[word]`` (the innermost brackets: ``[[word]]`` is a match
inside the text's own brackets)."""
_HIGHLIGHT = "\x1b[1;33m"
_RESET = "\x1b[0m"


def match_spans(snippet: str, query: str) -> tuple[str, list[tuple[int, int]]]:
    """The snippet's text without the store's match markers, and where each match is in
    it. A bracketed word is a marker only when it holds one of the query's terms (as
    search reads words: stems, identifier parts): a real ``[bracket]`` stays text."""
    wanted = set(query_terms(query))
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = length = 0
    for m in _MARKED.finditer(snippet):
        word = m.group(1)
        if not wanted.intersection(terms(word)):
            continue
        before = snippet[at : m.start()]
        out += [before, word]
        length += len(before)
        spans.append((length, length + len(word)))
        length += len(word)
        at = m.end()
    out.append(snippet[at:])
    return "".join(out), spans


def _columns(text: str) -> int:
    """Terminal columns ``text`` takes (wide East Asian characters two, marks none)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def highlight(snippet: str, query: str, *, color: bool) -> str:
    """A snippet for the terminal, one line, control characters escaped; its matches
    highlighted with ``color``, else underlined by a line of ``^`` below it (brackets
    would read as the text's own)."""
    text, spans = match_spans(" ".join(snippet.split()), query)
    pieces: list[tuple[str, bool]] = []
    at = 0
    for a, b in spans:
        pieces += [(printable(text[at:a]), False), (printable(text[a:b]), True)]
        at = b
    pieces.append((printable(text[at:]), False))
    if color:
        return "".join(f"{_HIGHLIGHT}{p}{_RESET}" if hit else p for p, hit in pieces)
    line = "".join(p for p, _ in pieces)
    if not spans:
        return line
    marks = "".join(("^" if hit else " ") * _columns(p) for p, hit in pieces).rstrip()
    return f"{line}\n          {marks}"


def _hit_json(h: Any, query: str) -> dict[str, Any]:
    text, spans = match_spans(h.snippet, query)
    return {
        "path": h.path,
        "turn_id": h.turn_id,
        "kind": h.kind,
        "score": h.score,
        "type": h.block.type,
        "block_id": h.block.id,
        "snippet": h.snippet,
        "text": text,
        "matches": [list(span) for span in spans],
    }


def cmd_search(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    try:
        require(store, args.conversation)
        hits = store.search(args.conversation, args.query, limit=args.limit)
        total = len(hits)
        if total == args.limit:
            total = len(store.search(args.conversation, args.query, limit=COUNT_CAP))
    finally:
        store.close()
    if args.json:
        emit_json([_hit_json(h, args.query) for h in hits])
        return 0
    if not hits:
        print(f"no matches for {printable(repr(args.query))}")
        return 0
    color = color_enabled(sys.stdout)
    for h in hits:
        print(
            f"{h.score:8.3f}  {h.kind:7}  {printable(h.path)}  (turn {printable(h.turn_id)})\n"
            f"          {highlight(h.snippet, args.query, color=color)}"
        )
    if total > len(hits):
        more = f"{COUNT_CAP:,}+" if total >= COUNT_CAP else f"{total:,}"
        print(f"{len(hits):,} shown of {more} matches (--limit shows more)")
    else:
        print(plural(len(hits), "match", "matches"))
    return 0
