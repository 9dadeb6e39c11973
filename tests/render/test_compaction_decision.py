"""Edges of the compaction decision (``timeline._render.sanitize``): what a cache-TTL pruning
that is enough on its own reports, where "enough" ends, and which compactions it never
replaces. Written against mutants that the broader tests let through."""

from __future__ import annotations

from datetime import timedelta

from tests.helpers.checkpoints import StepClock, exchange
from tests.helpers.conversations import summaries
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks

PRUNED_NOTE = "cache-TTL pruning brought the prompt under the trigger; no summary"


def expired(max_blocks: int | None = None) -> tuple[Timeline, StepClock]:
    """Three turns of large bash results (1,417 tokens with a short fourth prompt, over the
    1,260-token trigger), then ten minutes pass: the first two turns' results expire."""
    clock = StepClock()
    policy = CompactionPolicy(
        max_tokens=1_400, keep_recent_turns=2, cache_ttl_seconds=300, max_blocks=max_blocks
    )
    tl = Timeline("ttl", policy=policy, token_counter=HeuristicCounter(), clock=clock)
    for i in range(3):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"task {i}"))
        exchange(tl, i, 1_600)
        tl.append(blocks.assistant_completion(f"did {i}"))
    clock.now += timedelta(minutes=10)
    tl.begin_turn()
    return tl, clock


def test_pruning_enough_reports_every_figure() -> None:
    """The stats of a pruning that was enough: the trigger's reason, the estimates before
    and after, the visible block counts (unchanged: hidden results keep their place), no
    summary, the summarizer that would have run, and why none did."""
    tl, _ = expired()
    tl.append(blocks.user_prompt("task 3"))
    before = tl.estimate("sys")
    view = tl.render("sys")
    stats = view.compaction
    assert stats is not None
    assert (stats.reason, stats.tokens_before) == ("tokens", before)
    assert stats.tokens_after == tl.estimate("sys") == view.tokens
    assert stats.tokens_after < 0.9 * 1_400 < before
    assert (stats.compacted_blocks, stats.summary_block_count) == (0, 0)
    assert (stats.split_turn, stats.split_turn_id, stats.covered_turn_ids) == (False, None, ())
    assert stats.original_block_count == stats.visible_block_count == len(view.blocks) == 17
    assert (stats.summarizer, stats.summarizer_error, stats.summary_path) == (
        "inventory",
        None,
        None,
    )
    assert (stats.pruned_blocks, stats.skipped, stats.mid_turn) == (2, PRUNED_NOTE, None)


def test_pruning_enough_counts_the_tail() -> None:
    """Blocks passed as ``tail`` are part of the prompt, so of both block counts."""
    tl, _ = expired()
    tl.append(blocks.user_prompt("task 3"))
    view = tl.render("sys", tail=[blocks.user_prompt("and one more thing")])
    stats = view.compaction
    assert stats is not None and stats.skipped == PRUNED_NOTE
    assert stats.original_block_count == stats.visible_block_count == len(view.blocks) == 18


def _calibrated(offset: int | None) -> tuple[Timeline, int]:
    """Two turns rendered (and, with ``offset``, the provider's count reported as ours
    plus ``offset``), a third turn, the TTL passes, a fourth prompt; the estimate then."""
    clock = StepClock()
    policy = CompactionPolicy(max_tokens=1_400, keep_recent_turns=2, cache_ttl_seconds=300)
    tl = Timeline("ttl", policy=policy, token_counter=HeuristicCounter(), clock=clock)
    for i in range(3):
        if i == 2:
            view = tl.render("sys")
            assert view.compaction is None
            if offset is not None:
                tl.record_usage(prompt_tokens=view.tokens + offset)
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"task {i}"))
        exchange(tl, i, 1_600)
        tl.append(blocks.assistant_completion(f"did {i}"))
    clock.now += timedelta(minutes=10)
    tl.begin_turn()
    tl.append(blocks.user_prompt("task 3"))
    return tl, tl.estimate("sys")


def test_pruning_enough_includes_the_calibration() -> None:
    """After ``record_usage`` the estimates carry the provider's offset: the figure after
    pruning is the calibrated estimate the next render starts from, not the raw count."""
    plain, plain_before = _calibrated(None)
    tl, before = _calibrated(40)
    assert before == plain_before + 40
    reference = plain.render("sys").compaction
    stats = tl.render("sys").compaction
    assert stats is not None and reference is not None and stats.skipped == PRUNED_NOTE
    assert stats.tokens_before == before
    assert reference.tokens_after is not None
    assert stats.tokens_after == tl.estimate("sys") == reference.tokens_after + 40


def test_pruning_down_to_exactly_the_trigger_is_enough() -> None:
    """The trigger is inclusive: pruned to exactly 0.9 x 1,400 = 1,260 tokens, no summary
    is made; one token more and the summary is made after the pruning."""
    tl, _ = expired()
    tl.append(blocks.user_prompt("task 3 " + "z" * 2_428))
    stats = tl.render("sys").compaction
    assert stats is not None and stats.tokens_after == 1_260
    assert (stats.skipped, stats.pruned_blocks) == (PRUNED_NOTE, 2)
    assert not summaries(tl)

    tl, _ = expired()
    tl.append(blocks.user_prompt("task 3 " + "z" * 2_431))
    stats = tl.render("sys").compaction
    assert stats is not None and stats.skipped is None and stats.summary_path
    assert stats.tokens_before == 2_025 and stats.pruned_blocks == 2
    assert len(summaries(tl)) == 1


def test_pruning_not_enough_still_summarizes() -> None:
    """A prompt still over the trigger after pruning is summarized (no block limit set)."""
    tl, _ = expired()
    tl.append(blocks.user_prompt("task 3 " + "z" * 3_000))
    stats = tl.render("sys").compaction
    assert stats is not None and stats.skipped is None and stats.pruned_blocks == 2
    assert stats.summary_path is not None and len(summaries(tl)) == 1


def test_pruning_enough_under_a_block_limit_not_reached() -> None:
    """A block limit that the timeline is under does not stop pruning from being enough."""
    tl, _ = expired(max_blocks=50)
    tl.append(blocks.user_prompt("task 3"))
    stats = tl.render("sys").compaction
    assert stats is not None and (stats.skipped, stats.pruned_blocks) == (PRUNED_NOTE, 2)


def test_manual_compaction_is_never_replaced_by_pruning() -> None:
    """``compact()`` after the TTL prunes the expired results and still summarizes,
    however far under the trigger the pruning brought the prompt."""
    tl, _ = expired()
    tl.append(blocks.user_prompt("task 3"))
    stats = tl.compact("sys")
    assert stats is not None and stats.reason == "manual"
    assert stats.skipped is None and stats.pruned_blocks == 2
    assert stats.summary_path is not None and len(summaries(tl)) == 1
