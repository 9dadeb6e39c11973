"""Index stores: where persisted timelines live and evicted blocks stay searchable.

``open(url)`` picks the backend: ``memory://``, ``sqlite:///path.db`` (the embedded
default) or ``postgresql://...`` (needs the ``postgres`` extra). Every backend satisfies
``timeline.IndexStore`` and passes one conformance suite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index_store.memory import MemoryStore
from index_store.sqlite import SqliteStore
from timeline.model.errors import StoreUnavailableError
from timeline.model.persistence import CheckpointInfo, IndexStore, SearchHit

if TYPE_CHECKING:
    from index_store.postgres import PostgresStore

__all__ = [
    "CheckpointInfo",
    "IndexStore",
    "MemoryStore",
    "PostgresStore",
    "SearchHit",
    "SqliteStore",
    "open",
]


def open(url: str) -> MemoryStore | SqliteStore | PostgresStore:
    """Open the store at ``url``.

    ``memory://`` (in-process), ``sqlite:///relative/or/absolute.db`` (``sqlite:///:memory:``
    for a throwaway one), ``postgresql://user@host/db`` (also ``postgres://``).
    """
    if not isinstance(url, str):
        raise StoreUnavailableError(f"store URL must be a string, got {type(url).__name__}")
    if url == "memory://" or url.startswith("memory://"):
        return MemoryStore(url)
    if url.startswith("sqlite://"):
        path = url[len("sqlite://") :]
        if path.startswith("/"):
            path = path[1:]
        if not path:
            raise StoreUnavailableError(f"no database path in {url!r}; use sqlite:///path.db")
        return SqliteStore(path)
    if url.startswith(("postgresql://", "postgres://")):
        from index_store.postgres import PostgresStore

        return PostgresStore(url)
    raise StoreUnavailableError(
        f"unknown store URL {url!r}; use memory://, sqlite:///path.db or postgresql://..."
    )


def __getattr__(name: str) -> object:
    if name == "PostgresStore":
        from index_store.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(name)
