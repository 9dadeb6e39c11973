"""An unforced render whose compaction leaves it over budget compacts once more, as a
forced render would, instead of raising: the summary can come out larger than the room
the planner reserved for it beside the kept turns (found by a random run of
``test_render_invariants``: 601 tokens under a 600 budget, where a forced render fits in
415). A forced render that cannot shrink still raises: that is
``tests/adversarial/test_force_sanitize.py``, which fails if forced renders escalate too."""

from __future__ import annotations

import asyncio

import pytest

from timeline import CompactionPolicy, HeuristicCounter, SummaryRequest, Timeline, blocks

STEPS = [(1, 114, True), (3, 111, True), (3, 111, True), (3, 327, False)]


class _Full:
    """A summary as long as its cap allows: more than the room the planner reserves for
    it beside the kept turns."""

    def summarize(self, request: SummaryRequest) -> str:
        return " ".join(f"fact{i}" for i in range(request.max_tokens))


def _timeline(incremental: bool) -> Timeline:
    policy = CompactionPolicy(max_tokens=600, keep_recent_turns=1)
    return Timeline(
        "p",
        policy=policy,
        token_counter=HeuristicCounter(),
        incremental=incremental,
        summarizer=_Full(),
    )


def _step(tl: Timeline, n_calls: int, size: int, new_turn: bool) -> None:
    if new_turn:
        tl.begin_turn()
        tl.append(blocks.user_prompt("do the thing " * 5))
    calls = [tl.append(blocks.tool_call("bash", {"i": i})) for i in range(n_calls)]
    for c in calls:
        tl.append(blocks.tool_result(c.call_id or "", "r" * (size // max(1, n_calls))))
    tl.append(blocks.assistant_completion("ok"))


@pytest.mark.parametrize("incremental", [True, False], ids=["incremental", "reference"])
def test_a_render_over_budget_after_its_compaction_compacts_again(incremental: bool) -> None:
    tl = _timeline(incremental)
    tl.begin_turn()
    for step in STEPS[:-1]:
        _step(tl, *step)
        tl.render("system")
    _step(tl, *STEPS[-1])
    view = tl.render("system")
    assert view.tokens <= 600
    assert view.compaction is not None and view.compaction.split_turn
    again = tl.render("system")
    assert again.compaction is None and again.tokens == view.tokens


def test_arender_compacts_again_too() -> None:
    tl = _timeline(True)
    tl.begin_turn()
    for step in STEPS[:-1]:
        _step(tl, *step)
        asyncio.run(tl.arender("system"))
    _step(tl, *STEPS[-1])
    view = asyncio.run(tl.arender("system"))
    assert view.tokens <= 600 and view.compaction is not None
