"""Index stores: where persisted timelines live and evicted blocks stay searchable.

``open(url)`` picks the backend: ``memory://``, ``sqlite:///path.db`` or a plain file
path (the embedded default) or ``postgresql://...`` (needs the ``postgres`` extra). Every
backend satisfies ``timeline.IndexStore`` and passes one conformance suite.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from index_store._memory import MemoryStore
from index_store._sqlite import SqliteStore
from timeline._model import Embedder, StoreUnavailableError, name_home

if TYPE_CHECKING:
    from index_store._postgres import PostgresStore, shown_dsn

__all__ = [
    "MemoryStore",
    "PostgresStore",
    "SqliteStore",
    "open",
    "shown_dsn",
]


def open(
    url: str | os.PathLike[str], *, create: bool = True, embedder: Embedder | None = None
) -> MemoryStore | SqliteStore | PostgresStore:
    """Open the store at ``url``.

    ``memory://`` (in-process), ``sqlite:///relative/or/absolute.db`` (``sqlite:///:memory:``
    for a throwaway one) or a plain path such as ``"agent.db"`` (SQLite, as the CLI's
    ``--db`` takes it), ``postgresql://user@host/db`` (also ``postgres://``).
    ``create=False`` opens only an existing SQLite file: a missing one raises
    :class:`StoreUnavailableError` naming the path, and nothing is created.
    ``embedder`` (a :class:`~timeline.Embedder`): search ranks by meaning as well as by
    words (BM25 alone without one).
    """
    if embedder is not None and not isinstance(embedder, Embedder):
        raise StoreUnavailableError(
            f"embedder must have an embed(texts) method, got {type(embedder).__name__}"
        )
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        raise StoreUnavailableError(f"store URL must be a string, got {type(url).__name__}")
    if url == "memory://" or url.startswith("memory://"):
        return MemoryStore(url, embedder=embedder)
    path = sqlite_path(url)
    if path is not None:
        if not create and path != ":memory:" and not os.path.exists(path):
            raise StoreUnavailableError(f"no SQLite store at {path!r}: the file does not exist")
        return SqliteStore(path, embedder=embedder)
    if url.startswith(("postgresql://", "postgres://")):
        from index_store._postgres import PostgresStore

        return PostgresStore(url, embedder=embedder)
    raise StoreUnavailableError(
        f"unknown store URL {url!r}; use memory://, sqlite:///path.db, a file path "
        "or postgresql://..."
    )


def sqlite_path(url: str) -> str | None:
    """The SQLite file ``url`` names (``sqlite:///path.db`` or a plain path), or None for
    another backend (also for ``timeline import``, which builds a new store beside it)."""
    if not (url.startswith("sqlite://") or (url and "://" not in url)):
        return None
    if not url.startswith("sqlite://"):
        return url
    path = url[len("sqlite://") :]
    if not path:
        raise StoreUnavailableError(f"no database path in {url!r}; use sqlite:///path.db")
    if not path.startswith("/"):  # sqlite://agent.db would silently name ./agent.db
        raise StoreUnavailableError(
            f"{url!r} has two slashes; a SQLite URL has three before a relative path "
            f"(sqlite:///{path}) and four before an absolute one (sqlite:////abs/{path}), "
            f"or give the plain path {path!r}"
        )
    return path[1:]


name_home(__name__, ["MemoryStore", "SqliteStore"], globals())


def __getattr__(name: str) -> object:
    if name == "PostgresStore":
        from index_store._postgres import PostgresStore

        name_home(__name__, [name], {name: PostgresStore})
        return PostgresStore
    if name == "shown_dsn":  # PostgreSQL's module, loaded only when asked for
        from index_store._postgres import shown_dsn

        name_home(__name__, [name], {name: shown_dsn})
        return shown_dsn
    raise AttributeError(name)
