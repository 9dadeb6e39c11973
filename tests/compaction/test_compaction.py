"""Compaction: v2's coverage cases, DESIGN §5's robustness rules, hooks and fallbacks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import msgspec
import pytest

from tests.helpers.conversations import coding_turn, summaries
from timeline import (
    BudgetError,
    CompactionPolicy,
    CompactionStats,
    HeuristicCounter,
    SummaryRequest,
    Timeline,
    blocks,
)
from timeline._compaction import SPLIT_TURN_HEADING
from timeline._compaction.run import summarize_sync
from timeline._model.block import CONV_RANGE_SUMMARY
from timeline._render.prepare import framing_cost, system_cost


class TestV2Coverage:
    """The seven cases of v2's test_timeline_compaction.py."""

    def test_insert_summary_and_keep_cut_block(self, make_tl: Callable[..., Timeline]) -> None:
        """A summary is inserted in place and the block at the cut stays visible."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=2))
        for i in range(12):
            coding_turn(tl, i)
        view = tl.render("sys")
        assert view.compaction is not None
        index = next(i for i, b in enumerate(tl.blocks) if b.type == "conv.range.summary")
        cut_block = tl.blocks[index + 1]
        assert view.blocks[0].type == "conv.range.summary"
        assert cut_block.id == view.blocks[1].id

    def test_split_turn_prefix_summary(self, make_tl: Callable[..., Timeline]) -> None:
        """A cut inside a long (finished) turn summarizes its prefix under 'Turn Context
        (split turn)'; the running turn gets a mid-turn checkpoint instead (see
        test_mid_turn_checkpoints)."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=3_000, keep_recent_turns=1))
        coding_turn(tl, 0)
        long_turn = tl.begin_turn()
        tl.append(blocks.user_prompt("One long task"))
        for k in range(12):
            c = tl.append(blocks.tool_call("bash", {"step": k}))
            tl.append(blocks.tool_result(c.call_id or "", f"step {k} " + "y" * 900))
        tl.begin_turn()
        tl.append(blocks.user_prompt("ok"))
        view = tl.render("sys")
        assert view.compaction is not None and view.compaction.split_turn
        summary = view.blocks[0]
        assert SPLIT_TURN_HEADING in summary.text
        assert "### Original Request\nOne long task" in summary.text
        assert summary.meta["split_turn_id"] == long_turn

    def test_no_compaction_under_limit(self, make_tl: Callable[..., Timeline]) -> None:
        """Under the trigger and not forced, blocks are unchanged."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=50_000))
        for i in range(5):
            coding_turn(tl, i)
        before = tl.blocks
        view = tl.render("sys")
        assert (None, before) == (view.compaction, tl.blocks)

    def test_compaction_after_existing_summary(self, make_tl: Callable[..., Timeline]) -> None:
        """A second summary goes after the first and merges it (nothing dropped)."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
        for i in range(40):
            coding_turn(tl, i)
            tl.render("sys")
            if len(summaries(tl)) == 2:
                break
        found = summaries(tl)
        assert len(found) >= 2
        positions = [tl.blocks.index(s) for s in found]
        assert positions == sorted(positions)
        assert "Task 0: fix module m0.py" in found[-1].text
        assert set(found[0].meta["covered_turn_ids"]) <= set(found[-1].meta["covered_turn_ids"])

    def test_hidden_blocks_surface_in_digest(self, make_tl: Callable[..., Timeline]) -> None:
        """Hidden blocks of the compacted range are listed with their replacement text."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
        coding_turn(tl, 0)
        path = tl.blocks[3].path
        tl.hide([path], "(file hidden)")
        for i in range(1, 10):
            coding_turn(tl, i)
        tl.render("sys")
        digest = summaries(tl)[0].meta["compaction_digest"]
        assert {"path": path, "replacement_text": "(file hidden)"} in digest["hidden_blocks"]

    def test_tool_call_boundary_preserved(self, make_tl: Callable[..., Timeline]) -> None:
        """The first kept block is never a tool result, and parallel calls stay together."""
        for keep in range(1, 400, 37):
            tl = make_tl()
            for i in range(6):
                coding_turn(tl, i, result_chars=300, calls=3)
            tl.compact("sys", keep_recent_tokens=keep)
            view = tl.render("sys")
            assert view.blocks[1].type != "react.tool.result"
            calls = {b.call_id for b in view.blocks if b.type == "react.tool.call"}
            results = {b.call_id for b in view.blocks if b.type == "react.tool.result"}
            assert results == calls

    def test_cache_points_retained_after_render(self, make_tl: Callable[..., Timeline]) -> None:
        """After compaction + render, checkpoints exist in the output stream."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
        for i in range(12):
            coding_turn(tl, i)
        view = tl.render("sys")
        assert view.compaction is not None
        assert view.cache_points
        assert any(
            "cache_control" in p for m in view.to_anthropic()["messages"] for p in m["content"]
        )


def test_hooks_fire_only_when_compacting(make_tl: Callable[..., Timeline]) -> None:
    """on_before/on_after stay silent on renders that do not compact (v2 fired always)."""
    seen: list[tuple[str, CompactionStats]] = []
    tl = make_tl(
        policy=CompactionPolicy(max_tokens=2_500, keep_recent_turns=1),
        on_before_compaction=lambda s: seen.append(("before", s)),
        on_after_compaction=lambda s: seen.append(("after", s)),
    )
    coding_turn(tl, 0)
    tl.render("sys")
    tl.render("sys")
    assert seen == []
    for i in range(1, 10):
        coding_turn(tl, i)
    view = tl.render("sys")
    assert [k for k, _ in seen] == ["before", "after"]
    before, after = seen[0][1], seen[1][1]
    assert (None, view.tokens) == (before.tokens_after, after.tokens_after)
    assert after.tokens_after < after.tokens_before
    assert after.compacted_blocks > 0 and after.summary_block_count == 1
    assert after.reason == "tokens"


def test_summary_block_count_follows_compactions_and_restore(
    make_tl: Callable[..., Timeline],
) -> None:
    """The count the stats report is kept on the timeline (not rescanned); it must match
    the summaries actually held, across compactions and a restore."""
    counts: list[int] = []
    tl = make_tl(
        policy=CompactionPolicy(max_tokens=2_500, keep_recent_turns=1),
        on_after_compaction=lambda s: counts.append(s.summary_block_count),
    )
    snapshot = None
    for i in range(40):
        coding_turn(tl, i)
        tl.render("sys")
        if len(counts) == 2 and snapshot is None:
            snapshot = tl.snapshot()
    held = sum(1 for b in tl.blocks if b.type == "conv.range.summary")
    assert len(counts) >= 4
    assert counts == list(range(1, len(counts) + 1)) and counts[-1] == held
    assert snapshot is not None
    tl.restore(snapshot)
    seen = len(counts)
    while len(counts) == seen:
        coding_turn(tl, 100 + len(counts))
        tl.render("sys")
    assert counts[-1] == 3  # two summaries in the snapshot, then one more


def test_summarizer_exception_falls_back(make_tl: Callable[..., Timeline]) -> None:
    """A failing summarizer is replaced by the inventory; the stats say why."""

    class Broken:
        name = "broken"

        def summarize(self, request: SummaryRequest) -> str:
            raise RuntimeError("model down")

    tl = make_tl(
        policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1), summarizer=Broken()
    )
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    assert view.compaction is not None
    assert view.compaction.summarizer_error == "RuntimeError: model down"
    assert "\n## Goal\n" in view.blocks[0].text  # after the Active Work Reminder
    assert view.blocks[0].meta["summarizer"] == "inventory"


@pytest.mark.parametrize("reply", ["", "   "])
def test_empty_summary_falls_back(make_tl: Callable[..., Timeline], reply: str) -> None:
    """An empty summary counts as a failure."""

    class Empty:
        def summarize(self, request: SummaryRequest) -> str:
            return reply

    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1), summarizer=Empty())
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    assert view.compaction is not None and "empty" in (view.compaction.summarizer_error or "")


def test_slow_summarizer_times_out_to_fallback(make_tl: Callable[..., Timeline]) -> None:
    """A summarizer over summary_timeout_seconds falls back instead of blocking."""
    import threading

    release = threading.Event()

    class Slow:
        def summarize(self, request: SummaryRequest) -> str:
            release.wait(5)
            return "late"

    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1, summary_timeout_seconds=0.05)
    tl = make_tl(policy=policy, summarizer=Slow())
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    release.set()
    assert view.compaction is not None and "timed out" in (view.compaction.summarizer_error or "")


def test_huge_tool_result_renders_within_budget(make_tl: Callable[..., Timeline]) -> None:
    """One 50k-token tool result with an 8k budget is truncated in the render, kept whole in
    the timeline, with a marker naming its path."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=8_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("read the log"))
    c = tl.append(blocks.tool_call("read_file", {"path": "huge.log"}))
    big = tl.append(blocks.tool_result(c.call_id or "", "log line\n" * 22_300))
    assert tl.token_memo.block(big) > 50_000
    view = tl.render("sys")
    assert view.tokens <= 8_000
    assert big.path in view.truncated_paths
    shown = next(b for b in view.blocks if b.id == big.id)
    assert f"full text at {big.path}" in shown.text
    assert big.text == tl.get(big.id).text


def test_system_prompt_over_budget_is_a_typed_error(make_tl: Callable[..., Timeline]) -> None:
    """A system prompt that alone exceeds the budget raises BudgetError with the numbers."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=100))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(BudgetError) as err:
        tl.render("x" * 1_000)
    framed = system_cost(tl.token_memo, "x" * 1_000)  # with its [SYSTEM] label
    framing = framing_cost(tl.token_memo)
    assert (err.value.budget, err.value.required) == (100, framed + framing)
    assert 240 < framed < 280 and 0 < framing < 20


def test_force_sanitize_compacts_under_the_trigger(make_tl: Callable[..., Timeline]) -> None:
    """force_sanitize=True compacts even when the estimate is under the trigger, and keeps
    less than a normal compaction would."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=20_000))
    for i in range(8):
        coding_turn(tl, i)
    assert tl.render("sys").compaction is None
    before = tl.estimate("sys")
    view = tl.render("sys", force_sanitize=True)
    assert view.compaction is not None and view.compaction.reason == "forced"
    assert view.tokens < before * 0.75


def test_force_sanitize_inside_one_long_turn(make_tl: Callable[..., Timeline]) -> None:
    """With a single turn whose last exchange is too big to keep whole, forcing keeps
    only that last tool exchange."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=20_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("long job"))
    for k in range(6):
        c = tl.append(blocks.tool_call("bash", {"k": k}))
        tl.append(blocks.tool_result(c.call_id or "", "z" * (800 if k < 5 else 9_000)))
    view = tl.render("sys", force_sanitize=True)
    assert view.compaction is not None
    assert [b.type for b in view.blocks] == [
        "conv.range.summary",
        "react.tool.call",
        "react.tool.result",
    ]


def test_force_with_nothing_to_cut_still_shrinks(make_tl: Callable[..., Timeline]) -> None:
    """When no cut exists, a forced render truncates to at most 3/4 of the estimate."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=20_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("p" * 20_000))
    before = tl.estimate("sys")
    view = tl.render("sys", force_sanitize=True)
    assert view.compaction is None
    assert before * 3 // 5 < view.tokens <= before * 3 // 4


def test_never_compacts_twice_without_new_content(make_tl: Callable[..., Timeline]) -> None:
    """Re-rendering with nothing appended never compacts again (v2's thrash)."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=6))
    for i in range(10):
        coding_turn(tl, i, result_chars=1_200)
    first = tl.render("sys")
    second = tl.render("sys")
    third = tl.render("sys")
    assert first.compaction is not None
    assert (second.compaction, third.compaction) == (None, None)
    assert first.to_anthropic() == third.to_anthropic()


def test_manual_compact_reports_counts(make_tl: Callable[..., Timeline]) -> None:
    """compact() returns seed 002's counts (visible blocks before / after) and how many
    blocks the summary replaced; the old name of the count after still reads it."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=50_000))
    for i in range(6):
        coding_turn(tl, i)
    stats = tl.compact("sys", keep_recent_tokens=200)
    assert stats is not None and stats.reason == "manual"
    assert stats.original_block_count > (stats.visible_block_count or 0)
    assert stats.visible_block_count == len(tl.render("sys").blocks)
    assert stats.compacted_blocks == stats.original_block_count - stats.visible_block_count + 1
    with pytest.warns(DeprecationWarning, match="visible_block_count"):
        assert stats.compacted_block_count == stats.visible_block_count


def test_keep_recent_turns_only_when_they_fit(make_tl: Callable[..., Timeline]) -> None:
    """Six recent turns that would not fit do not block the compaction (v2 would loop)."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=3_000, keep_recent_turns=6))
    for i in range(8):
        coding_turn(tl, i, result_chars=2_000)
    view = tl.render("sys")
    assert view.compaction is not None
    assert view.tokens <= 3_000


def test_disabled_policy_never_compacts(make_tl: Callable[..., Timeline]) -> None:
    """enabled=False: no compaction even when forced; no budget checks."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=500, enabled=False))
    for i in range(5):
        coding_turn(tl, i)
    view = tl.render("sys", force_sanitize=True)
    assert (view.compaction, view.budget) == (None, None)
    assert view.tokens > 500


def test_a_failed_summarizer_is_recorded_in_the_summary_meta(
    make_tl: Callable[..., Timeline],
) -> None:
    """The summary block itself says the inventory stood in and why (the HTML view and
    a loaded timeline read it there, not from the render's stats)."""

    class Broken:
        name = "broken"

        def summarize(self, request: SummaryRequest) -> str:
            raise RuntimeError("model down")

    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    tl = make_tl(policy=policy, summarizer=Broken())
    for i in range(10):
        coding_turn(tl, i)
    summary = tl.render("sys").blocks[0]
    assert summary.meta["summarizer"] == "inventory"
    assert summary.meta["summarizer_error"] == "RuntimeError: model down"


def test_a_plan_history_never_takes_the_id_of_its_summary() -> None:
    """The summary's id is not in the ledger yet when the plan history block gets its
    id: an id factory giving one id to two sequence numbers must not make them share."""

    def paired(kind: str, seq: int) -> str:
        return f"{kind}-{(seq + 1) // 2}"

    policy = CompactionPolicy(max_tokens=1_000, keep_recent_turns=0)
    tl = Timeline("c", policy=policy, token_counter=HeuristicCounter(), id_factory=paired)
    tl.begin_turn()
    huge = "word " * 400
    made = [
        blocks.user_prompt("Fix the failing test in a.py"),
        blocks.tool_call("read_file", {"i": 0}, call_id="x0"),
        blocks.tool_result("x0", huge, tool_id="read_file"),
        blocks.plan("Fix the failing test in a.py"),
        blocks.plan(huge),
    ]
    for i, block in enumerate(made):
        tl.append(msgspec.structs.replace(block, id=f"u{i}"))
    assert tl.compact(force=False) is not None
    ids = [b.id for b in tl.blocks if b.type in (CONV_RANGE_SUMMARY, "react.plan.history")]
    assert len(ids) == 2 and len(set(ids)) == 2


def test_an_empty_summary_falls_back_to_the_inventory_text(
    make_tl: Callable[..., Timeline],
) -> None:
    """``summarize_sync`` itself stands the inventory in for an empty summary (the
    result carries its text and the reason), unless told not to fall back."""
    asked: list[SummaryRequest] = []

    class Empty:
        name = "empty"

        def summarize(self, request: SummaryRequest) -> str:
            asked.append(request)
            return "  "

    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1), summarizer=Empty())
    for i in range(10):
        coding_turn(tl, i)
    tl.render("sys")
    assert asked
    result = summarize_sync(Empty(), asked[0], None)
    assert result.text.strip() and result.error == "summarizer returned an empty summary"
    bare = summarize_sync(Empty(), asked[0], None, fallback=False)
    assert (bare.text, bare.error) == ("", "summarizer returned an empty summary")


def test_a_compaction_that_cleared_nothing_reports_no_freed_tokens(
    make_tl: Callable[..., Timeline],
) -> None:
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    stats = None
    for i in range(10):
        coding_turn(tl, i)
        stats = tl.render("sys").compaction or stats
    assert stats is not None and stats.tier == "summarize"
    assert (stats.cleared_blocks, stats.cleared_tokens) == (0, 0)


def test_a_ttl_pruning_that_was_enough_is_reported_as_the_clear_tier() -> None:
    """Pruning results past the cache TTL is the cheapest tier: the stats of a pruning
    that brought the prompt under the trigger name the "clear" tier and no summary."""
    from tests.helpers.checkpoints import ttl_timeline

    tl, clock = ttl_timeline()
    clock.now += timedelta(minutes=10)
    tl.begin_turn()
    tl.append(blocks.user_prompt("task 3"))
    stats = tl.render("sys").compaction
    assert stats is not None and stats.pruned_blocks == 2
    assert stats.tier == "clear" and stats.skipped is not None


def test_a_summary_block_is_the_systems(make_tl: Callable[..., Timeline]) -> None:
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    for i in range(10):
        coding_turn(tl, i)
    summary = tl.render("sys").blocks[0]
    assert summary.type == CONV_RANGE_SUMMARY and summary.author == "system"


def test_an_async_summarizer_in_a_sync_render_is_timed_out(
    make_tl: Callable[..., Timeline],
) -> None:
    """The policy's ``summary_timeout_seconds`` holds for an async summarizer run by a
    sync ``render()`` too: the inventory stands in, the stats say why."""

    class Slow:
        name = "slow"

        async def asummarize(self, request: SummaryRequest) -> str:
            await asyncio.sleep(3)
            return "a late summary"

    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1, summary_timeout_seconds=0.2)
    tl = make_tl(policy=policy, summarizer=Slow())
    for i in range(10):
        coding_turn(tl, i)
    stats = tl.render("sys").compaction
    assert stats is not None and stats.summarizer_error is not None
    assert "timed out" in stats.summarizer_error


class _Empty:
    def summarize(self, request: object) -> str:
        return "  "


def test_an_empty_summary_from_acompact_falls_back_like_compact() -> None:
    """Under the default ``on_summary_failure="fallback"``, an empty summary in the async
    path is replaced by the inventory, as in the sync path (passing no fallback flag
    would leave the compaction without a summary)."""
    stats = []
    for run_async in (False, True):
        tl = Timeline(
            "a",
            policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1),
            token_counter=HeuristicCounter(),
            summarizer=_Empty(),
        )
        for t in range(6):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"turn {t}: fix module {t} " + "detail " * 40))
            tl.append(blocks.assistant_completion(f"Fixed module {t}."))
        done = asyncio.run(tl.acompact("sys")) if run_async else tl.compact("sys")
        assert done is not None and "empty" in (done.summarizer_error or "")
        summary = next(b for b in tl.blocks if b.type == "conv.range.summary")
        assert summary.meta["summarizer"] == "inventory" and "## Goal" in summary.text
        stats.append(summary.text)
    assert stats[0] == stats[1]
