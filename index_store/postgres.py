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
    NotFoundError,
    StoreError,
    StoreUnavailableError,
    TimelineError,
)
from timeline.persistence import CheckpointInfo, SearchHit, TimelineSnapshot

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
class PostgresStore:
    """PostgreSQL-backed index store (one connection, serialized by a lock)."""

    dsn: str
    _conn: Any = attrs.field(init=False, repr=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)
    _pg: Any = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._pg = _psycopg()
        try:
            self._conn = self._pg.connect(self.dsn, autocommit=False)
        except self._pg.Error as exc:
            raise StoreUnavailableError(
                f"cannot connect to PostgreSQL: {exc}; check the DSN and that the server runs"
            ) from exc
        self._migrate()

    @property
    def url(self) -> str:
        return self.dsn

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock:
            try:
                with self._conn.transaction(), self._conn.cursor() as cur:
                    yield cur
            except TimelineError:
                raise
            except self._pg.Error as exc:
                raise StoreError(f"PostgreSQL store: {exc}") from exc

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
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO bt_conversations (conversation_id, version) VALUES (%s, 0) "
                "ON CONFLICT (conversation_id) DO NOTHING",
                (conversation_id,),
            )
            cur.execute(
                "SELECT version FROM bt_conversations WHERE conversation_id = %s FOR UPDATE",
                (conversation_id,),
            )
            actual = cur.fetchone()[0]
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
                    cur.execute(
                        "INSERT INTO bt_blocks (conversation_id, block_id, kind, turn_id, path,"
                        " type, text, body) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT (conversation_id, block_id) DO NOTHING",
                        (
                            conversation_id,
                            b.id,
                            kind,
                            b.turn_id,
                            b.path,
                            b.type,
                            b.text.replace("\x00", ""),
                            encode_block_row(b),
                        ),
                    )
                    if not cur.rowcount:  # the id is taken: fine if it is this very block
                        cur.execute(
                            "SELECT body FROM bt_blocks WHERE conversation_id = %s "
                            "AND block_id = %s",
                            (conversation_id, b.id),
                        )
                        check_duplicate(conversation_id, b, cur.fetchone()[0])
            cur.execute(
                "UPDATE bt_conversations SET version = %s, live_window = %s, updated_at = now() "
                "WHERE conversation_id = %s",
                (actual + 1, window_row, conversation_id),
            )
        return int(actual + 1)

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._tx() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        rows = self._rows(
            "SELECT version, live_window FROM bt_conversations WHERE conversation_id = %s "
            "AND live_window IS NOT NULL",
            (conversation_id,),
        )
        if not rows:
            return None
        version, window = rows[0]
        record = decode_window_row(window, conversation_id)
        found = self._rows(
            "SELECT block_id, body FROM bt_blocks WHERE conversation_id = %s "
            "AND block_id = ANY(%s)",
            (conversation_id, [r.id for r in record.refs]),
        )
        blocks = {bid: decode_block_row(body, conversation_id, bid) for bid, body in found}
        return int(version), assemble_window(record, blocks)

    def _blocks(self, conversation_id: str, where: str, params: Sequence[Any]) -> list[Block]:
        rows = self._rows(
            f"SELECT block_id, body FROM bt_blocks WHERE conversation_id = %s {where} ORDER BY seq",
            (conversation_id, *params),
        )
        return [decode_block_row(body, conversation_id, bid) for bid, body in rows]

    def get_block(self, conversation_id: str, block_id: str) -> Block:
        found = self._blocks(conversation_id, "AND block_id = %s", (block_id,))
        if not found:
            raise NotFoundError(
                f"no block {block_id!r} in conversation {conversation_id!r}",
                conversation_id=conversation_id,
                block_id=block_id,
            )
        return found[0]

    def read(self, conversation_id: str, path: str) -> list[Block]:
        return self._blocks(conversation_id, "AND path = %s", (path,))

    def turn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]:
        if turn_id is None:
            return self._blocks(conversation_id, "AND kind = 'log'", ())
        return self._blocks(conversation_id, "AND kind = 'log' AND turn_id = %s", (turn_id,))

    def summaries(self, conversation_id: str) -> list[Block]:
        return self._blocks(conversation_id, "AND kind = 'summary'", ())

    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        rows: list[Any] = []
        for joiner in (" & ", " | "):
            rows = self._rows(
                "SELECT block_id, kind, body, ts_headline('english', text, q, "
                "'StartSel=[, StopSel=], MaxWords=24, MinWords=8'), ts_rank(tsv, q) "
                "FROM bt_blocks, to_tsquery('english', %s) q "
                "WHERE conversation_id = %s AND tsv @@ q "
                "ORDER BY kind = 'summary', ts_rank(tsv, q) DESC, seq LIMIT %s",
                (joiner.join(terms), conversation_id, limit),
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
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO bt_checkpoints (conversation_id, checkpoint_id, block_count, body) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (conversation_id, checkpoint_id) DO UPDATE "
                "SET created_at = now(), block_count = excluded.block_count, body = excluded.body",
                (
                    conversation_id,
                    checkpoint_id,
                    len(snapshot.blocks),
                    encode_snapshot_row(snapshot),
                ),
            )

    def load_checkpoint(self, conversation_id: str, checkpoint_id: str) -> TimelineSnapshot:
        rows = self._rows(
            "SELECT body FROM bt_checkpoints WHERE conversation_id = %s AND checkpoint_id = %s",
            (conversation_id, checkpoint_id),
        )
        if not rows:
            raise NotFoundError(
                f"no checkpoint {checkpoint_id!r} for conversation {conversation_id!r}",
                conversation_id=conversation_id,
            )
        return decode_snapshot_row(rows[0][0], conversation_id, f"checkpoint {checkpoint_id!r}")

    def list_checkpoints(self, conversation_id: str) -> list[CheckpointInfo]:
        rows = self._rows(
            "SELECT checkpoint_id, created_at, block_count FROM bt_checkpoints "
            "WHERE conversation_id = %s ORDER BY checkpoint_id",
            (conversation_id,),
        )
        return [
            CheckpointInfo(
                cid, created.isoformat(timespec="milliseconds").replace("+00:00", "Z"), count
            )
            for cid, created, count in rows
        ]

    def delete_checkpoint(self, conversation_id: str, checkpoint_id: str) -> bool:
        with self._tx() as cur:
            cur.execute(
                "DELETE FROM bt_checkpoints WHERE conversation_id = %s AND checkpoint_id = %s",
                (conversation_id, checkpoint_id),
            )
            return bool(cur.rowcount)

    def delete(self, conversation_id: str) -> bool:
        with self._tx() as cur:
            n = 0
            for table in ("bt_conversations", "bt_blocks", "bt_checkpoints"):
                cur.execute(f"DELETE FROM {table} WHERE conversation_id = %s", (conversation_id,))
                n += cur.rowcount
            return n > 0

    def conversations(self) -> list[str]:
        rows = self._rows(
            "SELECT conversation_id FROM bt_conversations WHERE live_window IS NOT NULL ORDER BY 1",
            (),
        )
        return [r[0] for r in rows]

    def check_integrity(self) -> None:
        for cid in self.conversations():
            self.load_window(cid)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
