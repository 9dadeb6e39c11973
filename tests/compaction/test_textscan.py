"""The fast text scans of compaction equal the regex and line loops they replace."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from timeline._compaction import textscan as _textscan
from timeline._compaction.summary_text import (
    _NEXT,
    _NEXT_WORDS,
    REMINDER_HEADING,
    TAGGED_NOTES_HEADING,
)
from timeline._compaction.textscan import first_line

# pieces that hit every branch: each kind of line break, sentence ends, headings, tags,
# mid-turn markers, the words searched for in several cases, long runs
PIECES = (
    "a",
    "b c",
    " ",
    "  ",
    ".",
    "!",
    "?",
    "\n",
    "\n\n",
    "\r",
    "\r\n",
    "\t",
    "\x0b",
    "\x1c",
    "\x85",
    "\u2028",
    "## ",
    "### ",
    "#",
    "<",
    ">",
    "<tag>",
    f"\n{REMINDER_HEADING}\n",
    f"\n{TAGGED_NOTES_HEADING} \n",
    "\n## Goal\n",
    "[MID-TURN COMPACTION 3]",
    "\n[MID-TURN COMPACTION 12]\n",
    "[MID-TURN COMPACTION x]",
    "next",
    "Then",
    "NEED TO",
    "willing",
    "\u017f",  # long s: matches "s" case-insensitively, not ASCII
    "\u212a",  # Kelvin sign: matches "k"
    "- ",
    "(",
    ")",
    "\xe9",
    "x" * 60,
)
texts = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@settings(max_examples=400)
@given(texts)
def test_split_sentences_is_the_regex_split(text: str) -> None:
    """split_sentences returns what re.split with the sentence pattern returns."""
    assert _textscan.split_sentences(text) == _SENTENCE.split(text)


@settings(max_examples=300)
@given(texts, st.integers(min_value=0, max_value=40))
def test_clip_equals_collapsing_the_whole_text(text: str, cap: int) -> None:
    """clip reads a long text only as far as its cut but returns the same."""
    collapsed = " ".join(text.split())
    expected = collapsed if len(collapsed) <= cap else f"{collapsed[: cap - 3]}..."
    assert _textscan.clip(text, cap) == expected


@settings(max_examples=300)
@given(texts)
def test_first_line_and_word_search(text: str) -> None:
    """first_line is the stripped text's first line; has_word is the regex search."""
    stripped = text.strip()
    assert _textscan.first_line(text) == (stripped.splitlines()[0] if stripped else "")
    assert _textscan.has_word(_NEXT, _NEXT_WORDS, text) == (_NEXT.search(text) is not None)
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()  # splitlines gives no empty line after a final break
    assert _textscan.newline_only(text) == (text.splitlines() == parts)


def test_the_first_line_of_a_text_ending_in_a_long_run_of_blank_lines() -> None:
    """The first line is found scanning the blank end back in chunks of 256 characters;
    a text ending in more than 256 of them reads like its stripped form (stepping the
    end forward instead of back would never finish)."""
    text = "  Build passed.\nall good" + "\n \t" * 200
    assert first_line(text) == text.strip().splitlines()[0] == "Build passed."
    assert first_line(" \n" * 300) == ""
