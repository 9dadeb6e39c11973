"""The forced-render ladder: each forced render is at least 25% smaller, then BudgetError;
a compaction that would not make the prompt smaller is skipped."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.clock import FixedClock
from timeline import (
    BudgetError,
    CompactionPolicy,
    HeuristicCounter,
    RenderedContext,
    Timeline,
    blocks,
)
from timeline._compaction.summarizers.base import SummaryRequest


def ladder(tl: Timeline, system: str = "sys") -> list[int]:
    """Sizes of the first render and of each forced render after it, until BudgetError."""
    sizes = [tl.render(system).tokens]
    with pytest.raises(BudgetError):
        for _ in range(50):
            view = tl.render(system, force_sanitize=True)
            sizes.append(view.tokens)
    return sizes


def assert_shrinks(sizes: list[int], steps: int) -> None:
    assert len(sizes) >= steps + 1, sizes
    for before, after in itertools.pairwise(sizes):
        assert after <= before * 3 // 4, sizes


def huge_tool_result(tl: Timeline) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt("read the log"))
    call = tl.append(blocks.tool_call("read", {"path": "app.log"}))
    tl.append(blocks.tool_result(call.call_id or "", "line of log output\n" * 400))


def test_single_huge_tool_result(make_tl: Callable[..., Timeline]) -> None:
    """One oversized tool result: every forced render cuts a quarter, then BudgetError."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000))
    huge_tool_result(tl)
    before = tl.render("sys")
    forced = tl.render("sys", force_sanitize=True)
    assert before.to_anthropic() != forced.to_anthropic()
    assert forced.truncated_paths
    assert_shrinks(ladder(tl), 3)


def test_single_huge_user_prompt(make_tl: Callable[..., Timeline]) -> None:
    """One oversized user prompt is truncated further on each forced render."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=5_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("please review this text. " * 700))
    assert_shrinks(ladder(tl), 3)


def test_many_medium_results(make_tl: Callable[..., Timeline]) -> None:
    """Many medium tool results: compaction then truncation, each step a quarter smaller."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=8_000))
    for i in range(12):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"step {i}"))
        call = tl.append(blocks.tool_call("grep", {"pattern": f"p{i}"}))
        tl.append(blocks.tool_result(call.call_id or "", f"match {i} in file.py\n" * 60))
        tl.append(blocks.assistant_completion(f"found {i}"))
    sizes = ladder(tl)
    assert_shrinks(sizes, 3)


def test_pinned_blocks_stop_the_ladder(make_tl: Callable[..., Timeline]) -> None:
    """Pinned blocks are never cut: the ladder ends in BudgetError once only they remain."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=4_000))
    tl.begin_turn()
    pinned = tl.append(blocks.user_prompt("never change the public API " * 60), pin=True)
    huge_tool_result(tl)
    sizes = ladder(tl)
    assert_shrinks(sizes, 1)
    with pytest.raises(BudgetError):
        tl.render("sys", force_sanitize=True)
    assert tl.get(pinned.id) == pinned
    assert tl.render("sys").tokens <= 4_000  # an unforced render still works


def test_new_content_restarts_the_ladder(make_tl: Callable[..., Timeline]) -> None:
    """After an append the ladder measures from the new unforced size, not the last one."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000))
    huge_tool_result(tl)
    ladder(tl)
    tl.append(blocks.assistant_completion("done"))
    unforced = tl.estimate("sys")
    view = tl.render("sys", force_sanitize=True)
    assert view.tokens <= unforced * 3 // 4


class Verbose:
    """A summarizer whose summary is longer than anything it covers."""

    def summarize(self, request: SummaryRequest) -> str:
        return "a summary longer than what it covers " * 400


SMALL = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 600), st.integers(0, 80)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=SMALL, keep=st.integers(1, 400), force=st.booleans())
def test_compaction_never_grows_the_prompt(turns: list[Any], keep: int, force: bool) -> None:
    """A manual compaction makes the prompt smaller or is skipped, changing nothing."""
    tl = Timeline(
        "p", policy=CompactionPolicy(max_tokens=100_000), token_counter=HeuristicCounter()
    )
    for n_calls, size, words in turns:
        tl.begin_turn()
        tl.append(blocks.user_prompt("do it " * (1 + words // 4)))
        for _ in range(n_calls):
            call = tl.append(blocks.tool_call("bash", {"cmd": "ls"}))
            tl.append(blocks.tool_result(call.call_id or "", "r" * size))
        tl.append(blocks.assistant_completion("ok " * words))
    before_blocks = tl.blocks
    before = tl.estimate("sys")
    stats = tl.compact("sys", force=force, keep_recent_tokens=keep)
    after = tl.estimate("sys")
    if stats is None or stats.skipped is not None:
        assert (before, before_blocks) == (after, tl.blocks)
        if stats is not None:
            assert stats.tokens_after == stats.tokens_before
    else:
        assert stats.tokens_after is not None and stats.tokens_after < stats.tokens_before
        assert after < before


def test_skipped_compaction_is_not_retried(make_tl: Callable[..., Timeline]) -> None:
    """A skipped compaction is reported once; renders after it do not plan it again."""
    seen: list[Any] = []
    tl = make_tl(
        policy=CompactionPolicy(max_tokens=1_150, summary_max_tokens=1_000),
        summarizer=Verbose(),
        on_after_compaction=seen.append,
    )
    for i in range(45):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"question {i}: why is the sky blue?"))
    first = tl.render("sys")
    assert first.compaction is not None and first.compaction.skipped is not None
    assert tl.render("sys").compaction is None
    assert [s.skipped is not None for s in seen] == [True]


class Words:
    """One token per word, so a test can size the system prompt to the token."""

    def count(self, text: str) -> int:
        return len(text.split())


def forced_after(system_words: int) -> tuple[int, RenderedContext]:
    """The unforced render's tokens and the forced render after it, for a session of
    large tool results under a system prompt of ``system_words`` tokens."""
    tl = Timeline(
        "c",
        policy=CompactionPolicy(max_tokens=20_000, keep_recent_turns=1),
        token_counter=Words(),
        clock=FixedClock(),
    )
    for i in range(8):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"question {i}"))
        call = tl.append(blocks.tool_call("read_file", {"path": f"f{i}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "line " * 300))
        tl.append(blocks.assistant_completion(f"answer {i}"))
    system = "s " * system_words
    before = tl.render(system).tokens
    return before, tl.render(system, force_sanitize=True)


def test_three_quarters_is_exact_where_truncation_takes_over() -> None:
    """The bound is 3/4 of the last render, not one token more: the forced render is
    checked around the system-prompt size where the compacted prompt alone first stops
    fitting 3/4 (a larger system prompt weighs more in the compacted prompt than in the
    render it is measured against), so one of them lands exactly on the bound + 1
    before truncation."""
    assert not forced_after(0)[1].truncated_paths  # compaction alone fits at first
    lo, hi = 0, 64
    while not forced_after(hi)[1].truncated_paths:
        lo, hi = hi, 2 * hi
        assert hi < 20_000, "truncation never took over"
    while hi - lo > 1:  # hi: the smallest system prompt whose forced render truncates
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if forced_after(mid)[1].truncated_paths else (mid, hi)
    truncated = []
    for words in range(hi - 8, hi + 8):
        before, forced = forced_after(words)
        assert forced.tokens <= before * 3 // 4, (words, before, forced.tokens)
        truncated.append(bool(forced.truncated_paths))
    assert True in truncated and False in truncated
