"""A reloaded timeline compacts with the policy it was persisted with
(``timeline._compaction.stored_policy``): ``Timeline.load`` without ``policy=``."""

from __future__ import annotations

import asyncio
import shutil
import warnings
from pathlib import Path

import msgspec
import pytest

import index_store
from tests.helpers.clock import FixedClock
from tests.helpers.conversations import coding_turn
from timeline import (
    ClearingPolicy,
    CompactionPolicy,
    HeuristicCounter,
    NativeCompaction,
    NoBudgetWarning,
    Timeline,
)

DATA = Path(__file__).parent.parent / "data"

POLICY = CompactionPolicy(
    max_tokens=3_000,
    keep_ratio=0.5,
    keep_recent_turns=1,
    clearing=ClearingPolicy(keep_tool_results=1, exclude_tools=("bash",)),
    tool_classification={"cat": "read"},
)


def persisted(store: index_store.MemoryStore, policy: CompactionPolicy = POLICY) -> Timeline:
    tl = Timeline("c", policy=policy, token_counter=HeuristicCounter(), clock=FixedClock())
    for i in range(2):
        coding_turn(tl, i)
    tl.render("sys")
    tl.persist(store)
    return tl


def test_load_without_a_policy_continues_with_the_stored_one() -> None:
    """Every way of loading, given no ``policy=``, gets the policy the timeline persisted."""
    store = index_store.open("memory://")
    persisted(store)
    kwargs = {"token_counter": HeuristicCounter()}
    assert Timeline.load(store, "c", **kwargs).policy == POLICY
    assert Timeline.load_or_create(store, "c", **kwargs).policy == POLICY
    assert asyncio.run(Timeline.aload(store, "c", **kwargs)).policy == POLICY
    assert asyncio.run(Timeline.aload_or_create(store, "c", **kwargs)).policy == POLICY


@pytest.mark.parametrize(
    "policy",
    [
        CompactionPolicy(),
        CompactionPolicy(model="gpt-4o", reserve_tokens=1_000, enabled=False),
        CompactionPolicy(max_tokens=60_000, native=NativeCompaction(provider="anthropic")),
        CompactionPolicy(max_tokens=8_000, cache_ttl_seconds=300.0, on_summary_failure="skip"),
    ],
)
def test_every_kind_of_policy_comes_back_equal(policy: CompactionPolicy) -> None:
    """Windows, models, native compaction and failure modes survive the store."""
    store = index_store.open("memory://")
    persisted(store, policy)
    assert Timeline.load(store, "c", token_counter=HeuristicCounter()).policy == policy


def test_a_reloaded_agent_keeps_compacting_without_a_warning() -> None:
    """A timeline loaded without ``policy=`` compacts when it passes its stored trigger and
    never warns that it has no budget."""
    store = index_store.open("memory://")
    persisted(store)
    tl = Timeline.load(store, "c", token_counter=HeuristicCounter(), clock=FixedClock())
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoBudgetWarning)
        compactions = []
        for i in range(2, 12):
            coding_turn(tl, i)
            view = tl.render("sys")
            compactions.append(view.compaction)
            assert view.tokens <= 3_000
    assert any(c is not None for c in compactions)


def test_an_explicit_policy_wins_and_is_stored_next() -> None:
    """``policy=`` still replaces the stored policy, and the next persist stores it."""
    store = index_store.open("memory://")
    persisted(store)
    other = CompactionPolicy(max_tokens=9_000)
    tl = Timeline.load(store, "c", policy=other, token_counter=HeuristicCounter())
    assert tl.policy == other
    coding_turn(tl, 5)
    tl.persist(store)
    assert Timeline.load(store, "c", token_counter=HeuristicCounter()).policy == other


def test_the_stored_policy_is_not_part_of_the_timeline_state() -> None:
    """A loaded timeline's snapshot is what was persisted, with no policy in its state."""
    store = index_store.open("memory://")
    before = persisted(store).snapshot()
    after = Timeline.load(store, "c", token_counter=HeuristicCounter()).snapshot()
    assert after.state.policy is None
    assert after == before


def test_a_new_timeline_without_a_policy_has_the_default() -> None:
    """``load_or_create`` of a conversation the store does not have starts with the default
    policy when none is given."""
    store = index_store.open("memory://")
    assert Timeline.load_or_create(store, "new").policy == CompactionPolicy()


def test_a_window_written_before_policies_were_kept_uses_its_budget(tmp_path: Path) -> None:
    """A store written by an older version has only the last render's budget and trigger:
    the loaded policy compacts at that budget and trigger."""
    shutil.copy(DATA / "store_v3.sqlite", tmp_path / "old.db")
    store = index_store.open(str(tmp_path / "old.db"))
    tl = Timeline.load(store, "conv-a", token_counter=HeuristicCounter())
    assert (tl.policy.budget, tl.policy.trigger_ratio) == (1_500, 0.9)
    store.close()


@pytest.mark.parametrize("stored", [{"max_tokens": "many"}, {"a_field_from_the_future": 1}])
def test_an_unreadable_stored_policy_falls_back_to_the_budget(stored: dict[str, object]) -> None:
    """A stored policy this version cannot read (bad value, a newer field) does not stop
    the load: the policy is rebuilt from the last render's budget and trigger."""
    store = index_store.open("memory://")
    persisted(store)
    found = store.load_window("c")
    assert found is not None
    version, window = found
    forged = msgspec.structs.replace(window.state, policy=stored)
    store.commit(
        "c",
        expected_version=version,
        log=[],
        summaries=[],
        window=msgspec.structs.replace(window, state=forged),
    )
    tl = Timeline.load(store, "c", token_counter=HeuristicCounter())
    assert tl.policy == CompactionPolicy(max_tokens=3_000)
