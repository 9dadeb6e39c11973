"""``sqlite:///path.db``: the embedded default store.

WAL journal (readers never block the writer), a busy timeout so concurrent writers wait
instead of failing, an FTS5 index of the turn log's and summaries' terms
(:mod:`index_store._sqlite_index`), and a ``schema_version`` table with forward-only
migrations (:mod:`index_store._sqlite_schema`).
Each ``commit`` is one ``BEGIN IMMEDIATE`` transaction: a crash at any moment leaves the
last committed window.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, ClassVar

import attrs

from index_store._async import ThreadedAsync
from index_store._common import stored_version
from index_store._integrity import SqlIntegrity
from index_store._rows import Row
from index_store._sql import ROW_COLUMNS, SqlStore, utc_now_text
from index_store._sql_vectors import SqlVectors
from index_store._sqlite_commit import CommitRange
from index_store._sqlite_file import create_private, is_corrupt, is_damage, text
from index_store._sqlite_index import bring_index_up_to_date, terms_of
from index_store._sqlite_schema import SCHEMA_VERSION, SEQ_BITS, migrate
from index_store._sqlite_search import SqliteSearch
from timeline._model import Block, CorruptRecordError, Embedder, StoreError, StoreUnavailableError

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

_CONV_NO = "(SELECT conv_no FROM conversations WHERE conversation_id = ?)"
_LOW = 2**SEQ_BITS - 1


@attrs.define
class SqliteStore(ThreadedAsync, SqliteSearch, SqlIntegrity, SqlVectors, SqlStore):
    """SQLite-backed index store; safe to share between threads and processes. The async
    API (``acommit``, ``asearch`` ...) runs each call in a worker thread."""

    VECTOR_PUT: ClassVar[str] = (
        "INSERT OR REPLACE INTO search_vectors (seq, model, vector) VALUES (?1, ?3, ?4)"
    )

    WINDOW_KEYS: ClassVar[str] = "conv_no"
    ROWS_IN_ORDER: ClassVar[str] = (
        f"SELECT c.conversation_id, {ROW_COLUMNS} FROM blocks JOIN conversations c "
        f"ON c.conv_no = seq >> {SEQ_BITS} ORDER BY seq"
    )
    """Every block row with its conversation's id, one conversation after another (a row
    of no conversation is :meth:`_check_ranges`' to report)."""

    path: str
    busy_timeout_ms: int = 10_000
    embedder: Embedder | None = attrs.field(default=None, kw_only=True)
    """Ranks by meaning as well as by words (:mod:`index_store._vectors`)."""
    _conn: sqlite3.Connection = attrs.field(init=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)

    def __attrs_post_init__(self) -> None:
        create_private(self.path)
        try:
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=self.busy_timeout_ms / 1000,
            )
            self._conn.text_factory = text
            self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if self.path != ":memory:":
                self._set_wal()
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.create_function("bt_search_terms", 2, terms_of, deterministic=True)
            with self._tx() as db:
                upgraded = migrate(db, self.path)
            if upgraded and self.path != ":memory:":
                self._vacuum()
        except sqlite3.Error as exc:
            if is_corrupt(exc):
                raise CorruptRecordError(
                    f"SQLite store {self.path!r} is damaged: {exc}; restore it from a backup"
                ) from exc
            raise StoreUnavailableError(
                f"cannot open SQLite store {self.path!r}: {exc}; check the path and permissions"
            ) from exc
        except UnicodeError as exc:  # a damaged header (its text encoding)
            self._conn.close()
            raise CorruptRecordError(
                f"SQLite store {self.path!r} is damaged: {exc}; restore it from a backup"
            ) from exc
        except StoreError as exc:
            self._conn.close()
            if exc.__cause__ is not None and is_corrupt(exc.__cause__):
                raise CorruptRecordError(
                    f"SQLite store {self.path!r} is damaged: {exc.__cause__}; restore it "
                    "from a backup"
                ) from exc
            raise

    def _set_wal(self) -> None:
        """Switch to WAL. The switch takes the file's exclusive lock and SQLite does not
        wait for it (no busy handler), so a process opening the same new file at the same
        moment gets "database is locked": retry until the busy timeout."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        delay = 0.001
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(2 * delay, 0.05)

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def _vacuum(self) -> None:
        """Give back the space an upgrade freed (best effort: another connection may
        hold the file; the free pages are then reused by later writes)."""
        with self._lock, suppress(sqlite3.OperationalError):
            self._conn.execute("VACUUM")

    @contextmanager
    def _tx(self, conversation_id: str | None = None) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction, committed inside the error translation: any sqlite
        error (``BEGIN``, a statement, ``COMMIT`` itself) rolls everything back and
        becomes a StoreError, so a failed commit never leaves the connection inside a
        transaction that would make every later call fail."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._failed("cannot begin a transaction", exc, conversation_id) from exc
            try:
                yield self._conn
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise self._failed("write failed", exc, conversation_id) from exc
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise self._failed("commit failed", exc, conversation_id) from exc

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already: after some errors (disk
        full, I/O error) it rolls back by itself and a second ``ROLLBACK`` would fail
        and hide the real error."""
        if self._conn.in_transaction:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def _failed(self, what: str, exc: sqlite3.Error, conversation_id: str | None) -> StoreError:
        """The StoreError for a failed transaction: where, why, and what to do (a damaged
        file is a CorruptRecordError)."""
        about = f" (conversation {conversation_id!r})" if conversation_id is not None else ""
        if is_corrupt(exc):
            return self._damaged(exc, conversation_id)
        return StoreError(
            f"SQLite store {self.path!r}{about}: {what}: {exc}; rolled back, nothing of it "
            "was written and the store stays usable: check the disk (space, permissions) "
            "and retry",
            conversation_id=conversation_id,
        )

    def _damaged(self, exc: sqlite3.Error, conversation_id: str | None) -> CorruptRecordError:
        about = f" reading conversation {conversation_id!r}" if conversation_id else ""
        return CorruptRecordError(
            f"SQLite store {self.path!r} is damaged{about}: {exc}; check_integrity() lists "
            "what it finds",
            conversation_id=conversation_id,
        )

    def _query(
        self, sql: str, params: Sequence[Any] = (), conversation_id: str | None = None
    ) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                if is_damage(exc):
                    raise self._damaged(exc, conversation_id) from exc
                raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc

    def _stream(self, sql: str) -> Iterator[Sequence[Any]]:
        """Rows of ``sql`` a batch at a time (in WAL a long read never blocks a writer)."""
        with self._lock:
            try:
                cursor = self._conn.execute(sql)
                while batch := cursor.fetchmany(1000):
                    yield from batch
            except sqlite3.Error as exc:
                if is_damage(exc):
                    raise self._damaged(exc, None) from exc
                raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc

    def _lock_version(self, db: Any, conversation_id: str) -> tuple[int, CommitRange]:
        # BEGIN IMMEDIATE already holds the write lock; the row gives the range's number.
        # Looked up before inserting: an INSERT that does nothing still uses up a number
        # (AUTOINCREMENT), and there are 2**31 of them
        find = "SELECT version, conv_no FROM conversations WHERE conversation_id = ?"
        found = db.execute(find, (conversation_id,)).fetchone()
        if found is None:
            db.execute(
                "INSERT INTO conversations (conversation_id, version, live_window, updated_at) "
                "VALUES (?, 0, NULL, ?)",
                (conversation_id, utc_now_text()),
            )
            found = db.execute(find, (conversation_id,)).fetchone()
        version, conv_no = found
        lo = conv_no << SEQ_BITS
        top = db.execute(
            "SELECT max(seq) FROM blocks WHERE seq BETWEEN ? AND ?", (lo, lo | _LOW)
        ).fetchone()[0]
        return stored_version(version, conversation_id), CommitRange(conv_no, (top or lo) + 1)

    def _of(self, conversation_id: str, *, keyed: bool = False) -> tuple[str, tuple[str, ...]]:
        """A key lookup uses the indexes on ``seq >> 32``; the ``+`` drops the number's
        column affinity (compared with it, SQLite does not use an expression index). A
        scan reads the conversation's range of ``seq``; an unknown id matches nothing."""
        if keyed:
            return f"seq >> {SEQ_BITS} = +{_CONV_NO}", (conversation_id,)
        return (
            f"seq BETWEEN {_CONV_NO} << {SEQ_BITS} AND ({_CONV_NO} << {SEQ_BITS}) | {_LOW}",
            (conversation_id, conversation_id),
        )

    def _insert(self, db: Any, conversation_id: str, row: Row, block: Block, at: Any) -> int | None:
        seq = at.next_seq
        inserted = db.execute(
            "INSERT INTO blocks (seq, block_id, kind, turn_id, path, type, body) "
            f"VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (seq >> {SEQ_BITS}, block_id) DO NOTHING",
            (seq, *row.columns),
        ).rowcount
        if inserted:
            at.wrote(block)
            return int(seq)
        return None

    def _streaming(self, at: Any) -> None:
        at.streamed()

    def _inserted(self, db: Any, conversation_id: str, at: Any) -> None:
        bring_index_up_to_date(db, at.blocks)
        at.indexed()

    def _window_keys(self, at: Any) -> tuple[str | int, ...]:
        return (at.conv_no,)

    def _write_window(self, db: Any, conversation_id: str, version: int, row: bytes) -> None:
        db.execute(
            "UPDATE conversations SET version = ?, live_window = ?, updated_at = ? "
            "WHERE conversation_id = ?",
            (version, row, utc_now_text(), conversation_id),
        )

    def _deleted(self, db: Any, conversation_id: str) -> None:
        bring_index_up_to_date(db)

    def check_integrity(self) -> list[CorruptRecordError]:
        """SQLite's own check, the search index, each block row's number being a
        conversation's, then every row decoding (see
        :class:`~index_store._integrity.SqlIntegrity`). A damaged page that stops a check
        is one more problem; the other checks still run."""
        problems: list[CorruptRecordError] = []
        for check in (self._check_file, self._check_index, self._check_ranges):
            try:
                check(problems)
            except CorruptRecordError as exc:
                problems.append(exc)
        return problems + super().check_integrity()

    def _check_file(self, problems: list[CorruptRecordError]) -> None:
        result = self._query("PRAGMA integrity_check")
        if result[0][0] != "ok":
            problems.append(
                CorruptRecordError(f"SQLite store {self.path!r} fails integrity_check: {result}")
            )

    def _check_index(self, problems: list[CorruptRecordError]) -> None:
        try:
            with self._tx() as db:
                bring_index_up_to_date(db)
                db.execute("INSERT INTO search_index(search_index) VALUES ('integrity-check')")
        except (StoreError, sqlite3.Error) as exc:
            problems.append(CorruptRecordError(f"SQLite store {self.path!r}: search index: {exc}"))

    def _check_ranges(self, problems: list[CorruptRecordError]) -> None:
        """Rows whose number (``seq >> 32``) is no conversation's: their ``seq`` was
        damaged, or their conversation's row deleted without them."""
        for seq, bid in self._query(
            "SELECT b.seq, b.block_id FROM blocks b LEFT JOIN conversations c "
            f"ON c.conv_no = b.seq >> {SEQ_BITS} WHERE c.conv_no IS NULL ORDER BY b.seq"
        ):
            problems.append(
                CorruptRecordError(
                    f"block {bid!r} (row {seq}) belongs to no conversation: no conversation "
                    f"has its number {seq >> SEQ_BITS} (its row number or its conversation's "
                    "row was damaged or deleted)",
                    block_id=bid,
                )
            )

    def size_bytes(self) -> int:
        rows = self._query("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")
        return int(rows[0][0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
