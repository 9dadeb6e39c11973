"""Divergences the differential harness found in code it does not own (#23).

Each test is the smallest reproduction of one, marked ``xfail(strict=True)``: it fails
while the bug stands and turns the suite red the day it is fixed, so the marker goes and,
with it, the matching tolerance in ``tests/differential.py`` (``KNOWN``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from timeline import CompactionPolicy, HeuristicCounter, PinnedOverBudgetError, Timeline, blocks

HUGE = "lorem ipsum dolor sit amet, " * 720  # ~20,000 characters


def _at_noon() -> datetime:
    return datetime(2026, 1, 1, 12, tzinfo=UTC)


def _pair(policy: CompactionPolicy) -> tuple[Timeline, Timeline]:
    """An incremental timeline and the reference, built alike."""
    inc, ref = (
        Timeline(
            "c", policy=policy, token_counter=HeuristicCounter(), clock=_at_noon, incremental=i
        )
        for i in (True, False)
    )
    return inc, ref


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="render/pipeline.py _apply: tokens_after is taken from the rebuilt stream while "
    "the new react.plan.history block still holds its upper bound (lead's file)",
)
def test_compaction_stats_count_tokens_after_exactly() -> None:
    """A compaction that folds an earlier plan reports the same tokens_after in both
    engines (the incremental one reported the plan history block's upper bound)."""
    inc, ref = _pair(CompactionPolicy(max_tokens=1_000, keep_recent_turns=0))
    for tl in (inc, ref):
        tl.begin_turn()
        tl.append(blocks.user_prompt("Fix the failing test in a.py"))
        tl.append(blocks.tool_call("read_file", {"i": 0}, call_id="x0"))
        tl.append(blocks.tool_result("x0", HUGE, tool_id="read_file"))
        tl.append(blocks.plan("Fix the failing test in a.py"))
        tl.append(blocks.plan(HUGE))
    a, b = inc.compact(force=False), ref.compact(force=False)
    assert a is not None and b is not None
    assert any(x.type == "react.plan.history" for x in inc.blocks)
    assert b.tokens_after == a.tokens_after


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="core/timeline.py pin(): pins the blocks of a path one by one and raises on the "
    "first that does not fit, keeping the earlier ones pinned (lead's file)",
)
def test_a_refused_pin_changes_nothing() -> None:
    """Pinning a path whose second block would go over the budget raises and leaves the
    timeline as it was (the first block of the path stayed pinned)."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1_000), token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.plan("short plan"))
    tl.append(blocks.plan(HUGE))  # same path: ar:t1.react.plan
    before = tl.snapshot()
    with pytest.raises(PinnedOverBudgetError):
        tl.pin(["ar:t1.react.plan"])
    assert before == tl.snapshot()


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="core/timeline.py pin(): the refused pin keeps b2 pinned without bumping the "
    "structure version, so the incremental stream never shows it (lead's file)",
)
def test_after_a_refused_pin_both_engines_render_alike() -> None:
    """After a pin refused half-way, the incremental engine renders what the reference
    renders (it left out the block that stayed pinned, and estimated 204 vs 219)."""
    inc, ref = _pair(CompactionPolicy(max_tokens=1_000, keep_recent_turns=0))
    for tl in (inc, ref):
        tl.begin_turn()
        tl.append(blocks.user_prompt("Fix the failing test in a.py"))
        tl.append(blocks.user_prompt(HUGE))
        tl.append(blocks.user_prompt("Fix the failing test in a.py"))
        tl.render("You are a careful assistant.")  # compacts: b2 and b3 summarized
        with pytest.raises(PinnedOverBudgetError):
            tl.pin(["ar:t1.user.prompt"])  # b2 fits, b3 does not
    assert ref.estimate() == inc.estimate()
    assert [b.id for b in ref.render().blocks] == [b.id for b in inc.render().blocks]


@pytest.mark.xfail(
    strict=True,
    raises=PinnedOverBudgetError,
    reason="core/timeline.py _commit_append bumps the structure only when a summary exists, "
    "so a prompt that a new turn stops carrying stays in the stream's pinned_tokens "
    "(state/stream.py) and the render refuses a prompt that fits (lead's files)",
)
def test_a_prompt_carried_no_more_does_not_count_as_pinned() -> None:
    """A follow-up prompt (sent while a call waited) is carried only during its turn;
    after the next turn begins, the render truncates it like the reference instead of
    raising PinnedOverBudgetError (5,077 tokens of "pinned" blocks)."""
    inc, ref = _pair(CompactionPolicy(max_tokens=1_000, keep_recent_turns=0))
    for tl in (inc, ref):
        tl.begin_turn()
        tl.append(blocks.user_prompt("Fix the failing test in a.py"))
        tl.append(blocks.tool_call("read_file", {"i": 0}))
        tl.append(blocks.user_prompt(HUGE))  # a follow-up while the call waits: carried
        tl.estimate()  # the stream takes it in as carried
        tl.begin_turn()  # carried no more
    expected = ref.render("")
    assert expected.truncated_paths == ("ar:t1.user.prompt",)
    assert inc.render("").tokens == expected.tokens


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="state/stream.py + core/timeline.py: the stream adds a carried block's cost to "
    "pinned_tokens when it takes the block in; a newer plan ends the older one's carry "
    "without a rebuild when there is no summary, so the older plan's cost (an upper bound "
    "here) stays counted as pinned (lead's files)",
)
def test_only_the_newest_plan_counts_as_pinned() -> None:
    """PinnedOverBudgetError names the same figure in both engines: the incremental one
    still counted the superseded plan's upper bound (5,087 vs 5,046 tokens)."""
    inc, ref = _pair(CompactionPolicy(max_tokens=1_000, keep_recent_turns=0))
    errors = []
    for tl in (inc, ref):
        tl.begin_turn()
        tl.append(blocks.user_prompt("Fix the failing test in a.py"))
        tl.append(blocks.plan("Fix the failing test in a.py"))
        tl.compact(force=False)  # nothing to do, but the stream takes the plan in
        tl.append(blocks.plan(HUGE))  # now the carried plan
        with pytest.raises(PinnedOverBudgetError) as raised:
            tl.render("You are a careful assistant.")
        errors.append(raised.value.required)
    assert errors[1] == errors[0]
