"""The typed writes of a timeline's persisted state that derive nothing: one method per
thing a render, a usage report or a failed compaction changes (the :class:`Ledger`
that owns the state has them; nothing else writes it)."""

from __future__ import annotations

import msgspec

from timeline._model import (
    CacheBreak,
    CacheState,
    LastRender,
    TimelineState,
    UsageRecord,
)

__all__ = ["StateWrites"]


class StateWrites:
    """The :class:`~timeline._state.ledger.Ledger`'s writes of fields of its persisted
    state that no index derives from."""

    _state: TimelineState

    def rendered(self, cache: CacheState, last: LastRender) -> None:
        """A render finished: the cache checkpoints it leaves for the next one, and what
        it was run with."""
        self._state = msgspec.structs.replace(self._state, cache=cache, last_render=last)

    def usage_reported(self, usage: UsageRecord) -> None:
        """The provider's usage report of the last render (the calibration of the next
        estimates)."""
        self._state = msgspec.structs.replace(self._state, usage=usage)

    def cache_broke(self, found: CacheBreak, keep: int) -> None:
        """A cache break was found: kept with the ``keep - 1`` latest before it."""
        kept = [*self._state.cache_breaks[-(keep - 1) :], found] if keep > 1 else [found]
        self._state = msgspec.structs.replace(self._state, cache_breaks=kept)

    def hold_compaction(self) -> None:
        """A compaction failed: none is tried again before something is appended (the
        compaction marker moves to the current ``block_seq``)."""
        state = self._state
        self._state = msgspec.structs.replace(state, compacted_at_seq=state.block_seq)
