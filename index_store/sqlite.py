"""``sqlite:///path.db``: the embedded default store.

WAL journal (readers never block the writer), a busy timeout so concurrent writers wait
instead of failing, FTS5 full-text search over the turn log and summaries, and a
``schema_version`` table with forward-only migrations. Each ``commit`` is one
``BEGIN IMMEDIATE`` transaction: a crash at any moment leaves the last committed window.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Final

import attrs

from index_store._async import ThreadedAsync
from index_store._common import (
    decode_block_row,
    encode_block_row,
    search_terms,
    stored_version,
)
from index_store._sql import SqlStore, utc_now_text
from timeline.model.errors import (
    CorruptRecordError,
    StoreError,
    StoreUnavailableError,
    TimelineError,
)
from timeline.model.persistence import SearchHit

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

SCHEMA_VERSION: Final = 2

_MIGRATIONS: Final[dict[int, str]] = {
    1: """
    CREATE TABLE conversations (
        conversation_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        live_window BLOB NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE blocks (
        rowid INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        block_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('log', 'summary')),
        turn_id TEXT NOT NULL,
        path TEXT NOT NULL,
        type TEXT NOT NULL,
        text TEXT NOT NULL,
        body BLOB NOT NULL,
        UNIQUE (conversation_id, block_id)
    );
    CREATE INDEX blocks_turn ON blocks (conversation_id, turn_id);
    CREATE INDEX blocks_path ON blocks (conversation_id, path);
    CREATE VIRTUAL TABLE blocks_fts USING fts5(
        text, content='blocks', content_rowid='rowid', tokenize='porter unicode61'
    );
    CREATE TRIGGER blocks_ai AFTER INSERT ON blocks BEGIN
        INSERT INTO blocks_fts(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER blocks_ad AFTER DELETE ON blocks BEGIN
        INSERT INTO blocks_fts(blocks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END;
    CREATE TABLE checkpoints (
        conversation_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        block_count INTEGER NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (conversation_id, checkpoint_id)
    );
    """,
    # Text stored once: the body carries it (compressed), the ``text`` column is left
    # empty and the search index reads the text from the body through ``bt_block_text``.
    2: """
    DROP TRIGGER blocks_ai;
    DROP TRIGGER blocks_ad;
    DROP TABLE blocks_fts;
    UPDATE blocks SET body = bt_compact_body(body), text = '';
    CREATE VIEW blocks_text (block_rowid, text) AS
        SELECT rowid, bt_block_text(body) FROM blocks;
    CREATE VIRTUAL TABLE blocks_fts USING fts5(
        text, content='blocks_text', content_rowid='block_rowid', tokenize='porter unicode61'
    );
    INSERT INTO blocks_fts(blocks_fts) VALUES ('rebuild');
    CREATE TRIGGER blocks_ai AFTER INSERT ON blocks BEGIN
        INSERT INTO blocks_fts(rowid, text) VALUES (new.rowid, bt_block_text(new.body));
    END;
    CREATE TRIGGER blocks_ad AFTER DELETE ON blocks BEGIN
        INSERT INTO blocks_fts(blocks_fts, rowid, text)
        VALUES ('delete', old.rowid, bt_block_text(old.body));
    END;
    """,
}


def _block_text(body: bytes | None) -> str:
    """``bt_block_text(body)``: the text of a stored block, for the search index ("" for
    a row that does not decode: the integrity check reports it)."""
    if body is None:
        return ""
    try:
        return decode_block_row(body, "", "").text
    except TimelineError:
        return ""


def _compact_body(body: bytes) -> bytes:
    """``bt_compact_body(body)``: a schema-1 body re-encoded as schema 2 writes it."""
    try:
        return encode_block_row(decode_block_row(body, "", ""))
    except TimelineError:
        return body  # left as it was: the integrity check reports it


def _create_private(path: str) -> None:
    """Create a new store file readable by its owner only (0600): a store holds whole
    conversations. SQLite gives the ``-wal`` and ``-shm`` files the database file's mode.
    An existing file (or a symlink, never followed here) is left as it is."""
    if path == ":memory:" or not path:
        return
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreUnavailableError(
            f"cannot open SQLite store {path!r}: {exc.strerror}; check the path and permissions"
        ) from exc


@attrs.define
class SqliteStore(ThreadedAsync, SqlStore):
    """SQLite-backed index store; safe to share between threads and processes. The async
    API (``acommit``, ``asearch`` ...) runs each call in a worker thread."""

    path: str
    busy_timeout_ms: int = 10_000
    _conn: sqlite3.Connection = attrs.field(init=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)

    def __attrs_post_init__(self) -> None:
        _create_private(self.path)
        try:
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=self.busy_timeout_ms / 1000,
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if self.path != ":memory:":
                self._set_wal()
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.text_factory = _text
            self._conn.create_function("bt_block_text", 1, _block_text, deterministic=True)
            self._conn.create_function("bt_compact_body", 1, _compact_body, deterministic=True)
            if self._migrate() and self.path != ":memory:":
                self._vacuum()
        except sqlite3.Error as exc:
            raise StoreUnavailableError(
                f"cannot open SQLite store {self.path!r}: {exc}; check the path and permissions"
            ) from exc

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

    def _clean_text(self, text: str) -> str:
        """Nothing: schema 2 keeps the text in the body only (the search index reads it
        from there), so the ``text`` column stays empty."""
        return ""

    def _vacuum(self) -> None:
        """Give back the space an upgrade freed (best effort: another connection may
        hold the file; the free pages are then reused by later writes)."""
        with self._lock, suppress(sqlite3.OperationalError):
            self._conn.execute("VACUUM")

    def _migrate(self) -> bool:
        """Bring the schema up to date; True when an existing store was upgraded."""
        with self._tx():
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
            )
            row = self._conn.execute("SELECT max(version) FROM schema_version").fetchone()
            current = row[0] or 0
            if isinstance(current, bool) or not isinstance(current, int):
                raise CorruptRecordError(
                    f"SQLite store {self.path!r} has schema version {current!r}, not an "
                    "integer; the schema_version table is damaged"
                )
            if current > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"SQLite store {self.path!r} has schema version {current}, newer than this "
                    f"library supports ({SCHEMA_VERSION}); upgrade block-timeline"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in _split_sql(_MIGRATIONS[version]):
                    self._conn.execute(statement)
                self._conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        return 0 < current < SCHEMA_VERSION

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
        """The StoreError for a failed transaction: where, why, and what to do."""
        about = f" (conversation {conversation_id!r})" if conversation_id is not None else ""
        return StoreError(
            f"SQLite store {self.path!r}{about}: {what}: {exc}; rolled back, nothing of it "
            "was written and the store stays usable: check the disk (space, permissions) "
            "and retry",
            conversation_id=conversation_id,
        )

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc

    def _lock_version(self, db: Any, conversation_id: str) -> int:
        # BEGIN IMMEDIATE already holds the write lock
        row = db.execute(
            "SELECT version FROM conversations WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
        return stored_version(row[0], conversation_id) if row else 0

    def _write_window(self, db: Any, conversation_id: str, version: int, row: bytes) -> None:
        db.execute(
            "INSERT INTO conversations (conversation_id, version, live_window, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET "
            "version = excluded.version, live_window = excluded.live_window, "
            "updated_at = excluded.updated_at",
            (conversation_id, version, row, utc_now_text()),
        )

    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        if not terms:
            return []
        rows = []
        for joiner in (" AND ", " OR "):
            match = joiner.join(f'"{t}"' for t in terms)
            rows = self._query(
                "SELECT b.block_id, b.kind, b.body, "
                "snippet(blocks_fts, 0, '[', ']', '…', 16), -bm25(blocks_fts) "
                "FROM blocks_fts JOIN blocks b ON b.rowid = blocks_fts.rowid "
                "WHERE blocks_fts MATCH ? AND b.conversation_id = ? "
                "ORDER BY b.kind = 'summary', bm25(blocks_fts), b.rowid LIMIT ?",
                (match, conversation_id, limit),
            )
            if rows or len(terms) == 1:
                break
        hits = []
        for bid, kind, body, snippet, score in rows:
            b = decode_block_row(body, conversation_id, bid)
            hits.append(SearchHit(b, b.path, b.turn_id, snippet, round(float(score), 6), kind))
        return hits

    def check_integrity(self) -> list[CorruptRecordError]:
        """SQLite's own check, the FTS index, then every row decoding (see SqlStore)."""
        problems: list[CorruptRecordError] = []
        result = self._query("PRAGMA integrity_check")
        if result[0][0] != "ok":
            problems.append(
                CorruptRecordError(f"SQLite store {self.path!r} fails integrity_check: {result}")
            )
        try:
            with self._lock:
                self._conn.execute("INSERT INTO blocks_fts(blocks_fts) VALUES ('integrity-check')")
        except sqlite3.Error as exc:
            problems.append(CorruptRecordError(f"SQLite store {self.path!r}: search index: {exc}"))
        return problems + super().check_integrity()

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


def _text(raw: bytes) -> str:
    """TEXT values that are not valid UTF-8 (a damaged file) still read; the body BLOB is
    what decodes a block, so a bad byte surfaces as CorruptRecordError there or as a
    block the window cannot find."""
    return raw.decode("utf-8", "surrogateescape")


def _split_sql(script: str) -> list[str]:
    """Statements of a migration script (triggers keep their inner semicolons)."""
    out: list[str] = []
    buf: list[str] = []
    for line in script.strip().splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    if "\n".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out
