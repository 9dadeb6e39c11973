"""The sentences the inventory summary quotes: which ones state a constraint, a decision
or a next step, the first sentence of a reply, and lines clipped to a size."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from timeline._compaction.textscan import clip, has_word, sentences

__all__ = [
    "CONSTRAINT",
    "DECISION",
    "LINE_CAP",
    "NEXT",
    "clip_line",
    "clip_lines",
    "first_sentence",
    "matching_sentences",
]

LINE_CAP: Final = 240
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|should|shouldn't|avoid|prefer|only|make sure|without)\b",
    re.IGNORECASE,
)
_CONSTRAINT_WORDS = (
    "must",
    "never",
    "always",
    "n't",
    "not",
    "should",
    "avoid",
    "prefer",
    "only",
    "make sure",
    "without",
)
_DECISION = re.compile(
    r"\b(decided|decide|will use|chose|choose|instead of|switch(?:ed)? to|opt(?:ed)? for|"
    r"going with|the fix is|root cause)\b",
    re.IGNORECASE,
)
_DECISION_WORDS = (
    "decide",
    "will use",
    "chose",
    "choose",
    "instead of",
    "switch",
    "opt",
    "going with",
    "the fix is",
    "root cause",
)
_NEXT = re.compile(r"\b(next|then|todo|remaining|need to|will)\b", re.IGNORECASE)
_NEXT_WORDS = ("next", "then", "todo", "remaining", "need to", "will")

CONSTRAINT: Final = (_CONSTRAINT, _CONSTRAINT_WORDS)
DECISION: Final = (_DECISION, _DECISION_WORDS)
NEXT: Final = (_NEXT, _NEXT_WORDS)
"""(pattern, words): a sentence matches the pattern; every match contains one of the
words, so a text without any of them is not searched."""


def clip_line(text: str, cap: int = LINE_CAP) -> str:
    """``text`` on one line (whitespace collapsed), at most ``cap`` characters."""
    return clip(text, cap)


def _sentence_end(text: str, stop: int) -> int:
    """Where the first sentence of ``text[:stop]`` ends (``stop`` if it does not): the
    first place ``_SENTENCE`` splits, found with ``str.find`` (the regex engine tries
    every position: several times slower on long texts without a sentence end)."""
    end = text.find("\n", 0, stop)
    end = stop if end < 0 else end
    last = len(text) - 1
    for mark in ".!?":
        i = text.find(mark, 0, end)
        while 0 <= i < last and not text[i + 1].isspace():
            i = text.find(mark, i + 1, end)
        if 0 <= i < last:
            end = i + 1
    return end


def first_sentence(text: str, shown: int) -> str:
    """The first sentence of ``text`` as far as ``clip_line(..., shown)`` shows it: a
    long text is only searched as far as its shown part can reach."""
    text = text.strip()
    window = min(len(text), 2 * shown)
    end = _sentence_end(text, window)
    if end == window < len(text) and len(" ".join(text[:window].split())) <= shown:
        end = _sentence_end(text, len(text))  # mostly whitespace: look further
    return text[:end]


def matching_sentences(
    texts: Iterable[str], kind: tuple[re.Pattern[str], tuple[str, ...]]
) -> list[str]:
    """Sentences of ``texts`` that ``kind``'s pattern finds a match in (clipped)."""
    pattern, words = kind
    out = []
    for text in texts:
        low = text.lower()
        if any(w in low for w in words):
            out += [clip_line(s) for s in sentences(text) if has_word(pattern, words, s)]
    return out


def clip_lines(text: str, budget_chars: int) -> str:
    """The whole lines of ``text`` that fit in ``budget_chars`` (the first one clipped if
    even it does not): the last resort that keeps a summary within its cap."""
    lines = text.split("\n")
    kept: list[str] = []
    size = -1
    for line in lines:
        size += len(line) + 1
        if size > budget_chars:
            break
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) if kept else clip_line(lines[0], max(4, budget_chars))[:budget_chars]
