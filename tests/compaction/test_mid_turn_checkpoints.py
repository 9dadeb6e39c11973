"""Upstream v2 behaviours, part two: the mid-turn checkpoint (numbering, follow-ups, persist
and load, the async path) and cache-TTL pruning."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import pytest

import index_store
from tests.helpers.checkpoints import StepClock, exchange, mid_turn_timeline, ttl_timeline
from tests.helpers.conversations import summaries
from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    PolicyError,
    Timeline,
    blocks,
)


class TestMidTurnCheckpoint:
    def test_checkpoint_counts_within_the_turn(self) -> None:
        """The running turn's prefix renders under [MID-TURN COMPACTION n], n = 1, 2..."""
        tl = mid_turn_timeline()
        view = tl.render("sys")
        assert view.compaction is not None and view.compaction.mid_turn == 2
        text = view.blocks[0].text
        assert "[MID-TURN COMPACTION 2]" in text and "[/MID-TURN COMPACTION 2]" in text
        assert "[MID-TURN COMPACTION 1]" not in text
        assert "Turn Context (split turn)" not in text
        assert "### Original Request\nFix the failing login test" in text

    def test_follow_up_prompt_stays_visible(self) -> None:
        """A prompt appended while the turn had tool calls stays visible after the
        checkpoint (and is in the summary's user requests too)."""
        tl = mid_turn_timeline()
        view = tl.render("sys")
        shown = [b.text for b in view.blocks if b.type == "user.prompt"]
        assert "also update the docs" in shown
        assert "### Follow-ups\n- also update the docs" in view.blocks[0].text
        assert view.blocks[1].text == "also update the docs"

    def test_a_new_turn_ends_the_checkpoint_numbering(self) -> None:
        """A compaction in a later turn starts again at 1, and the follow-up is no longer
        carried."""
        tl = mid_turn_timeline()
        tl.render("sys")
        tl.begin_turn()
        tl.append(blocks.user_prompt("next task"))
        mid_turn = []
        for k in range(12, 30):
            exchange(tl, k)
            view = tl.render("sys")
            if view.compaction is not None and view.compaction.mid_turn is not None:
                mid_turn.append(view.compaction.mid_turn)
                assert "also update the docs" not in [b.text for b in view.blocks]
        assert mid_turn and mid_turn[0] == 1

    def test_numbering_and_follow_ups_survive_persist_and_load(self) -> None:
        """After persist and load inside the turn, the next checkpoint is n + 1 and the
        follow-up is still carried."""
        tl = mid_turn_timeline()
        tl.render("sys")
        store = index_store.open("memory://")
        tl.persist(store)
        again = Timeline.load(
            store, "v2", policy=tl.policy, token_counter=HeuristicCounter(), clock=StepClock()
        )
        for k in range(12, 18):
            exchange(again, k)
        view = again.render("sys")
        assert view.compaction is not None and view.compaction.mid_turn == 3
        assert "also update the docs" in [b.text for b in view.blocks]

    def test_finished_turn_keeps_the_split_turn_summary(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """A cut inside an older turn is not a mid-turn checkpoint."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=3_000, keep_recent_turns=1))
        tl.begin_turn()
        tl.append(blocks.user_prompt("long one"))
        for k in range(16):
            exchange(tl, k, 800)
        tl.begin_turn()
        tl.append(blocks.user_prompt("ok"))
        stats = tl.render("sys").compaction
        assert stats is not None and stats.split_turn and stats.mid_turn is None


def test_arender_makes_the_same_checkpoint() -> None:
    """The async path builds the same mid-turn checkpoint, plan carry and reminder."""
    sync_view = mid_turn_timeline().render("sys")
    async_view = asyncio.run(mid_turn_timeline().arender("sys"))
    assert async_view.to_anthropic() == sync_view.to_anthropic()


class TestCacheTtlPruning:
    def test_pruning_alone_avoids_a_summary(self) -> None:
        """Old tool results outside the recent turns are hidden with a read_path note;
        under the trigger again, no summary is made; the stats count the pruned blocks."""
        tl, clock = ttl_timeline()
        clock.now += timedelta(minutes=10)
        tl.begin_turn()
        tl.append(blocks.user_prompt("task 3"))
        view = tl.render("sys")
        stats = view.compaction
        assert stats is not None
        assert (stats.pruned_blocks, stats.summary_path) == (2, None)
        assert not summaries(tl)
        hidden = [b for b in view.blocks if b.hidden]
        assert [b.replacement_text for b in hidden] == [
            "[pruned: bash result tc:t1.tool_calls.call_b3.out.json — read_path to restore]",
            "[pruned: bash result tc:t2.tool_calls.call_b8.out.json — read_path to restore]",
        ]
        recent = [b for b in tl.blocks if b.turn_id == "t3" and b.type == "react.tool.result"]
        assert [b.hidden for b in recent] == [False]

    def test_results_within_the_ttl_are_kept(self) -> None:
        """Inside the TTL nothing is pruned: the summary is made as usual."""
        tl, _ = ttl_timeline()
        tl.begin_turn()
        tl.append(blocks.user_prompt("task 3 " + "z" * 2_000))
        stats = tl.render("sys").compaction
        assert stats is not None and stats.pruned_blocks == 0 and stats.summary_path

    def test_ttl_must_be_positive(self) -> None:
        """A zero or negative TTL is a PolicyError."""
        with pytest.raises(PolicyError, match="cache_ttl_seconds"):
            CompactionPolicy(max_tokens=1_000, cache_ttl_seconds=0)
