"""Edges of the Ledger (``timeline.state``) seen through ``Timeline``: a snapshot carries the
pins. Written against mutants that the broader tests let through."""

from __future__ import annotations

from collections.abc import Callable

from test_compaction import coding_turn

from timeline import CompactionPolicy, Timeline, blocks


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
