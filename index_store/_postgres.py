"""``postgresql://...``: the store for many workers on many hosts (psycopg 3).

psycopg is imported when a store is opened, never at package import; without the
``postgres`` extra the error says how to install it. Optimistic concurrency uses a
row lock on the conversation inside one transaction; search uses a GIN index over each
block's analysed terms and its conversation's token (:mod:`index_store._pg_search`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import attrs

from index_store._common import search_terms
from index_store._integrity import SqlIntegrity
from index_store._pg_async import PostgresAsync, hits_of
from index_store._pg_schema import SCHEMA_VERSION, created_text, migrate
from index_store._pg_search import (
    SEARCHED,
    Pending,
    index_flow,
    run,
    search_flow,
    totals_flow,
)
from index_store._pg_sql import (
    INSERT_BLOCK,
    INSERT_PIECE,
    LOCK_INSERT,
    LOCK_SELECT,
    ROW_SELECT,
    WRITE_WINDOW,
    failed,
    pieces,
)
from index_store._rows import Row
from index_store._sql import SqlStore
from index_store._sql_vectors import SqlVectors
from timeline._model import (
    Block,
    Embedder,
    SearchHit,
    StoreUnavailableError,
    TimelineError,
    install_hint,
    searched,
)

__all__ = ["SCHEMA_VERSION", "PostgresStore", "shown_dsn"]


_URL_PASSWORD = re.compile(r"^([a-z][a-z0-9+.-]*://[^:/?#@]*:)[^/?#]*(?=@)", re.IGNORECASE)
_KEY_PASSWORD = re.compile(
    r"(\b(?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s&']*)", re.IGNORECASE
)


def shown_dsn(dsn: str) -> str:
    """``dsn`` with its passwords hidden (``***``), what a repr or a log may show: the
    password of a URL (``postgresql://user:***@host/db``) and a ``password=`` (or
    ``sslpassword=``) setting, in a URL's query or a ``key=value`` DSN, quoted or not."""
    return _KEY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***", dsn))


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreUnavailableError(
            f"PostgreSQL support needs psycopg 3; install it with {install_hint('postgres')}"
        ) from exc
    return psycopg


@attrs.define
class PostgresStore(PostgresAsync, SqlIntegrity, SqlVectors, SqlStore):
    """PostgreSQL-backed index store (one connection, serialized by a lock; the async
    API uses a pool of async connections, see :mod:`index_store._pg_async`)."""

    PLACEHOLDER: ClassVar[str] = "%s"
    TABLES: ClassVar[dict[str, str]] = {
        "blocks": "bt_blocks",
        "conversations": "bt_conversations",
        "checkpoints": "bt_checkpoints",
    }
    ORDER: ClassVar[str] = "seq"
    ROW_SELECT: ClassVar[str] = ROW_SELECT
    TEXT_APART: ClassVar[bool] = True
    VECTOR_PUT: ClassVar[str] = (
        "INSERT INTO bt_search_vectors (seq, conversation_id, model, vector) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (seq) DO UPDATE SET model = excluded.model, "
        "vector = excluded.vector"
    )

    dsn: str = attrs.field(repr=shown_dsn)
    """The connection string (its repr hides the password)."""
    _conn: Any = attrs.field(default=None, init=False, repr=False)
    _closed: bool = attrs.field(default=False, init=False, repr=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)
    _pg: Any = attrs.field(init=False, repr=False)
    pool_size: int = attrs.field(default=4, kw_only=True)
    embedder: Embedder | None = attrs.field(default=None, kw_only=True)
    """Ranks by meaning as well as by words (:mod:`index_store._vectors`)."""
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
    def _tx(self, conversation_id: str | None = None, *, read: bool = False) -> Iterator[Any]:
        """One transaction, committed inside the error translation (psycopg's
        ``transaction()`` block commits on exit; a failed ``COMMIT`` ends the server's
        transaction, so the connection is usable again). A connection the server dropped
        (restart, failover) is replaced on the next call; the call that found it dead
        raises StoreUnavailableError and wrote nothing it did not commit.

        ``read``: no transaction, each statement its own (autocommit), without ``BEGIN``
        and ``COMMIT``'s round trips: for reads whose statements need no snapshot in
        common (under READ COMMITTED a transaction's statements do not share one
        either)."""
        with self._lock:
            if self._closed:
                raise StoreUnavailableError("this PostgreSQL store was closed; open a new one")
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._conn = self._connect()
            conn = self._conn
            try:
                if read:
                    conn.autocommit = True
                    try:
                        with conn.cursor() as cur:
                            yield cur
                    finally:
                        if not (conn.closed or conn.broken):
                            conn.autocommit = False
                else:
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
            migrate(cur)

    def _rows(self, sql: str, params: Any) -> list[Any]:
        with self._tx() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def _query(
        self, sql: str, params: Sequence[Any] = (), conversation_id: str | None = None
    ) -> list[Any]:
        return self._rows(sql, params)

    def _stream(self, sql: str) -> Iterator[Sequence[Any]]:
        """Rows of ``sql`` a batch at a time, through a server-side cursor."""
        with self._tx() as cur, cur.connection.cursor(name="bt_stream") as stream:
            stream.execute(sql)
            while batch := stream.fetchmany(1000):
                yield from batch

    def _lock_version(self, db: Any, conversation_id: str) -> tuple[int, Pending]:
        """The version, and what the commit indexes (:class:`~index_store._pg_search.Pending`)."""
        db.execute(LOCK_INSERT, (conversation_id,))
        return int(db.execute(LOCK_SELECT, (conversation_id,)).fetchone()[0]), Pending()

    def _insert(self, db: Any, conversation_id: str, row: Row, block: Block, at: Any) -> int | None:
        found = db.execute(INSERT_BLOCK, (conversation_id, *row.columns)).fetchone()
        if found is None:
            return None
        for n, part in enumerate(pieces(row.text or "")):
            db.execute(INSERT_PIECE, (found[0], n, conversation_id, part))
        run(db, index_flow(conversation_id, found[0], row.kind, block, at))
        return int(found[0])

    def _inserted(self, db: Any, conversation_id: str, at: Any) -> None:
        run(db, totals_flow(conversation_id, at))

    def _deleted(self, db: Any, conversation_id: str) -> None:
        tables = (
            "bt_text",
            "bt_search",
            "bt_search_vectors",
            "bt_search_totals",
            "bt_search_most",
            "bt_search_postings",
        )
        for table in tables:
            db.execute(f"DELETE FROM {table} WHERE conversation_id = %s", (conversation_id,))

    def _write_window(self, db: Any, conversation_id: str, version: int, row: bytes) -> None:
        db.execute(WRITE_WINDOW, (version, row, conversation_id))

    def _created_text(self, value: Any) -> str:
        return created_text(value)

    @searched
    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        near = self._near(conversation_id, query)
        if not terms and near is None:
            return []
        with self._tx(conversation_id, read=near is None) as cur:
            flow = search_flow(conversation_id, terms, limit, near)
            chosen, rows = run(cur, flow, SEARCHED, binary=True)
        return hits_of(chosen, rows, self._codec(conversation_id), terms)

    def _missing_vectors(self, conversation_id: str, model: str) -> list[tuple[int, Block]]:
        rows = self._query(
            f"SELECT seq, {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s AND kind = "
            "'log' AND NOT EXISTS (SELECT 1 FROM bt_search_vectors v WHERE v.seq = "
            "bt_blocks.seq AND v.model = %s) ORDER BY seq",
            (conversation_id, model),
        )
        codec = self._codec(conversation_id)
        return [(r[0], codec.decode(Row(*r[1:]))) for r in rows]

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
