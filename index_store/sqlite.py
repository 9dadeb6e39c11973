"""``sqlite:///path.db``: the embedded default store.

WAL journal (readers never block the writer), a busy timeout so concurrent writers wait
instead of failing, FTS5 full-text search over the turn log and summaries, and a
``schema_version`` table with forward-only migrations. Each ``commit`` is one
``BEGIN IMMEDIATE`` transaction: a crash at any moment leaves the last committed window.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from index_store._common import (
    assemble_window,
    check_duplicate,
    decode_block_row,
    decode_snapshot_row,
    decode_window_row,
    encode_block_row,
    encode_snapshot_row,
    encode_window_row,
    query_terms,
)
from timeline.block import Block
from timeline.errors import (
    ConflictError,
    CorruptRecordError,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
)
from timeline.persistence import CheckpointInfo, SearchHit, TimelineSnapshot

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

SCHEMA_VERSION: Final = 1

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
}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.define
class SqliteStore:
    """SQLite-backed index store; safe to share between threads and processes."""

    path: str
    busy_timeout_ms: int = 10_000
    _conn: sqlite3.Connection = attrs.field(init=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)

    def __attrs_post_init__(self) -> None:
        try:
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=self.busy_timeout_ms / 1000,
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreUnavailableError(
                f"cannot open SQLite store {self.path!r}: {exc}; check the path and permissions"
            ) from exc

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def _migrate(self) -> None:
        with self._tx():
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
            )
            row = self._conn.execute("SELECT max(version) FROM schema_version").fetchone()
            current = row[0] or 0
            if current > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"SQLite store {self.path!r} has schema version {current}, newer than this "
                    f"library supports ({SCHEMA_VERSION}); upgrade block-timeline"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in _split_sql(_MIGRATIONS[version]):
                    self._conn.execute(statement)
                self._conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction; sqlite errors become StoreError, all rolled back."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path!r}: cannot begin: {exc}") from exc
            try:
                yield self._conn
            except BaseException as exc:
                self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc
                raise
            else:
                self._conn.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc

    def commit(
        self,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int:
        window_row = encode_window_row(window)
        with self._tx() as db:
            row = db.execute(
                "SELECT version FROM conversations WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()
            actual = row[0] if row else 0
            if actual != expected_version:
                raise ConflictError(
                    f"conversation {conversation_id!r} is at version {actual}, this timeline "
                    f"expected {expected_version}; reload it and retry",
                    expected=expected_version,
                    actual=actual,
                    conversation_id=conversation_id,
                )
            for kind, group in (("log", log), ("summary", summaries)):
                for b in group:
                    inserted = db.execute(
                        "INSERT INTO blocks (conversation_id, block_id, kind, turn_id, path, type,"
                        " text, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT (conversation_id, block_id) DO NOTHING",
                        (
                            conversation_id,
                            b.id,
                            kind,
                            b.turn_id,
                            b.path,
                            b.type,
                            b.text,
                            encode_block_row(b),
                        ),
                    ).rowcount
                    if not inserted:  # the id is taken: fine if it is this very block
                        existing = db.execute(
                            "SELECT body FROM blocks WHERE conversation_id = ? AND block_id = ?",
                            (conversation_id, b.id),
                        ).fetchone()
                        check_duplicate(conversation_id, b, existing[0])
            version = actual + 1
            db.execute(
                "INSERT INTO conversations (conversation_id, version, live_window, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET "
                "version = excluded.version, live_window = excluded.live_window, "
                "updated_at = excluded.updated_at",
                (conversation_id, version, window_row, _now()),
            )
        return version

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        rows = self._query(
            "SELECT version, live_window FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
        )
        if not rows:
            return None
        version, window = rows[0]
        record = decode_window_row(window, conversation_id)
        blocks: dict[str, Block] = {}
        ids = [r.id for r in record.refs]
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for bid, body in self._query(
                f"SELECT block_id, body FROM blocks WHERE conversation_id = ? "
                f"AND block_id IN ({marks})",
                (conversation_id, *chunk),
            ):
                blocks[bid] = decode_block_row(body, conversation_id, bid)
        return version, assemble_window(record, blocks)

    def _blocks(self, conversation_id: str, where: str, params: Sequence[Any]) -> list[Block]:
        rows = self._query(
            f"SELECT block_id, body FROM blocks WHERE conversation_id = ? {where} ORDER BY rowid",
            (conversation_id, *params),
        )
        return [decode_block_row(body, conversation_id, bid) for bid, body in rows]

    def get_block(self, conversation_id: str, block_id: str) -> Block:
        found = self._blocks(conversation_id, "AND block_id = ?", (block_id,))
        if not found:
            raise NotFoundError(
                f"no block {block_id!r} in conversation {conversation_id!r}",
                conversation_id=conversation_id,
                block_id=block_id,
            )
        return found[0]

    def read(self, conversation_id: str, path: str) -> list[Block]:
        return self._blocks(conversation_id, "AND path = ?", (path,))

    def turn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]:
        if turn_id is None:
            return self._blocks(conversation_id, "AND kind = 'log'", ())
        return self._blocks(conversation_id, "AND kind = 'log' AND turn_id = ?", (turn_id,))

    def summaries(self, conversation_id: str) -> list[Block]:
        return self._blocks(conversation_id, "AND kind = 'summary'", ())

    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = query_terms(query)
        if not terms or limit <= 0:
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

    def save_checkpoint(
        self, conversation_id: str, checkpoint_id: str, snapshot: TimelineSnapshot
    ) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?) ON CONFLICT "
                "(conversation_id, checkpoint_id) DO UPDATE SET created_at = excluded.created_at,"
                " block_count = excluded.block_count, body = excluded.body",
                (
                    conversation_id,
                    checkpoint_id,
                    _now(),
                    len(snapshot.blocks),
                    encode_snapshot_row(snapshot),
                ),
            )

    def load_checkpoint(self, conversation_id: str, checkpoint_id: str) -> TimelineSnapshot:
        rows = self._query(
            "SELECT body FROM checkpoints WHERE conversation_id = ? AND checkpoint_id = ?",
            (conversation_id, checkpoint_id),
        )
        if not rows:
            raise NotFoundError(
                f"no checkpoint {checkpoint_id!r} for conversation {conversation_id!r}",
                conversation_id=conversation_id,
            )
        return decode_snapshot_row(rows[0][0], conversation_id, f"checkpoint {checkpoint_id!r}")

    def list_checkpoints(self, conversation_id: str) -> list[CheckpointInfo]:
        rows = self._query(
            "SELECT checkpoint_id, created_at, block_count FROM checkpoints "
            "WHERE conversation_id = ? ORDER BY checkpoint_id",
            (conversation_id,),
        )
        return [CheckpointInfo(cid, created, count) for cid, created, count in rows]

    def delete_checkpoint(self, conversation_id: str, checkpoint_id: str) -> bool:
        with self._tx() as db:
            cur = db.execute(
                "DELETE FROM checkpoints WHERE conversation_id = ? AND checkpoint_id = ?",
                (conversation_id, checkpoint_id),
            )
            return cur.rowcount > 0

    def delete(self, conversation_id: str) -> bool:
        """Remove everything of one conversation (window, log, summaries, checkpoints)."""
        with self._tx() as db:
            n = db.execute(
                "DELETE FROM conversations WHERE conversation_id = ?", (conversation_id,)
            ).rowcount
            n += db.execute(
                "DELETE FROM blocks WHERE conversation_id = ?", (conversation_id,)
            ).rowcount
            n += db.execute(
                "DELETE FROM checkpoints WHERE conversation_id = ?", (conversation_id,)
            ).rowcount
            return n > 0

    def conversations(self) -> list[str]:
        return [r[0] for r in self._query("SELECT conversation_id FROM conversations ORDER BY 1")]

    def check_integrity(self) -> None:
        """SQLite's own check, the FTS index, and every window decoding."""
        result = self._query("PRAGMA integrity_check")
        if result[0][0] != "ok":
            raise CorruptRecordError(f"SQLite store {self.path!r} fails integrity_check: {result}")
        try:
            with self._lock:
                self._conn.execute("INSERT INTO blocks_fts(blocks_fts) VALUES ('integrity-check')")
        except sqlite3.Error as exc:
            raise CorruptRecordError(f"SQLite store {self.path!r}: search index: {exc}") from exc
        for cid in self.conversations():
            self.load_window(cid)

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
