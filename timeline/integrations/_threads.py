"""One timeline per conversation id, loaded from the store on first use (shared by the
framework adapters)."""

from __future__ import annotations

from typing import Any

import attrs

from timeline.compaction.policy import CompactionPolicy
from timeline.core.timeline import Timeline
from timeline.model.errors import NotFoundError
from timeline.model.persistence import IndexStore

__all__ = ["TimelineCache", "open_store"]


def open_store(store: IndexStore | str) -> IndexStore:
    """A store object, or the store at a URL (``sqlite:///agent.db``...)."""
    if isinstance(store, str):
        import index_store

        return index_store.open(store)
    return store


@attrs.define
class TimelineCache:
    """Timelines by conversation id; a miss loads the persisted one or starts a new one
    with the adapter's policy and keywords."""

    store: IndexStore
    policy: CompactionPolicy
    kwargs: dict[str, Any] = attrs.field(factory=dict)
    _timelines: dict[str, Timeline] = attrs.field(factory=dict, init=False)

    def _new(self, conversation_id: str) -> Timeline:
        return Timeline(conversation_id, policy=self.policy, **self.kwargs)

    def get(self, conversation_id: str) -> Timeline:
        tl = self._timelines.get(conversation_id)
        if tl is None:
            try:
                tl = Timeline.load(self.store, conversation_id, policy=self.policy, **self.kwargs)
            except NotFoundError:
                tl = self._new(conversation_id)
            self._timelines[conversation_id] = tl
        return tl

    async def aget(self, conversation_id: str) -> Timeline:
        tl = self._timelines.get(conversation_id)
        if tl is None:
            try:
                tl = await Timeline.aload(
                    self.store, conversation_id, policy=self.policy, **self.kwargs
                )
            except NotFoundError:
                tl = self._new(conversation_id)
            self._timelines[conversation_id] = tl
        return tl

    def forget(self, conversation_id: str) -> None:
        """Drop the cached timeline (the next ``get`` reloads it from the store)."""
        self._timelines.pop(conversation_id, None)
