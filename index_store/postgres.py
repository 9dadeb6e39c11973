"""``postgresql://...``: the store for many workers on many hosts (psycopg 3).

psycopg is imported when a store is opened, never at package import; without the
``postgres`` extra the error says how to install it. Optimistic concurrency uses a
row lock on the conversation inside one transaction; search uses a generated
``tsvector`` column with a GIN index.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, ClassVar, Final

import attrs

from index_store._common import search_terms
from index_store._pg_async import PostgresAsync
from index_store._pg_sql import (
    LOCK_INSERT,
    LOCK_SELECT,
    SEARCH,
    SEARCH_JOINERS,
    WRITE_WINDOW,
    failed,
    index_text,
    search_hits,
)
from index_store._sql import SqlStore
from timeline.model.errors import StoreUnavailableError, TimelineError
from timeline.model.persistence import SearchHit

__all__ = ["SCHEMA_VERSION", "PostgresStore"]

SCHEMA_VERSION: Final = 1

_MIGRATIONS: Final[dict[int, list[str]]] = {
    1: [
        """CREATE TABLE bt_conversations (
            conversation_id TEXT PRIMARY KEY,
            version BIGINT NOT NULL,
            live_window BYTEA,
            updated_at TIMESTAMPTZ NOT NULL DEFAULT now())""",
        """CREATE TABLE bt_blocks (
            seq BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            block_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('log', 'summary')),
            turn_id TEXT NOT NULL,
            path TEXT NOT NULL,
            type TEXT NOT NULL,
            text TEXT NOT NULL,
            body BYTEA NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
            UNIQUE (conversation_id, block_id))""",
        "CREATE INDEX bt_blocks_turn ON bt_blocks (conversation_id, turn_id)",
        "CREATE INDEX bt_blocks_path ON bt_blocks (conversation_id, path)",
        "CREATE INDEX bt_blocks_tsv ON bt_blocks USING GIN (tsv)",
        """CREATE TABLE bt_checkpoints (
            conversation_id TEXT NOT NULL,
            checkpoint_id TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            block_count INTEGER NOT NULL,
            body BYTEA NOT NULL,
            PRIMARY KEY (conversation_id, checkpoint_id))""",
    ],
}

_HINT: Final = "install the extra: pip install 'block-timeline[postgres]'"


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreUnavailableError(f"PostgreSQL support needs psycopg 3; {_HINT}") from exc
    return psycopg


@attrs.define
class PostgresStore(PostgresAsync, SqlStore):
    """PostgreSQL-backed index store (one connection, serialized by a lock; the async
    API uses a pool of async connections, see :mod:`index_store._pg_async`)."""

    PLACEHOLDER: ClassVar[str] = "%s"
    TABLES: ClassVar[dict[str, str]] = {
        "blocks": "bt_blocks",
        "conversations": "bt_conversations",
        "checkpoints": "bt_checkpoints",
    }
    ORDER: ClassVar[str] = "seq"

    dsn: str
    _conn: Any = attrs.field(default=None, init=False, repr=False)
    _closed: bool = attrs.field(default=False, init=False, repr=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)
    _pg: Any = attrs.field(init=False, repr=False)
    pool_size: int = attrs.field(default=4, kw_only=True)
    _apools: dict[Any, Any] = attrs.field(factory=dict, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._pg = _psycopg()
        self._conn = self._connect()
        self._migrate()

    def _connect(self) -> Any:
        try:
            return self._pg.connect(self.dsn, autocommit=False)
        except self._pg.Error as exc:
            raise StoreUnavailableError(
                f"cannot connect to PostgreSQL: {exc}; check the DSN and that the server runs"
            ) from exc

    @property
    def url(self) -> str:
        return self.dsn

    @contextmanager
    def _tx(self, conversation_id: str | None = None) -> Iterator[Any]:
        """One transaction, committed inside the error translation (psycopg's
        ``transaction()`` block commits on exit; a failed ``COMMIT`` ends the server's
        transaction, so the connection is usable again). A connection the server dropped
        (restart, failover) is replaced on the next call; the call that found it dead
        raises StoreUnavailableError and wrote nothing it did not commit."""
        with self._lock:
            if self._closed:
                raise StoreUnavailableError("this PostgreSQL store was closed; open a new one")
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._conn = self._connect()
            conn = self._conn
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except TimelineError:
                raise
            except self._pg.Error as exc:
                if conn.closed or conn.broken:
                    self._conn = None
                    raise StoreUnavailableError(
                        f"lost the connection to PostgreSQL ({exc}); the next call reconnects "
                        "(a persist cut off here committed whole or not at all)"
                    ) from exc
                raise failed(exc, conversation_id) from exc

    def _migrate(self) -> None:
        with self._tx() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(727274)")
            cur.execute("CREATE TABLE IF NOT EXISTS bt_schema_version (version INTEGER NOT NULL)")
            cur.execute("SELECT max(version) FROM bt_schema_version")
            current = cur.fetchone()[0] or 0
            if current > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"PostgreSQL schema version {current} is newer than this library supports "
                    f"({SCHEMA_VERSION}); upgrade block-timeline"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[version]:
                    cur.execute(statement)
                cur.execute("INSERT INTO bt_schema_version (version) VALUES (%s)", (version,))

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._tx() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self._rows(sql, params)

    def _lock_version(self, db: Any, conversation_id: str) -> int:
        db.execute(LOCK_INSERT, (conversation_id,))
        return int(db.execute(LOCK_SELECT, (conversation_id,)).fetchone()[0])

    def _write_window(self, db: Any, conversation_id: str, version: int, row: bytes) -> None:
        db.execute(WRITE_WINDOW, (version, row, conversation_id))

    def _clean_text(self, text: str) -> str:
        return index_text(text)

    def _created_text(self, value: Any) -> str:
        if isinstance(value, datetime):
            return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return str(value)

    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        if not terms:
            return []
        rows: list[Any] = []
        for joiner in SEARCH_JOINERS:
            rows = self._rows(SEARCH, (joiner.join(terms), conversation_id, limit))
            if rows or len(terms) == 1:
                break
        return search_hits(rows, conversation_id)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
        self._drop_async_pools()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
