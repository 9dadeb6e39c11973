"""``Timeline.apersist`` and ``Timeline.aload``: persistence without blocking the loop.

A store with the async API (``acommit``/``aload_window``, see
:class:`timeline.model.persistence.AsyncIndexStore`) is awaited; any other store's sync
methods run in a worker thread. Staging and applying are shared with the sync path.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

from timeline.core.persist import applied, from_window, stage
from timeline.model import log as _log
from timeline.model.errors import ConflictError
from timeline.model.persistence import IndexStore, TimelineSnapshot

if TYPE_CHECKING:
    from timeline.core.timeline import Timeline

__all__ = ["aload", "apersist"]


async def apersist(tl: Timeline, store: IndexStore) -> int:
    staged = stage(tl)
    kwargs: dict[str, Any] = {
        "expected_version": staged.expected_version,
        "log": staged.log,
        "summaries": staged.summaries,
        "window": staged.window,
    }
    acommit = getattr(store, "acommit", None)
    try:
        if acommit is not None:
            version: int = await acommit(tl.conversation_id, **kwargs)
        else:
            call = functools.partial(store.commit, tl.conversation_id, **kwargs)
            version = await asyncio.to_thread(call)
    except ConflictError:
        _log.persist_conflict(tl.conversation_id, staged.expected_version)
        raise
    return applied(tl, staged, version)


async def aload(
    cls: type[Timeline], store: IndexStore, conversation_id: str, **kwargs: Any
) -> Timeline:
    load_window = getattr(store, "aload_window", None)
    found: tuple[int, TimelineSnapshot] | None
    if load_window is not None:
        found = await load_window(conversation_id)
    else:
        found = await asyncio.to_thread(store.load_window, conversation_id)
    return from_window(cls, conversation_id, found, kwargs)
