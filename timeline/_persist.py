"""``Timeline.persist`` and ``Timeline.load`` over any :class:`IndexStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from timeline.block import CONV_RANGE_SUMMARY
from timeline.errors import NotFoundError
from timeline.persistence import IndexStore, TimelineSnapshot

if TYPE_CHECKING:
    from timeline.timeline import Timeline

__all__ = ["load", "persist", "window_of"]


def window_of(tl: Timeline) -> TimelineSnapshot:
    """The live window: pinned blocks from before the latest summary, then the summary
    onward (everything when there is no summary), with the state to continue from."""
    blocks = tl._blocks
    s = tl._summary_index
    pinned = [b for b in blocks[:s] if b.id in tl._pinned] if s >= 0 else []
    window = pinned + blocks[max(s, 0) :]
    ids = {b.id for b in window}
    state = msgspec.structs.replace(tl._state, pinned=[i for i in tl._pinned if i in ids])
    return TimelineSnapshot(tl.conversation_id, window, state)


def persist(tl: Timeline, store: IndexStore) -> int:
    window = window_of(tl)
    new = [tl._by_id[i] for i in tl._new_ids if i in tl._by_id]
    log = [b for b in new if b.type != CONV_RANGE_SUMMARY]
    summaries = [b for b in new if b.type == CONV_RANGE_SUMMARY]
    version = store.commit(
        tl.conversation_id,
        expected_version=tl._version,
        log=log,
        summaries=summaries,
        window=window,
    )
    tl._version = version
    tl._new_ids = []
    if len(window.blocks) != len(tl._blocks):
        tl._load_blocks(
            window.blocks, msgspec.structs.replace(tl._state, pinned=window.state.pinned)
        )
    return version


def load(cls: type[Timeline], store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
    found = store.load_window(conversation_id)
    if found is None:
        raise NotFoundError(
            f"conversation {conversation_id!r} is not in the store",
            conversation_id=conversation_id,
        )
    version, snapshot = found
    tl = cls(conversation_id, **kwargs)
    tl._load_blocks(snapshot.blocks, snapshot.state)
    tl._version = version
    return tl
