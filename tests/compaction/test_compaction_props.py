"""Property tests: whatever the timeline and budget, the rendered prompt is valid."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timeline import BudgetError, CompactionPolicy, HeuristicCounter, Timeline, blocks

STEPS = st.lists(
    st.tuples(
        st.integers(0, 3),  # tool calls in this step (parallel)
        st.integers(0, 4_000),  # result size
        st.booleans(),  # new turn first
        st.booleans(),  # force_sanitize on this render
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, budget=st.integers(600, 8_000), recent=st.integers(0, 6))
def test_render_invariants(steps: list[Any], budget: int, recent: int) -> None:
    """After every render: within budget; no tool result without its call in the visible
    stream; every appended block visible or covered by the latest summary; a second
    render without appends never compacts; a forced render shrinks or raises BudgetError."""
    tl = Timeline(
        "p",
        policy=CompactionPolicy(max_tokens=budget, keep_recent_turns=recent),
        token_counter=HeuristicCounter(),
    )
    appended: list[Any] = []
    tl.begin_turn()
    for n_calls, size, new_turn, force in steps:
        if new_turn:
            tl.begin_turn()
            appended.append(tl.append(blocks.user_prompt("do the thing " * 5)))
        calls = [tl.append(blocks.tool_call("bash", {"i": i})) for i in range(n_calls)]
        appended += calls
        for c in calls:
            appended.append(
                tl.append(blocks.tool_result(c.call_id or "", "r" * (size // max(1, n_calls))))
            )
        appended.append(tl.append(blocks.assistant_completion("ok")))
        try:
            view = tl.render("system", force_sanitize=force)
        except BudgetError:
            assert force  # the forced render could not shrink by a quarter
            view = tl.render("system")
        assert view.tokens <= budget
        visible = {b.id for b in view.blocks}
        calls_seen: set[str | None] = set()
        for b in view.blocks:
            if b.type == "react.tool.call":
                calls_seen.add(b.call_id)
            elif b.type == "react.tool.result":
                assert b.call_id in calls_seen
        summary = view.blocks[0] if view.blocks[0].type == "conv.range.summary" else None
        covered = set(summary.meta["covered_turn_ids"]) if summary else set()
        for b in appended:
            assert b.id in visible or b.turn_id in covered
        again = tl.render("system")
        assert again.compaction is None
        assert again.tokens <= budget
