"""One timeline per conversation id, shared safely by the framework adapters.

Three things every adapter needs from a persisted conversation:

* a **lock** per (store, conversation) for the whole process, so threads, event loops
  and several adapter objects on the same id take turns (as ``SQLiteSession`` does with
  its per-file lock);
* a **fresh** timeline: the cached one, reloaded when the store's version moved (another
  instance or worker wrote the conversation);
* a **commit** that re-applies the caller's change to a reloaded timeline when the
  store says another writer got there first, so no item is ever lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator
from typing import Any, TypeVar

import attrs

from timeline._compaction import CompactionPolicy
from timeline._core import Timeline, afetch, fetch
from timeline._model import ConflictError, IndexStore, NotFoundError

__all__ = ["ConversationLock", "TimelineCache", "lock_for", "open_store", "store_key"]

T = TypeVar("T")

RETRIES = 50
"""Attempts at a commit before the last conflict is raised (nothing of the call written):
each failed attempt means another writer committed, so only heavy cross-process
contention exhausts them."""


def open_store(store: IndexStore | str) -> IndexStore:
    """A store object, or the store at a URL (``sqlite:///agent.db``...)."""
    if isinstance(store, str):
        import index_store

        return index_store.open(store)
    return store


def store_key(store: IndexStore | str) -> Hashable:
    """What identifies a store for locking: its URL when given one, else the object."""
    return ("url", store) if isinstance(store, str) else ("object", id(store))


class ConversationLock:
    """A lock for one conversation that works across threads and event loops.

    Async holders first queue on an ``asyncio.Lock`` of their own loop (so tasks of one
    loop never tie up threads), then take the process-wide thread lock; waiting for it
    happens in a helper thread, never blocking the loop or the loop's executor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._guard = threading.Lock()
        self._loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock from synchronous code (never from inside a running loop)."""
        with self._lock:
            yield

    @contextlib.asynccontextmanager
    async def ahold(self) -> AsyncIterator[None]:
        """Hold the lock from a coroutine."""
        loop = asyncio.get_running_loop()
        with self._guard:
            local = self._loop_locks.setdefault(loop, asyncio.Lock())
        async with local:
            await self._acquire(loop)
            try:
                yield
            finally:
                self._lock.release()

    async def _acquire(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._lock.acquire(blocking=False):
            return
        done: asyncio.Future[None] = loop.create_future()

        def wait() -> None:
            self._lock.acquire()
            try:
                loop.call_soon_threadsafe(_granted, done, self._lock)
            except RuntimeError:  # the loop closed meanwhile: nobody will hold it
                self._lock.release()

        threading.Thread(target=wait, name="timeline-lock", daemon=True).start()
        await done


def _granted(done: asyncio.Future[None], lock: threading.Lock) -> None:
    if done.cancelled():  # the waiter gave up: pass the lock on
        lock.release()
    else:
        done.set_result(None)


_locks: weakref.WeakValueDictionary[tuple[Hashable, str], ConversationLock] = (
    weakref.WeakValueDictionary()
)
_locks_guard = threading.Lock()


def lock_for(store: Hashable, conversation_id: str) -> ConversationLock:
    """The process-wide lock of ``conversation_id`` in ``store`` (a :func:`store_key`)."""
    with _locks_guard:
        lock = _locks.get((store, conversation_id))
        if lock is None:
            lock = ConversationLock()
            _locks[(store, conversation_id)] = lock
        return lock


@attrs.define
class TimelineCache:
    """Timelines by conversation id; a miss loads the persisted one or starts a new one
    with the adapter's policy and keywords."""

    store: IndexStore
    policy: CompactionPolicy
    kwargs: dict[str, Any] = attrs.field(factory=dict)
    key: Hashable = None
    """The store's lock key (:func:`store_key`); None: the store object itself."""
    _timelines: dict[str, Timeline] = attrs.field(factory=dict, init=False)

    def lock(self, conversation_id: str) -> ConversationLock:
        key = self.key if self.key is not None else store_key(self.store)
        return lock_for(key, conversation_id)

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

    def _stale(self, conversation_id: str, version: int) -> bool:
        tl = self._timelines.get(conversation_id)
        return tl is not None and tl.version != version

    def fresh(self, conversation_id: str) -> Timeline:
        """The timeline, reloaded first when the store holds another version of it."""
        try:
            version = fetch(self.store, conversation_id)[0]
        except NotFoundError:
            version = 0
        if self._stale(conversation_id, version):
            self.forget(conversation_id)
        return self.get(conversation_id)

    async def afresh(self, conversation_id: str) -> Timeline:
        """:meth:`fresh` without blocking the event loop."""
        try:
            version = (await afetch(self.store, conversation_id))[0]
        except NotFoundError:
            version = 0
        if self._stale(conversation_id, version):
            self.forget(conversation_id)
        return await self.aget(conversation_id)

    def forget(self, conversation_id: str) -> None:
        """Drop the cached timeline (the next ``get`` reloads it from the store)."""
        self._timelines.pop(conversation_id, None)

    def apply(self, conversation_id: str, change: Callable[[Timeline], T]) -> T:
        """Apply ``change`` to the fresh timeline without persisting it (the next
        :meth:`commit` writes it with its own change; when another writer moved the store
        first, the reload drops it and the caller's next change must carry it again). Any
        error empties the cache. Hold :meth:`lock` around it."""
        try:
            return change(self.fresh(conversation_id))
        except BaseException:
            self.forget(conversation_id)
            raise

    async def aapply(self, conversation_id: str, change: Callable[[Timeline], Awaitable[T]]) -> T:
        """:meth:`apply` for async code (``change`` is awaited)."""
        try:
            return await change(await self.afresh(conversation_id))
        except BaseException:
            self.forget(conversation_id)
            raise

    def commit(self, conversation_id: str, change: Callable[[Timeline], T]) -> T:
        """Apply ``change`` to the fresh timeline and persist it; when another writer
        committed first, reload and apply it again. Any error leaves the store as it was
        and the cache empty (the next call reloads). Hold :meth:`lock` around it."""
        for attempt in range(RETRIES):
            tl = self.fresh(conversation_id)
            try:
                result = change(tl)
                tl.persist(self.store)
                return result
            except ConflictError:
                self.forget(conversation_id)
                if attempt == RETRIES - 1:
                    raise
            except BaseException:
                self.forget(conversation_id)
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def acommit(self, conversation_id: str, change: Callable[[Timeline], Awaitable[T]]) -> T:
        """:meth:`commit` for async code (``change`` is awaited)."""
        for attempt in range(RETRIES):
            tl = await self.afresh(conversation_id)
            try:
                result = await change(tl)
                await tl.apersist(self.store)
                return result
            except ConflictError:
                self.forget(conversation_id)
                if attempt == RETRIES - 1:
                    raise
            except BaseException:
                self.forget(conversation_id)
                raise
        raise AssertionError("unreachable")  # pragma: no cover
