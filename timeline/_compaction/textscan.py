"""Exact, faster forms of the text scans compaction runs on every summary.

Python's regex engine tries a pattern like ``(?<=[.!?])\\s+|\\n+`` or ``\\b(next|then)\\b``
(case-insensitive) at every position of a text, at tens of nanoseconds a character: on
long prompts, replies and tool results those scans were most of a compaction's summary
cost. Each function here returns exactly what the expression in its docstring returns,
using ``str`` methods (C loops) instead; the tests compare them on random texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "clip",
    "first_line",
    "has_text",
    "has_word",
    "newline_only",
    "sentences",
    "split_sentences",
]

_OTHER_BREAKS: Final = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
"""What ``str.splitlines`` breaks lines at besides ``\\n``."""
_MARKS: Final = ".!?"


def has_text(text: str) -> bool:
    """``bool(text.strip())`` without copying the text."""
    return bool(text) and not text.isspace()


def newline_only(text: str) -> bool:
    """True when ``text.splitlines()`` breaks only at ``\\n`` (then it equals
    ``text.split("\\n")`` without a trailing empty line)."""
    return not any(c in text for c in _OTHER_BREAKS)


def _next_mark(text: str, mark: str, start: int, end: int) -> int:
    """The first ``mark`` at or after ``start`` (before ``end``) followed by whitespace,
    or -1."""
    j = text.find(mark, start, end)
    last = len(text) - 1
    while j >= 0 and not (j < last and text[j + 1].isspace()):
        j = text.find(mark, j + 1, end)
    return j


def split_sentences(text: str) -> list[str]:
    """``re.split(r"(?<=[.!?])\\s+|\\n+", text)``."""
    out: list[str] = []
    n = len(text)
    start = 0
    while start < n:
        nl = text.find("\n", start)
        bound = n if nl < 0 else nl
        p = bound
        for mark in _MARKS:
            j = _next_mark(text, mark, start, bound)
            if j >= 0 and j + 1 < p:
                p = j + 1
                bound = j  # a later mark cannot come first any more
        if p >= n:
            break
        end = p
        if p > 0 and text[p - 1] in _MARKS:  # \s+ after a sentence end (newlines included)
            while end < n and text[end].isspace():
                end += 1
        else:  # \n+
            while end < n and text[end] == "\n":
                end += 1
        out.append(text[start:p])
        start = end
    out.append(text[start:])
    return out


def sentences(text: str) -> list[str]:
    """``[s.strip() for s in split_sentences(text) if s and s.strip()]``."""
    return [s for s in map(str.strip, split_sentences(text)) if s]


def has_word(pattern: re.Pattern[str], words: Iterable[str], text: str) -> bool:
    """``pattern.search(text) is not None`` for a case-insensitive ``pattern`` every match
    of which contains one of ``words`` (lower case): an ASCII text without any of them is
    not searched (most are not)."""
    if text.isascii():
        low = text.lower()
        for w in words:
            if w in low:
                break
        else:
            return False
    return pattern.search(text) is not None


_CLIP_WINDOW: Final = 4
"""A long text is collapsed only this many times its cap at first."""


def clip(text: str, cap: int) -> str:
    """``" ".join(text.split())``, cut to ``cap - 3`` characters plus ``...`` when longer
    than ``cap``. A long text is collapsed only as far as the cut can reach: the collapsed
    form of a prefix is a prefix of the collapsed text."""
    window = _CLIP_WINDOW * cap + 8
    if cap >= 3 and len(text) > window:  # (a negative cut counts from the end)
        head = " ".join(text[:window].split())
        if len(head) > cap:
            return f"{head[: cap - 3]}..."
    text = " ".join(text.split())
    return text if len(text) <= cap else f"{text[: cap - 3]}..."


def _stripped_bounds(text: str) -> tuple[int, int]:
    """Where ``text.strip()`` starts and ends in ``text`` (start == end when blank)."""
    n = len(text)
    start = 0
    while start < n:
        chunk = text[start : start + 256]
        rest = chunk.lstrip()
        if rest:
            start += len(chunk) - len(rest)
            break
        start += len(chunk)
    if start >= n:
        return n, n
    end = n
    while True:
        chunk = text[max(start, end - 256) : end]
        rest = chunk.rstrip()
        if rest:
            return start, end - (len(chunk) - len(rest))
        end -= len(chunk)


def first_line(text: str) -> str:
    """``text.strip().splitlines()[0] if text.strip() else ""``: only the first line is
    read (a tool result may be thousands of lines)."""
    start, end = _stripped_bounds(text)
    if start == end:
        return ""
    stop = text.find("\n", start, end)
    line = text[start : end if stop < 0 else stop]
    if newline_only(line):
        return line
    return line.splitlines()[0]
