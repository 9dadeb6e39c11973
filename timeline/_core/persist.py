"""``Timeline.persist`` / ``load`` and their async twins over any :class:`IndexStore`.

A persist is staged (what to write, from the ledger), committed by the store (sync, or
async when the store offers ``acommit``, else in a worker thread), then handed back to
the ledger, which records the version and evicts what left the window.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from typing import Any

import attrs
import msgspec

from timeline._compaction import CompactionPolicy, policy_mapping
from timeline._model import (
    CONV_RANGE_SUMMARY,
    Block,
    ConflictError,
    IndexStore,
    NotFoundError,
    StoreError,
    TimelineSnapshot,
    tracing,
)
from timeline._model import log as _log
from timeline._state import Ledger

__all__ = [
    "Staged",
    "afetch",
    "afind",
    "apersist",
    "check_store",
    "fetch",
    "find",
    "persist",
    "stage",
]


@attrs.frozen
class Staged:
    """One persist's writes, and the timeline state they were taken from."""

    window: TimelineSnapshot
    log: list[Block]
    summaries: list[Block]
    expected_version: int
    new_ids: tuple[str, ...]
    """The blocks this persist writes (a tuple: a set of every id of a big first persist
    is built only once the commit is done, not on top of the store's own work)."""
    marker: tuple[int, int]
    """(block_seq, structure_version) when staged: unchanged means nothing moved since."""

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``commit`` / ``acommit``."""
        return {
            "expected_version": self.expected_version,
            "log": self.log,
            "summaries": self.summaries,
            "window": self.window,
        }


def _marker(ledger: Ledger) -> tuple[int, int]:
    return (ledger.state.block_seq, ledger.state.structure_version)


def stage(ledger: Ledger, conversation_id: str, policy: CompactionPolicy) -> Staged:
    """What a persist writes: the new blocks, and the window with ``policy`` kept beside
    its state (what ``Timeline.load`` continues with)."""
    new = [b for b in map(ledger.get, ledger.new_ids) if b is not None]
    window = ledger.window(conversation_id)
    state = msgspec.structs.replace(window.state, policy=policy_mapping(policy))
    return Staged(
        window=TimelineSnapshot(conversation_id, window.blocks, state),
        log=[b for b in new if b.type != CONV_RANGE_SUMMARY],
        summaries=[b for b in new if b.type == CONV_RANGE_SUMMARY],
        expected_version=ledger.version,
        new_ids=tuple(ledger.new_ids),
        marker=_marker(ledger),
    )


def _applied(
    ledger: Ledger,
    conversation_id: str,
    staged: Staged,
    version: int,
    start_ns: int,
    store: IndexStore,
) -> int:
    """Record a successful commit: the version, and evict what left the window. When the
    timeline changed while an async commit was pending, nothing is evicted (the next
    persist will) and the blocks appended meanwhile stay new."""
    _log.persisted(conversation_id, version, len(staged.log), len(staged.summaries))
    unchanged = staged.marker == _marker(ledger)
    written = frozenset(staged.new_ids)
    held = len(ledger.blocks)
    ledger.persisted(version, written, staged.window if unchanged else None, store)
    attributes: tracing.Attributes = {
        "conversation_id": conversation_id,
        "version": version,
        "log_blocks": len(staged.log),
        "summaries": len(staged.summaries),
        "window_blocks": len(staged.window.blocks),
        "evicted_blocks": held - len(ledger.blocks),
    }
    tracing.emit("timeline.persist", attributes, start_ns)
    return version


def _conflict(conversation_id: str, staged: Staged, start_ns: int) -> None:
    _log.persist_conflict(conversation_id, staged.expected_version)
    attributes: tracing.Attributes = {"conversation_id": conversation_id, "conflict": True}
    tracing.emit("timeline.persist", attributes, start_ns)


def check_store(store: Any, action: str) -> None:
    """``store`` is an index store, not the path or URL of one (which the core cannot
    open: ``index_store.open`` does)."""
    if isinstance(store, str | os.PathLike):
        where = os.fspath(store)
        raise StoreError(
            f"{action} takes an open store, not the path {where!r}: "
            f"store = index_store.open({where!r}), then {action}(store, ...)"
        )
    if not callable(getattr(store, "load_window", None)):
        raise StoreError(
            f"{action} takes an index store (index_store.open(...)), got {type(store).__name__}"
        )


def persist(
    ledger: Ledger, conversation_id: str, store: IndexStore, policy: CompactionPolicy
) -> int:
    start = time.time_ns()
    check_store(store, "persist")
    staged = stage(ledger, conversation_id, policy)
    try:
        version = store.commit(conversation_id, **staged.arguments())
    except ConflictError:
        _conflict(conversation_id, staged, start)
        raise
    return _applied(ledger, conversation_id, staged, version, start, store)


async def apersist(
    ledger: Ledger, conversation_id: str, store: IndexStore, policy: CompactionPolicy
) -> int:
    start = time.time_ns()
    check_store(store, "apersist")
    staged = stage(ledger, conversation_id, policy)
    acommit = getattr(store, "acommit", None)
    try:
        if acommit is not None:
            version: int = await acommit(conversation_id, **staged.arguments())
        else:
            call = functools.partial(store.commit, conversation_id, **staged.arguments())
            version = await asyncio.to_thread(call)
    except ConflictError:
        _conflict(conversation_id, staged, start)
        raise
    return _applied(ledger, conversation_id, staged, version, start, store)


def _found(
    conversation_id: str, found: tuple[int, TimelineSnapshot] | None
) -> tuple[int, TimelineSnapshot]:
    if found is None:
        raise NotFoundError(
            f"conversation {conversation_id!r} is not in the store",
            conversation_id=conversation_id,
        )
    return found


def find(store: IndexStore, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
    """The stored version and window of ``conversation_id`` (None if none)."""
    check_store(store, "load")
    return store.load_window(conversation_id)


def fetch(store: IndexStore, conversation_id: str) -> tuple[int, TimelineSnapshot]:
    """The stored version and window of ``conversation_id`` (``NotFoundError`` if none)."""
    return _found(conversation_id, find(store, conversation_id))


async def afind(store: IndexStore, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
    """The stored version and window of ``conversation_id`` (None if none), without
    blocking the event loop."""
    check_store(store, "aload")
    load_window = getattr(store, "aload_window", None)
    if load_window is not None:
        found: tuple[int, TimelineSnapshot] | None = await load_window(conversation_id)
        return found
    return await asyncio.to_thread(store.load_window, conversation_id)


async def afetch(store: IndexStore, conversation_id: str) -> tuple[int, TimelineSnapshot]:
    """:func:`fetch` without blocking the event loop."""
    return _found(conversation_id, await afind(store, conversation_id))
