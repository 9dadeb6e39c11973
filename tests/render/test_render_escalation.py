"""An unforced render whose compaction leaves it over budget compacts once more, as a
forced render would, instead of raising: the summary can come out larger than the room
the planner reserved for it beside the kept turns (found by a random run of
``test_render_invariants``: 601 tokens under a 600 budget, where a forced render fits in
415). A forced render that cannot shrink still raises: that is
``tests/adversarial/test_force_sanitize.py``, which fails if forced renders escalate too."""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.escalation import STEPS, _step, _timeline


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


def test_an_escalated_arender_renders_what_render_does() -> None:
    """The async escalation finishes as the sync one (an unforced finish): the same
    prompt, and the next render compacts nothing more."""
    views = []
    for run_async in (False, True):
        tl = _timeline(True)
        tl.begin_turn()
        for step in STEPS[:-1]:
            _step(tl, *step)
            asyncio.run(tl.arender("system")) if run_async else tl.render("system")
        _step(tl, *STEPS[-1])
        view = asyncio.run(tl.arender("system")) if run_async else tl.render("system")
        again = tl.render("system")
        assert again.compaction is None and again.tokens == view.tokens
        views.append((view.tokens, [b.text for b in view.blocks], view.to_anthropic()))
    assert views[0] == views[1]
