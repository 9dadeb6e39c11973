"""``timeline search``: full-text search of everything a stored conversation held.

The stores mark each match in a snippet with brackets (``[retry]``). On a terminal with
colour the brackets give way to a highlight; in a pipe or with ``NO_COLOR`` they stay.
When the page of hits is full, the total is counted (up to :data:`COUNT_CAP`) so the last
line says "10 shown of 25 matches" rather than suggesting there are only 10.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Final

from timeline.cli.output import color_enabled, emit_json, printable
from timeline.cli.stored import open_store, require
from timeline.render.usage import plural

__all__ = ["COUNT_CAP", "cmd_search", "highlight"]

COUNT_CAP: Final = 1_000
"""The most matches counted for the total; beyond it the total reads "1,000+"."""

_MARKED = re.compile(r"\[(\w+)\]")
_WORD = re.compile(r"\w+")
_HIGHLIGHT = "\x1b[1;33m"
_RESET = "\x1b[0m"


def _is_match(word: str, terms: list[str]) -> bool:
    """``word`` (as the store marked it, possibly stemmed: ``leaking`` for ``leak``) is
    one of the query's words: they share a prefix of at least four letters, or the
    whole of the shorter one."""
    lower = word.lower()
    for term in terms:
        shared = 0
        for a, b in zip(lower, term, strict=False):
            if a != b:
                break
            shared += 1
        if shared >= min(4, len(lower), len(term)) and shared > 0:
            return True
    return False


def highlight(snippet: str, query: str, *, color: bool) -> str:
    """A one-line snippet safe for the terminal: control characters escaped and, with
    ``color``, the store's ``[match]`` markers replaced by a bold yellow highlight."""
    line = printable(" ".join(snippet.split()))
    if not color:
        return line
    terms = [t.lower() for t in _WORD.findall(query)]

    def mark(m: re.Match[str]) -> str:
        word = m.group(1)
        return f"{_HIGHLIGHT}{word}{_RESET}" if _is_match(word, terms) else m.group(0)

    return _MARKED.sub(mark, line)


def _hit_json(h: Any) -> dict[str, Any]:
    return {
        "path": h.path,
        "turn_id": h.turn_id,
        "kind": h.kind,
        "score": h.score,
        "type": h.block.type,
        "block_id": h.block.id,
        "snippet": h.snippet,
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
        emit_json([_hit_json(h) for h in hits])
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
