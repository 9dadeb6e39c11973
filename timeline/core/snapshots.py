"""Replacing what a timeline holds: a snapshot restored, everything cleared. The counters
never go back, so an id is never reused for a different block."""

from __future__ import annotations

import msgspec

from timeline.model.persistence import TimelineSnapshot
from timeline.state.ledger import Ledger

__all__ = ["clear", "restore"]


def restore(ledger: Ledger, snapshot: TimelineSnapshot) -> None:
    """``snapshot`` (already checked) in place of everything; its blocks count as new for
    the next persist."""
    now = ledger.state
    state = msgspec.structs.replace(
        snapshot.state,
        block_seq=max(snapshot.state.block_seq, now.block_seq),
        turn_seq=max(snapshot.state.turn_seq, now.turn_seq),
        structure_version=max(snapshot.state.structure_version, now.structure_version),
    )
    ledger.reset(snapshot.blocks, state, new_ids=[b.id for b in snapshot.blocks])
    ledger.bump()


def clear(ledger: Ledger) -> None:
    """Every block dropped from memory; the counters go on."""
    state = msgspec.structs.replace(
        ledger.state, current_turn_id="", pinned=[], usage=None, compacted_at_seq=-1
    )
    ledger.reset([], state, new_ids=())
    ledger.bump()
