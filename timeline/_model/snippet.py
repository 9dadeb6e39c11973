"""The snippet of a search hit: the part of its text where the query's terms are densest,
each word (or part of a word) that matched in ``[brackets]``.

Matches are terms (:mod:`timeline._model.search_text`), not substrings: ``retry`` marks
``[retrying]`` and the ``[retry]`` of ``retry_policy``, never ``retrying`` inside
``preretrying``. Every store gives the same snippet for the same text and query.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Final

from timeline._model.search_text import term_spans

__all__ = ["WIDTH", "snippet"]

WIDTH: Final = 160
"""Characters of text a snippet shows (a little more, to end on whole words)."""
_LONG: Final = 1 << 16
"""A text this long is not analysed whole for its snippet: its matches are looked for
from the query terms' leading letters first."""
_ANCHORS: Final = 200
"""Matches of a text tried as the start of its snippet's window."""
_SNAP: Final = 24
"""How far a window's ends move to fall between words."""


def snippet(text: str, terms: Collection[str], width: int = WIDTH) -> str:
    """The best window of ``text`` for ``terms``, matches marked; the text's start when
    nothing in it matches (a tool result found by its call's words)."""
    wanted = set(terms)
    spans = _matches(text, wanted)
    start = _best_start(spans, width) if spans else 0
    start, end = _snap(text, start, start + width)
    marked = _mark(text, start, end, [s for s in spans if s[0] >= start and s[1] <= end])
    return ("…" if start else "") + marked + ("…" if end < len(text) else "")


def _matches(text: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    if len(text) <= _LONG:
        return [s for s in term_spans(text) if s[2] in wanted]
    for lo, hi in _candidate_windows(text, wanted):
        found = [s for s in term_spans(text, lo, hi) if s[2] in wanted]
        if found:
            return found
    return [s for s in term_spans(text) if s[2] in wanted]


def _candidate_windows(text: str, wanted: set[str]) -> Iterator[tuple[int, int]]:
    """Windows of a long text around the first places its letters could hold a term: a
    stem's leading letters, case ignored (``agenc`` of ``Agencies``)."""
    prefixes = sorted({t[:-1] if len(t) > 3 else t for t in wanted}, key=len, reverse=True)
    if not prefixes:
        return
    pattern = re.compile("|".join(map(re.escape, prefixes)), re.IGNORECASE)
    for n, match in enumerate(pattern.finditer(text)):
        if n >= _ANCHORS:
            return
        yield _snap(text, max(0, match.start() - WIDTH), match.end() + WIDTH)


def _best_start(spans: list[tuple[int, int, str]], width: int) -> int:
    """Where the window with the most distinct matched terms starts (the earliest such)."""
    best, best_start = -1, 0
    anchors = spans[:_ANCHORS]
    for i, (anchor, _, _) in enumerate(anchors):
        start = max(0, anchor - width // 4)
        seen = {t for a, b, t in anchors[i:] if b <= start + width}
        seen |= {t for a, b, t in anchors[:i] if a >= start}
        if len(seen) > best:
            best, best_start = len(seen), start
    return best_start


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` moved to fall between words where a space is near."""
    end = min(end, len(text))
    if start > 0:
        space = text.rfind(" ", max(0, start - _SNAP), start + 1)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.find(" ", end, end + _SNAP)
        end = space if space >= 0 else end
    return start, end


def _mark(text: str, start: int, end: int, spans: list[tuple[int, int, str]]) -> str:
    """``text[start:end]`` with each matched span (overlaps merged) in brackets."""
    out: list[str] = []
    at = start
    for a, b in _merged(spans):
        if a < at:
            continue
        out += [text[at:a], "[", text[a:b], "]"]
        at = b
    out.append(text[at:end])
    return "".join(out)


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b, _ in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged
