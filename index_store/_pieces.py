"""A long text in pieces cut between words: how PostgreSQL stores and indexes a block's
text (``bt_text``), and how the SQLite search counts a long text's words (FTS5 takes
time quadratic in one document's instances of a term, and memory in its terms)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

__all__ = ["PIECE_CHARS", "pieces"]

PIECE_CHARS: Final = 65_536
"""Characters of one indexed piece of a block's text (a ``tsvector`` holds at most 1 MB,
and takes up to ~3 bytes per byte of text)."""
_CUT_WITHIN: Final = 1_024
"""A piece ends at the last whitespace of its final characters (a word is never cut
unless it is this long)."""


def pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of at most :data:`PIECE_CHARS` characters, each cut after a
    whitespace when one is near the end (so no word is split), joined back exactly."""
    start = 0
    while len(text) - start > PIECE_CHARS:
        stop = start + PIECE_CHARS
        cut = max(text.rfind(c, stop - _CUT_WITHIN, stop) for c in " \n\t\r")
        stop = cut + 1 if cut > start else stop
        yield text[start:stop]
        start = stop
    if start < len(text) or not text:
        yield text[start:]
