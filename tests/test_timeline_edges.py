"""Edges of the ``Timeline`` facade (``timeline.core``): the async compaction takes the same
arguments, defaults and checks as the sync one, and errors name the conversation. Written
against mutants that the broader tests let through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from test_compaction import coding_turn

from timeline import (
    CompactionPolicy,
    InvalidBlockError,
    Timeline,
    UnknownPathError,
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
