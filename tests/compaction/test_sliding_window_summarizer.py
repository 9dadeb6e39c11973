"""Edges of :class:`SlidingWindowSummarizer`: what it carries from the previous summary
(and how much), the user requests it lists, and how it shortens lines to fit. Written
against mutants that the broader tests let through."""

from __future__ import annotations

import pytest

from timeline import SlidingWindowSummarizer, SummaryRequest, Timeline, blocks
from timeline._compaction.digest_records import CompactionDigest
from timeline._compaction.summarizers.base import block_line, estimate_tokens
from timeline._model.block import Block


def prompts(*texts: str) -> tuple[Block, ...]:
    tl = Timeline("s")
    tl.begin_turn()
    for text in texts:
        tl.append(blocks.user_prompt(text))
    return tuple(b for b in tl.blocks if b.type == "user.prompt")


def words(n: int, tag: str) -> str:
    """``n`` words, the k-th ending in its number, so every cut is visible."""
    return " ".join(f"{tag}{k}" for k in range(n))


def test_previous_summary_comes_first() -> None:
    """The earlier summary (stripped) follows the title, before the transcript lines."""
    request = SummaryRequest("history", prompts("one", "two"), previous_summary="  before \n")
    assert SlidingWindowSummarizer().summarize(request).splitlines() == [
        "[Conversation summary]",
        "[Earlier summary]",
        "before",
        "[User]: one",
        "[User]: two",
    ]


@pytest.mark.parametrize(("length", "clipped"), [(100, False), (101, True), (300, True)])
def test_previous_summary_keeps_its_end_within_half_the_budget(length: int, clipped: bool) -> None:
    """A previous summary longer than ``2 * max_tokens`` characters (half the budget at
    four characters a token) keeps its last ``2 * max_tokens`` characters after a
    ``[...]`` line; one that long exactly is kept whole."""
    previous = "".join(str(k % 10) for k in range(length - 1)) + "E"
    request = SummaryRequest("history", prompts("hi"), previous_summary=previous, max_tokens=50)
    lines = SlidingWindowSummarizer().summarize(request).splitlines()
    assert lines[:2] == ["[Conversation summary]", "[Earlier summary]"]
    if clipped:
        assert lines[2:4] == ["[...]", previous[-100:]]
    else:
        assert lines[2] == previous
    assert lines[-1] == "[User]: hi"


def test_user_requests_are_numbered_from_one() -> None:
    """The digest's user requests end the summary, numbered from 1, after the transcript."""
    digest = CompactionDigest(user_requests=["fix the parser", "add a test"])
    request = SummaryRequest("history", prompts("one"), digest=digest)
    assert SlidingWindowSummarizer().summarize(request).splitlines() == [
        "[Conversation summary]",
        "[User]: one",
        "[User requests so far]",
        "1. fix the parser",
        "2. add a test",
    ]


def test_lines_are_cut_at_line_chars_in_head_and_tail() -> None:
    """Both the first and the last blocks are cut at ``line_chars`` when the summary fits
    the budget (no further shortening)."""
    texts = [words(60, "h"), "middle 1", "middle 2", words(60, "t")]
    found = prompts(*texts)
    summarizer = SlidingWindowSummarizer(keep_first=1, keep_last=1, line_chars=100)
    text = summarizer.summarize(SummaryRequest("history", found, max_tokens=10_000))
    assert text.splitlines() == [
        "[Conversation summary]",
        block_line(found[0], 100),
        "[... 2 blocks omitted ...]",
        block_line(found[3], 100),
    ]
    assert block_line(found[0], 100) != block_line(found[0], 400)


def test_a_summary_within_its_budget_is_not_shortened() -> None:
    """Exactly ``max_tokens`` (estimated) is within the budget: lines stay full length."""
    found = prompts(words(80, "a"), words(80, "b"))
    full = SlidingWindowSummarizer().summarize(SummaryRequest("history", found))
    fits = SummaryRequest("history", found, max_tokens=estimate_tokens(full))
    assert SlidingWindowSummarizer().summarize(fits) == full
    over = SummaryRequest("history", found, max_tokens=estimate_tokens(full) - 1)
    assert SlidingWindowSummarizer().summarize(over) != full


@pytest.mark.parametrize(("line_chars", "final"), [(400, 50), (61, 30), (60, 60), (30, 30)])
def test_over_budget_halves_lines_until_sixty_chars_or_less(line_chars: int, final: int) -> None:
    """Over its budget, the summary is remade with lines half as long, until it fits or
    the lines are 60 characters or shorter (it may then stay over the budget)."""
    found = prompts(words(80, "a"), words(80, "b"), words(80, "c"))
    request = SummaryRequest("history", found, max_tokens=5)
    text = SlidingWindowSummarizer(line_chars=line_chars).summarize(request)
    assert text.splitlines() == ["[Conversation summary]", *(block_line(b, final) for b in found)]
