"""``Timeline.persist`` and ``Timeline.load`` over any :class:`IndexStore`.

A persist is staged (what to write), committed by the store (sync or async), then
applied to the timeline; the async twins in :mod:`timeline.core.apersist` reuse both halves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from timeline.model import log as _log
from timeline.model.block import CONV_RANGE_SUMMARY, Block
from timeline.model.errors import ConflictError, NotFoundError
from timeline.model.persistence import IndexStore, TimelineSnapshot

if TYPE_CHECKING:
    from timeline.core.timeline import Timeline

__all__ = ["Staged", "applied", "from_window", "load", "persist", "stage", "window_of"]


def window_of(tl: Timeline) -> TimelineSnapshot:
    """The live window: pinned blocks from before the latest summary, then the summary
    onward (everything when there is no summary), with the state to continue from."""
    blocks = tl._blocks
    s = tl._summary_index
    pinned = [b for b in blocks[:s] if b.id in tl._carried] if s >= 0 else []
    window = pinned + blocks[max(s, 0) :]
    ids = {b.id for b in window}
    state = msgspec.structs.replace(tl._state, pinned=[i for i in tl._pinned if i in ids])
    return TimelineSnapshot(tl.conversation_id, window, state)


@attrs.frozen
class Staged:
    """One persist's writes, and the timeline state they were taken from."""

    window: TimelineSnapshot
    log: list[Block]
    summaries: list[Block]
    expected_version: int
    new_ids: frozenset[str]
    marker: tuple[int, int]
    """(block_seq, structure_version) when staged: unchanged means nothing moved since."""


def stage(tl: Timeline) -> Staged:
    new = [tl._by_id[i] for i in tl._new_ids if i in tl._by_id]
    return Staged(
        window=window_of(tl),
        log=[b for b in new if b.type != CONV_RANGE_SUMMARY],
        summaries=[b for b in new if b.type == CONV_RANGE_SUMMARY],
        expected_version=tl._version,
        new_ids=frozenset(tl._new_ids),
        marker=(tl._state.block_seq, tl._state.structure_version),
    )


def applied(tl: Timeline, staged: Staged, version: int) -> int:
    """Record a successful commit: the version, and evict what left the window. When the
    timeline changed while an async commit was pending, nothing is evicted (the next
    persist will) and the blocks appended meanwhile stay new."""
    tl._version = version
    tl._new_ids = [i for i in tl._new_ids if i not in staged.new_ids]
    _log.persisted(tl.conversation_id, version, len(staged.log), len(staged.summaries))
    unchanged = staged.marker == (tl._state.block_seq, tl._state.structure_version)
    window = staged.window
    if unchanged and len(window.blocks) != len(tl._blocks):
        tl._load_blocks(
            window.blocks, msgspec.structs.replace(tl._state, pinned=window.state.pinned)
        )
    return version


def persist(tl: Timeline, store: IndexStore) -> int:
    staged = stage(tl)
    try:
        version = store.commit(
            tl.conversation_id,
            expected_version=staged.expected_version,
            log=staged.log,
            summaries=staged.summaries,
            window=staged.window,
        )
    except ConflictError:
        _log.persist_conflict(tl.conversation_id, staged.expected_version)
        raise
    return applied(tl, staged, version)


def from_window(
    cls: type[Timeline],
    conversation_id: str,
    found: tuple[int, TimelineSnapshot] | None,
    kwargs: dict[str, Any],
) -> Timeline:
    """The timeline for a stored window (``load_window``'s result)."""
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


def load(cls: type[Timeline], store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
    return from_window(cls, conversation_id, store.load_window(conversation_id), kwargs)
