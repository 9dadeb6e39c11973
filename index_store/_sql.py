"""What the SQL backends share: every query but search, written once.

Subclasses give the dialect: placeholder, table names, how a transaction runs, how the
conversation row is locked and written, and full-text search. Shared SQL is written with
``?`` placeholders and ``{blocks}``/``{conversations}``/``{checkpoints}`` table names.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, ClassVar

from index_store._common import (
    assemble_window,
    check_duplicate,
    check_keys,
    decode_block_row,
    decode_snapshot_row,
    decode_window_row,
    encode_block_row,
    encode_snapshot_row,
    encode_window_row,
    stored_version,
)
from timeline.model.block import PLAN_LATEST, REACT_PLAN, Block
from timeline.model.errors import ConflictError, CorruptRecordError, NotFoundError
from timeline.model.persistence import CheckpointInfo, TimelineSnapshot

__all__ = ["SqlStore", "utc_now_text"]


def utc_now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SqlStore:
    """Queries shared by the SQLite and PostgreSQL stores."""

    PLACEHOLDER: ClassVar[str] = "?"
    TABLES: ClassVar[dict[str, str]] = {
        "blocks": "blocks",
        "conversations": "conversations",
        "checkpoints": "checkpoints",
    }
    ORDER: ClassVar[str] = "rowid"
    """The column that orders blocks as they were stored."""

    # -- dialect ----------------------------------------------------------------------

    def _tx(self, conversation_id: str | None = None) -> AbstractContextManager[Any]:
        """A transaction; yields an object with ``execute(sql, params) -> cursor``. It
        commits inside its error translation: a failed ``COMMIT`` rolls back, raises
        StoreError naming ``conversation_id``, and leaves the store usable."""
        raise NotImplementedError

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _lock_version(self, db: Any, conversation_id: str) -> int:
        """The stored version (0 if none), locked for the rest of the transaction."""
        raise NotImplementedError

    def _write_window(self, db: Any, conversation_id: str, version: int, row: bytes) -> None:
        raise NotImplementedError

    def _clean_text(self, text: str) -> str:
        """Text as the full-text column can hold it."""
        return text

    def _created_text(self, value: Any) -> str:
        return str(value)

    # -- shared -----------------------------------------------------------------------

    def _sql(self, sql: str) -> str:
        return sql.format(**self.TABLES).replace("?", self.PLACEHOLDER)

    def commit(
        self,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int:
        check_keys(conversation_id=conversation_id)
        window_row = encode_window_row(window)
        insert = self._sql(
            "INSERT INTO {blocks} (conversation_id, block_id, kind, turn_id, path, type, text,"
            " body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (conversation_id, block_id) DO NOTHING"
        )
        stored = self._sql("SELECT body FROM {blocks} WHERE conversation_id = ? AND block_id = ?")
        with self._tx(conversation_id) as db:
            actual = self._lock_version(db, conversation_id)
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
                    row = (
                        conversation_id,
                        b.id,
                        kind,
                        b.turn_id,
                        b.path,
                        b.type,
                        self._clean_text(b.text),
                        encode_block_row(b),
                    )
                    if not db.execute(insert, row).rowcount:
                        # the id is taken: fine only if it is this very block
                        existing = db.execute(stored, (conversation_id, b.id)).fetchone()
                        check_duplicate(conversation_id, b, existing[0])
            self._write_window(db, conversation_id, actual + 1, window_row)
        return actual + 1

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        check_keys(conversation_id=conversation_id)
        rows = self._query(
            self._sql(
                "SELECT version, live_window FROM {conversations} "
                "WHERE conversation_id = ? AND live_window IS NOT NULL"
            ),
            (conversation_id,),
        )
        if not rows:
            return None
        version, window = rows[0]
        record = decode_window_row(window, conversation_id)
        version = stored_version(version, conversation_id)
        ids = [r.id for r in record.refs]
        blocks: dict[str, Block] = {}
        for chunk in _chunks(ids, 500):
            marks = ", ".join("?" * len(chunk))
            sql = (
                "SELECT block_id, body FROM {blocks} WHERE conversation_id = ? "
                f"AND block_id IN ({marks})"
            )
            for bid, body in self._query(self._sql(sql), (conversation_id, *chunk)):
                blocks[bid] = decode_block_row(body, conversation_id, bid)
        return version, assemble_window(record, blocks)

    def _blocks(self, conversation_id: str, where: str, params: Sequence[Any]) -> list[Block]:
        sql = (
            "SELECT block_id, body FROM {blocks} WHERE conversation_id = ? "
            f"{where} ORDER BY {self.ORDER}"
        )
        rows = self._query(self._sql(sql), (conversation_id, *params))
        return [decode_block_row(body, conversation_id, bid) for bid, body in rows]

    def get_block(self, conversation_id: str, block_id: str) -> Block:
        check_keys(conversation_id=conversation_id, block_id=block_id)
        found = self._blocks(conversation_id, "AND block_id = ?", (block_id,))
        if not found:
            raise NotFoundError(
                f"no block {block_id!r} in conversation {conversation_id!r}",
                conversation_id=conversation_id,
                block_id=block_id,
            )
        return found[0]

    def read(self, conversation_id: str, path: str) -> list[Block]:
        check_keys(conversation_id=conversation_id, path=path)
        if path == PLAN_LATEST:  # the alias: the newest react.plan block
            return self._blocks(conversation_id, "AND type = ?", (REACT_PLAN,))[-1:]
        return self._blocks(conversation_id, "AND path = ?", (path,))

    def turn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]:
        check_keys(conversation_id=conversation_id, turn_id=turn_id)
        if turn_id is None:
            return self._blocks(conversation_id, "AND kind = 'log'", ())
        return self._blocks(conversation_id, "AND kind = 'log' AND turn_id = ?", (turn_id,))

    def summaries(self, conversation_id: str) -> list[Block]:
        check_keys(conversation_id=conversation_id)
        return self._blocks(conversation_id, "AND kind = 'summary'", ())

    def save_checkpoint(
        self, conversation_id: str, checkpoint_id: str, snapshot: TimelineSnapshot
    ) -> None:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        with self._tx(conversation_id) as db:
            db.execute(
                self._sql(
                    "INSERT INTO {checkpoints} (conversation_id, checkpoint_id, created_at, "
                    "block_count, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT "
                    "(conversation_id, checkpoint_id) DO UPDATE SET created_at = "
                    "excluded.created_at, block_count = excluded.block_count, body = excluded.body"
                ),
                (
                    conversation_id,
                    checkpoint_id,
                    utc_now_text(),
                    len(snapshot.blocks),
                    encode_snapshot_row(snapshot),
                ),
            )

    def load_checkpoint(self, conversation_id: str, checkpoint_id: str) -> TimelineSnapshot:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        rows = self._query(
            self._sql(
                "SELECT body FROM {checkpoints} WHERE conversation_id = ? AND checkpoint_id = ?"
            ),
            (conversation_id, checkpoint_id),
        )
        if not rows:
            raise NotFoundError(
                f"no checkpoint {checkpoint_id!r} for conversation {conversation_id!r}",
                conversation_id=conversation_id,
            )
        return decode_snapshot_row(rows[0][0], conversation_id, f"checkpoint {checkpoint_id!r}")

    def list_checkpoints(self, conversation_id: str) -> list[CheckpointInfo]:
        check_keys(conversation_id=conversation_id)
        rows = self._query(
            self._sql(
                "SELECT checkpoint_id, created_at, block_count FROM {checkpoints} "
                "WHERE conversation_id = ? ORDER BY checkpoint_id"
            ),
            (conversation_id,),
        )
        return [CheckpointInfo(cid, self._created_text(at), int(n)) for cid, at, n in rows]

    def delete_checkpoint(self, conversation_id: str, checkpoint_id: str) -> bool:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        with self._tx(conversation_id) as db:
            sql = "DELETE FROM {checkpoints} WHERE conversation_id = ? AND checkpoint_id = ?"
            return bool(db.execute(self._sql(sql), (conversation_id, checkpoint_id)).rowcount)

    def delete(self, conversation_id: str) -> bool:
        """Remove everything of one conversation (window, log, summaries, checkpoints)."""
        check_keys(conversation_id=conversation_id)
        removed = 0
        with self._tx(conversation_id) as db:
            for table in ("conversations", "blocks", "checkpoints"):
                sql = f"DELETE FROM {{{table}}} WHERE conversation_id = ?"
                removed += db.execute(self._sql(sql), (conversation_id,)).rowcount
        return removed > 0

    def conversations(self) -> list[str]:
        sql = "SELECT conversation_id FROM {conversations} WHERE live_window IS NOT NULL ORDER BY 1"
        return [r[0] for r in self._query(self._sql(sql))]

    def check_integrity(self) -> list[CorruptRecordError]:
        """Every window, block row and checkpoint decoding; the problems found, one
        :class:`CorruptRecordError` each naming conversation and row (empty: all good)."""
        problems: list[CorruptRecordError] = []
        for cid in self.conversations():
            try:
                self.load_window(cid)
            except CorruptRecordError as exc:
                problems.append(exc)
        for cid, bid, body in self._query(
            self._sql(
                f"SELECT conversation_id, block_id, body FROM {{blocks}} ORDER BY {self.ORDER}"
            )
        ):
            try:
                decode_block_row(body, cid, bid)
            except CorruptRecordError as exc:
                problems.append(exc)
        sql = "SELECT conversation_id, checkpoint_id, body FROM {checkpoints} ORDER BY 1, 2"
        for cid, name, body in self._query(self._sql(sql)):
            try:
                decode_snapshot_row(body, cid, f"checkpoint {name!r}")
            except CorruptRecordError as exc:
                problems.append(exc)
        return problems


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
