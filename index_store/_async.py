"""The async store API for the memory and SQLite backends, written once.

``acommit``, ``aload_window``, ``aget_block``, ``aread``, ``aturn_log`` and ``asearch``
do what their sync namesakes do. The memory store answers inline (nothing blocks);
SQLite runs each call in a worker thread so the event loop never waits on disk or on
the database lock. PostgreSQL has its own, on psycopg's async connections
(:mod:`index_self._pg_async`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from timeline._model import Block, IndexStore, SearchHit, TimelineSnapshot

__all__ = ["InlineAsync", "ThreadedAsync"]

T = TypeVar("T")


class _SyncStore(IndexStore, Protocol):
    """A store with the sync protocol and a way to await its calls."""

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T: ...


class _AsyncVia:
    """The async methods; subclasses say how a sync call is made awaitable (``_run``)."""

    async def acommit(
        self: _SyncStore,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int:
        return await self._run(
            self.commit,
            conversation_id,
            expected_version=expected_version,
            log=log,
            summaries=summaries,
            window=window,
        )

    async def aload_window(
        self: _SyncStore, conversation_id: str
    ) -> tuple[int, TimelineSnapshot] | None:
        return await self._run(self.load_window, conversation_id)

    async def aget_block(self: _SyncStore, conversation_id: str, block_id: str) -> Block:
        return await self._run(self.get_block, conversation_id, block_id)

    async def aread(self: _SyncStore, conversation_id: str, path: str) -> list[Block]:
        return await self._run(self.read, conversation_id, path)

    async def aturn_log(
        self: _SyncStore, conversation_id: str, turn_id: str | None = None
    ) -> list[Block]:
        return await self._run(self.turn_log, conversation_id, turn_id)

    async def asearch(
        self: _SyncStore, conversation_id: str, query: str, limit: int = 10
    ) -> list[SearchHit]:
        return await self._run(self.search, conversation_id, query, limit)


class InlineAsync(_AsyncVia):
    """For stores whose calls never block (the memory store)."""

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return fn(*args, **kwargs)


class ThreadedAsync(_AsyncVia):
    """For stores whose calls block (SQLite): each runs in a worker thread."""

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))
