"""Edges of the Ledger (``timeline._state``) seen through ``Timeline``: a snapshot carries the
pins; which ids count as calls after an eviction. Written against mutants that the broader
tests let through."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import index_store
from tests.helpers.conversations import coding_turn
from timeline import CompactionPolicy, OrphanToolResultError, Timeline, blocks


def test_a_snapshot_carries_the_pins(make_tl: Callable[..., Timeline]) -> None:
    """The pins (kept by the ledger apart from the state) are in the snapshot's state,
    and a timeline restored from it keeps the pinned block in view through a compaction."""
    policy = CompactionPolicy(max_tokens=2_500, keep_recent_turns=1)
    tl = make_tl(policy=policy)
    tl.begin_turn()
    rule = tl.append(blocks.user_prompt("Project rule: never touch migrations."))
    tl.pin([rule.path])
    snap = tl.snapshot()
    assert snap.state.pinned == [rule.id]
    again = make_tl(policy=policy)
    again.restore(snap)
    assert again.pinned_ids == (rule.id,)
    for i in range(8):
        coding_turn(again, i)
    view = again.render("sys")
    assert view.compaction is not None
    assert rule.id in [b.id for b in view.blocks]


def test_a_pinned_result_does_not_stand_for_its_evicted_call(
    make_tl: Callable[..., Timeline],
) -> None:
    """A pinned tool result outlives its call's eviction; after it (and after a load) a
    further result for that call id is still an orphan: only tool calls make a call id
    known, not the results that name it."""
    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    tl = make_tl(policy=policy)
    tl.begin_turn()
    call = tl.append(blocks.tool_call("bash", {"cmd": "ls"}))
    result = tl.append(blocks.tool_result(call.call_id or "", "a.py", tool_id="bash"))
    tl.pin([result.path])
    for i in range(1, 10):
        coding_turn(tl, i)
    assert tl.render("sys").compaction is not None
    store = index_store.open("memory://")
    tl.persist(store)
    ids = {b.id for b in tl.blocks}
    assert result.id in ids and call.id not in ids
    again = Timeline.load(store, tl.conversation_id, policy=policy)
    for each in (tl, again):
        with pytest.raises(OrphanToolResultError):
            each.append(blocks.tool_result(call.call_id or "", "again", tool_id="bash"))
