"""Edges of the ``Timeline`` facade (``timeline._core``): the async compaction takes the same
arguments, defaults and checks as the sync one, and errors name the conversation. Written
against mutants that the broader tests let through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers.conversations import coding_turn
from timeline import (
    CompactionPolicy,
    InvalidBlockError,
    Timeline,
    UnknownPathError,
    blocks,
)

PARITY_CASES: dict[str, tuple[int | None, dict[str, Any]]] = {
    # a budget far above the prompt: only a manual compaction cuts anything
    "defaults": (50_000, {}),
    "system": (50_000, {"system": "a system prompt of a few words"}),
    "keep": (50_000, {"keep_recent_tokens": 200}),
    "not-forced": (50_000, {"force": False}),
    "not-forced-keep": (50_000, {"force": False, "keep_recent_tokens": 200}),
    # no budget: keep_recent_tokens makes one
    "no-budget-keep": (None, {"keep_recent_tokens": 200}),
    "no-budget-keep-not-forced": (None, {"keep_recent_tokens": 200, "force": False}),
}


def _six_turns(make_tl: Callable[..., Timeline], max_tokens: int | None) -> Timeline:
    tl = make_tl(policy=CompactionPolicy(max_tokens=max_tokens))
    for i in range(6):
        coding_turn(tl, i)
    return tl


@pytest.mark.parametrize("case", list(PARITY_CASES))
def test_acompact_is_compact(make_tl: Callable[..., Timeline], case: str) -> None:
    """``acompact(**kw)`` does exactly what ``compact(**kw)`` does: the same stats and the
    same blocks, defaults included (``force=True``: a manual compaction)."""
    max_tokens, kwargs = PARITY_CASES[case]
    sync_tl = _six_turns(make_tl, max_tokens)
    async_tl = _six_turns(make_tl, max_tokens)
    sync_stats = sync_tl.compact(**kwargs)
    async_stats = asyncio.run(async_tl.acompact(**kwargs))
    assert async_stats == sync_stats
    assert async_tl.blocks == sync_tl.blocks


def test_compact_cases_differ(make_tl: Callable[..., Timeline]) -> None:
    """The parity cases are not all alike: the default compacts as a manual compaction
    with the emergency keep, ``keep_recent_tokens`` moves the cut, the system prompt is
    counted, and ``force=False`` under the trigger does nothing."""
    outcomes: dict[str, tuple[str, int] | None] = {}
    cuts: dict[str, int | None] = {}
    for case, (max_tokens, kwargs) in PARITY_CASES.items():
        stats = _six_turns(make_tl, max_tokens).compact(**kwargs)
        outcomes[case] = None if stats is None else (stats.reason, stats.tokens_before)
        cuts[case] = None if stats is None else stats.compacted_blocks
    assert outcomes["not-forced"] is None and outcomes["not-forced-keep"] is None
    assert outcomes["no-budget-keep-not-forced"] is None
    assert outcomes["defaults"] is not None and outcomes["defaults"][0] == "manual"
    assert outcomes["system"] is not None and outcomes["defaults"][1] < outcomes["system"][1]
    assert cuts["keep"] != cuts["defaults"]
    assert outcomes["no-budget-keep"] is not None and outcomes["no-budget-keep"][0] == "manual"


@pytest.mark.parametrize("method", ["compact", "acompact"])
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keep_recent_tokens": -1}, "keep_recent_tokens must be an int >= 0, got -1"),
        ({"keep_recent_tokens": "5"}, "keep_recent_tokens must be an int >= 0, got '5'"),
        ({"force": 1}, "must be a bool, got int"),
        ({"system": b"sys"}, "system must be a str, got bytes"),
    ],
)
def test_compact_arguments_are_checked(
    make_tl: Callable[..., Timeline], method: str, kwargs: dict[str, Any], message: str
) -> None:
    """Both compactions reject a bad argument with an error naming it, and change nothing."""
    tl = _six_turns(make_tl, 50_000)
    before = tl.blocks

    async def call() -> object:
        return await tl.acompact(**kwargs)

    with pytest.raises(InvalidBlockError) as err:
        if method == "compact":
            tl.compact(**kwargs)
        else:
            asyncio.run(call())
    assert message in str(err.value)
    assert tl.blocks == before


def test_plan_alias_without_a_plan_names_the_conversation(
    make_tl: Callable[..., Timeline],
) -> None:
    """``resolve_path('plan.latest')`` with no plan in memory: the error carries the
    conversation and the alias."""
    tl = make_tl("conv-7")
    coding_turn(tl, 0)
    with pytest.raises(UnknownPathError) as err:
        tl.resolve_path("plan.latest")
    assert (err.value.conversation_id, err.value.path) == ("conv-7", "plan.latest")
    assert tl.resolve_path("some.path") == "some.path"


def test_extend_names_what_it_was_given(make_tl: Callable[..., Timeline]) -> None:
    """``extend`` given one block (not an iterable of them) says so and appends nothing."""
    tl = make_tl()
    tl.begin_turn()
    with pytest.raises(InvalidBlockError, match=r"extend takes an iterable of blocks, not "):
        tl.extend(blocks.user_prompt("one"))  # type: ignore[arg-type]
    assert [b.type for b in tl.blocks] == ["turn.header"]


def _restored_twice(make_tl: Callable[..., Timeline]) -> tuple[Timeline, Timeline]:
    """A timeline snapshotted, changed (a result hidden, rendered again, two more turns
    begun) and restored to the snapshot; and a fresh timeline given the same snapshot."""
    policy = CompactionPolicy(max_tokens=6_000)
    tl = make_tl(policy=policy)
    for i in range(3):
        coding_turn(tl, i)
    tl.render("sys")
    snap = tl.snapshot()
    result = next(b for b in tl.blocks if b.type == "react.tool.result")
    tl.hide([result.path], "(hidden)")
    tl.render("sys")
    fresh = make_tl(policy=policy)
    fresh.restore(snap)
    tl.restore(snap)
    return tl, fresh


def test_restore_renders_as_a_fresh_timeline_given_the_snapshot(
    make_tl: Callable[..., Timeline],
) -> None:
    """After ``restore``, a forced render (the retry after a provider's "too long") is
    sized from the restored blocks, exactly as on a fresh timeline: the render made
    before the restore is not taken for the last one."""
    tl, fresh = _restored_twice(make_tl)
    assert (
        tl.render("sys", force_sanitize=True).to_anthropic()
        == fresh.render("sys", force_sanitize=True).to_anthropic()
    )


def test_restore_never_reuses_a_turn_id(make_tl: Callable[..., Timeline]) -> None:
    """Turns begun after the snapshot keep their ids: the next turn after the restore
    gets a new one (a reused id would merge two turns in the store's turn log)."""
    tl = make_tl()
    coding_turn(tl, 0)
    snap = tl.snapshot()
    coding_turn(tl, 1)
    coding_turn(tl, 2)
    used = {b.turn_id for b in tl.blocks}
    tl.restore(snap)
    assert tl.begin_turn() not in used


def test_clear_forgets_the_turn_and_the_calibration(make_tl: Callable[..., Timeline]) -> None:
    """After ``clear`` no turn is open and the provider's offset from the last usage report
    is gone: the next estimates are those of a fresh timeline."""
    tl = make_tl()
    coding_turn(tl, 0)
    tl.record_usage(prompt_tokens=tl.render("sys").tokens + 500)
    tl.clear()
    assert tl.current_turn_id == "" and tl.blocks == ()
    fresh = make_tl()
    for each in (tl, fresh):
        each.begin_turn()
        each.append(blocks.user_prompt("start again"))
    assert tl.estimate("sys") == fresh.estimate("sys")
    assert tl.render("sys").tokens == fresh.render("sys").tokens


@pytest.mark.parametrize(
    "kwargs", [{}, {"system": "sys"}, {"force_sanitize": True}, {"system": "sys", "tail": ()}]
)
def test_arender_is_render(make_tl: Callable[..., Timeline], kwargs: dict[str, Any]) -> None:
    """``arender(**kw)`` renders what ``render(**kw)`` does, defaults included (no system
    prompt, not forced)."""
    policy = CompactionPolicy(max_tokens=3_000)
    sync_tl, async_tl = make_tl(policy=policy), make_tl(policy=policy)
    for tl in (sync_tl, async_tl):
        for i in range(4):
            coding_turn(tl, i)
    sync_view = sync_tl.render(**kwargs)
    async_view = asyncio.run(async_tl.arender(**kwargs))
    assert async_view.to_anthropic() == sync_view.to_anthropic()
    assert (async_view.tokens, async_view.compaction) == (sync_view.tokens, sync_view.compaction)


def test_forced_and_unforced_renders_differ(make_tl: Callable[..., Timeline]) -> None:
    """The ``arender`` cases above are not all alike: forcing compacts a timeline under
    its trigger."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=3_000))
    for i in range(4):
        coding_turn(tl, i)
    assert tl.render().compaction is None
    forced = tl.render(force_sanitize=True).compaction
    assert forced is not None and forced.reason == "forced"


def test_arender_checks_force_sanitize(make_tl: Callable[..., Timeline]) -> None:
    tl = make_tl()
    coding_turn(tl, 0)
    with pytest.raises(InvalidBlockError, match="force_sanitize must be a bool, got int"):
        asyncio.run(tl.arender(force_sanitize=1))  # type: ignore[arg-type]


def test_estimate_defaults_to_no_system_prompt(make_tl: Callable[..., Timeline]) -> None:
    """``estimate()`` is the estimate of ``render()``: no system prompt, no tail."""
    tl = make_tl()
    coding_turn(tl, 0)
    assert tl.estimate() == tl.estimate("") == tl.render().tokens < tl.estimate("sys")
