"""Upstream v2 behaviours: cut points by author, the summary failure policy."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from test_compaction import coding_turn, summaries

from timeline import (
    AsyncSummarizerError,
    Block,
    CompactionPolicy,
    PolicyError,
    SummaryRequest,
    Timeline,
    blocks,
)
from timeline.compaction import cut_boundary, valid_cuts


class TestCutsByAuthor:
    @pytest.mark.parametrize(
        ("block", "boundary"),
        [
            (Block(type="stage.gate", author="user"), "message"),
            (Block(type="stage.gate", author="assistant"), "message"),
            (Block(type="stage.gate", author="planner-bot"), "message"),
            (Block(type="stage.gate", author="system"), "none"),
            (Block(type="stage.gate", author="tool"), "none"),
            (Block(type="react.note", author="system"), "none"),
            (Block(type="user.prompt", author="user"), "turn"),
            (Block(type="turn.header", author="system"), "turn"),
            (Block(type="react.tool.result", author="user", call_id="c"), "none"),
            (Block(type="conv.range.summary", author="user"), "none"),
        ],
    )
    def test_boundary_by_type_then_author(self, block: Block, boundary: str) -> None:
        """A user/assistant-authored custom block is a message boundary; a system note or
        a tool result never a cut."""
        assert cut_boundary(block) == boundary

    def test_system_note_is_never_a_cut(self) -> None:
        """valid_cuts refuses a system-authored note and accepts a user-authored custom."""
        seq = [
            Block(type="turn.header", author="system", turn_id="t1"),
            Block(type="user.prompt", author="user", turn_id="t1"),
            Block(type="react.note", author="system", turn_id="t1"),
            Block(type="stage.gate", author="user", turn_id="t1"),
            Block(type="stage.gate", author="system", turn_id="t1"),
        ]
        assert valid_cuts(seq, 0) == [False, True, False, True, False]

    def test_compaction_cuts_at_a_user_authored_custom_block(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """Inside one turn of notes, the only cut is the user-authored custom block."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=0))
        tl.begin_turn()
        tl.append(blocks.user_prompt("go"))
        for i in range(6):
            tl.append(blocks.note(f"note {i} " + "n" * 1_200))
        gate = tl.append(blocks.custom("stage.gate", "approve?", author="user"))
        for i in range(3):
            tl.append(blocks.note(f"late {i} " + "n" * 400))
        view = tl.render("sys")
        assert view.compaction is not None
        assert view.blocks[1].id == gate.id


class FailingSummarizer:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        raise self.exc


def _long(tl: Timeline, turns: int = 10) -> None:
    for i in range(turns):
        coding_turn(tl, i)


class TestSummaryFailurePolicy:
    def test_fallback_gives_the_inventory_summary(self, make_tl: Callable[..., Timeline]) -> None:
        """on_summary_failure='fallback' (default): the inventory summary replaces it."""
        bad = FailingSummarizer(ValueError("model down"))
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=bad)
        _long(tl)
        view = tl.render("sys")
        assert view.compaction is not None and view.compaction.skipped is None
        assert view.compaction.summarizer_error == "ValueError: model down"
        assert "## Goal" in summaries(tl)[0].text

    def test_skip_compacts_nothing_and_says_so(self, make_tl: Callable[..., Timeline]) -> None:
        """on_summary_failure='skip': no summary, the timeline unchanged, the stats say so,
        and the failing model is not called again before something new is appended."""
        bad = FailingSummarizer(ValueError("model down"))
        policy = CompactionPolicy(max_tokens=2_000, on_summary_failure="skip")
        tl = make_tl(policy=policy, summarizer=bad)
        _long(tl)
        before = tl.blocks
        stats = tl.render("sys").compaction
        assert stats is not None
        assert (stats.compacted_blocks, stats.summary_path) == (0, None)
        assert stats.skipped is not None and "model down" in stats.skipped
        assert tl.blocks == before and not summaries(tl)
        calls = bad.calls
        tl.render("sys")
        assert bad.calls == calls

    def test_bad_failure_policy_is_rejected(self) -> None:
        """Only 'fallback' and 'skip' are accepted."""
        with pytest.raises(PolicyError, match="on_summary_failure"):
            CompactionPolicy.from_mapping({"max_tokens": 1_000, "on_summary_failure": "retry"})

    def test_own_timeout_error_names_the_real_failure(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """A summarizer raising its own TimeoutError is reported as that error, not as
        'timed out after Nones'."""
        bad = FailingSummarizer(TimeoutError("upstream read timeout"))
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=bad)
        _long(tl)
        stats = tl.render("sys").compaction
        assert stats is not None
        assert stats.summarizer_error == "TimeoutError: upstream read timeout"

    def test_own_timeout_with_a_policy_timeout(self, make_tl: Callable[..., Timeline]) -> None:
        """With summary_timeout_seconds set, the summarizer's own TimeoutError is still its
        own (not the policy's timeout)."""
        bad = FailingSummarizer(TimeoutError("socket"))
        policy = CompactionPolicy(max_tokens=2_000, summary_timeout_seconds=30)
        tl = make_tl(policy=policy, summarizer=bad)
        _long(tl)
        stats = tl.render("sys").compaction
        assert stats is not None and stats.summarizer_error == "TimeoutError: socket"

    def test_sync_render_with_async_summarizer_in_a_loop(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """render() inside a running loop with an async summarizer raises a typed error
        naming arender, and changes nothing; arender works."""

        class Async:
            async def asummarize(self, request: SummaryRequest) -> str:
                return "async summary"

        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=Async())
        _long(tl)
        before = tl.blocks

        async def main() -> str:
            with pytest.raises(AsyncSummarizerError, match="arender"):
                tl.render("sys")
            assert tl.blocks == before
            view = await tl.arender("sys")
            return view.blocks[0].text

        assert "async summary" in asyncio.run(main())
