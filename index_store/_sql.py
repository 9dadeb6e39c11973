"""What the SQL backends share: every query but search, written once.

Subclasses give the dialect: placeholder, table names, how a transaction runs, how the
conversation row is locked and written, how a block row is inserted, and full-text
search. Shared SQL is written with ``?`` placeholders and ``{blocks}``/``{conversations}``/
``{checkpoints}`` table names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any, ClassVar

from index_store._common import (
    assemble_window,
    check_keys,
    check_same,
    check_version,
    decode_window,
    encode_window,
    frame_runs,
    stored_version,
    utc_now_text,
)
from index_store._rows import Base, BlockCodec, Row, as_rows
from index_store._sql_checkpoints import SqlCheckpoints
from index_store._window import RefRuns, WindowRecord
from timeline._model import (
    CONV_RANGE_SUMMARY,
    PLAN_LATEST,
    REACT_PLAN,
    Block,
    DuplicateBlockIdError,
    NotFoundError,
    TimelineSnapshot,
    TimelineState,
)

__all__ = ["ROW_COLUMNS", "STREAM_CHUNK", "SqlStore", "utc_now_text"]

ROW_COLUMNS = "block_id, kind, turn_id, path, type, body"
"""The columns of a block row, in :class:`~index_store._rows.Row` order."""


STREAM_CHUNK = 1024
"""Blocks a streamed commit writes (and SQLite indexes) at a time."""


class SqlStore(SqlCheckpoints):
    """Queries shared by the SQLite and PostgreSQL stores."""

    PLACEHOLDER: ClassVar[str] = "?"
    TABLES: ClassVar[dict[str, str]] = {
        "blocks": "blocks",
        "conversations": "conversations",
        "checkpoints": "checkpoints",
    }
    ORDER: ClassVar[str] = "seq"
    """The column that orders blocks as they were stored."""
    WINDOW_KEYS: ClassVar[str] = ""
    """Columns of the conversation row (after the version) its window's checksum covers."""
    ROW_SELECT: ClassVar[str] = ROW_COLUMNS
    """What a query of block rows selects (:class:`~index_store._rows.Row` order)."""
    TEXT_APART: ClassVar[bool] = False
    """Whether block texts live outside the body (PostgreSQL's search pieces)."""

    # -- dialect ----------------------------------------------------------------------

    def _tx(self, conversation_id: str | None = None) -> AbstractContextManager[Any]:
        """A transaction; yields an object with ``execute(sql, params) -> cursor``. It
        commits inside its error translation: a failed ``COMMIT`` rolls back, raises
        StoreError naming ``conversation_id``, and leaves the store usable."""
        raise NotImplementedError

    def _query(
        self, sql: str, params: Sequence[Any] = (), conversation_id: str | None = None
    ) -> list[Any]:
        raise NotImplementedError

    def _lock_version(self, db: Any, conversation_id: str) -> tuple[int, Any]:
        """The stored version (0 if none), locked for the rest of the transaction, and
        what the backend needs to write the conversation's rows (its window key)."""
        raise NotImplementedError

    def _insert(self, db: Any, conversation_id: str, row: Row, block: Block, at: Any) -> int | None:
        """Insert one block row; its ``seq``, None when the id is taken (nothing written)."""
        raise NotImplementedError

    def _vectors_of(self, conversation_id: str, blocks: Sequence[Block]) -> dict[str, bytes]:
        """The vectors of the blocks an embedder ranks by meaning, by block id (none
        without an embedder: :class:`~index_store._sql_vectors.SqlVectors`)."""
        return {}

    def _put_vectors(self, db: Any, conversation_id: str, rows: list[tuple[int, bytes]]) -> None:
        """Store the vectors of rows just written."""

    def _streaming(self, at: Any) -> None:
        """A streamed commit begins (SQLite then indexes long texts from their rows)."""

    def _inserted(self, db: Any, conversation_id: str, at: Any) -> None:
        """After a commit's inserts, before its window (SQLite brings its index up to
        date here)."""

    def _write_window(self, db: Any, conversation_id: str, version: int, row: bytes) -> None:
        raise NotImplementedError

    def _window_keys(self, at: Any) -> tuple[str | int, ...]:
        return ()

    def _of(self, conversation_id: str, *, keyed: bool = False) -> tuple[str, tuple[str, ...]]:
        """The condition that a block row is one of the conversation's, and its parameters:
        ``keyed`` for a lookup that also names a block id, turn or path, else for a scan of
        all its rows in order (SQLite keys rows by the conversation's number)."""
        return "conversation_id = ?", (conversation_id,)

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
        vectors = self._vectors_of(conversation_id, log)  # before the write lock is taken
        with self._tx(conversation_id) as db:
            actual, at = self._lock_version(db, conversation_id)
            check_version(conversation_id, expected_version, actual)
            self._append(db, conversation_id, log, summaries, at, vectors=vectors)
            row = encode_window(window, actual + 1, *self._window_keys(at))
            self._write_window(db, conversation_id, actual + 1, row)
        return actual + 1

    def commit_stream(
        self,
        conversation_id: str,
        *,
        blocks: Iterable[Block],
        finish: Callable[[], TimelineState],
    ) -> int:
        """A new conversation whose window is ``blocks``, in order, written as they come in
        one transaction, :data:`STREAM_CHUNK` at a time: what a conversation bigger than
        memory needs (``timeline import``). ``finish`` is called once every block is
        written and gives the state stored with the window. An error from ``blocks`` or
        ``finish`` (bad input late in a file) rolls everything back: nothing is stored.
        Returns version 1; ConflictError when the conversation exists."""
        check_keys(conversation_id=conversation_id)
        with self._tx(conversation_id) as db:
            actual, at = self._lock_version(db, conversation_id)
            check_version(conversation_id, 0, actual)
            self._streaming(at)
            runs, source = RefRuns(), iter(blocks)
            while group := list(islice(source, STREAM_CHUNK)):
                runs.extend((b.id, b.hidden, b.replacement_text) for b in group)
                log = [b for b in group if b.type != CONV_RANGE_SUMMARY]
                summaries = [b for b in group if b.type == CONV_RANGE_SUMMARY]
                del group
                vectors = self._vectors_of(conversation_id, log)
                self._append(db, conversation_id, log, summaries, at, fresh=True, vectors=vectors)
                del log, summaries  # no block of the chunk is held while it is indexed
                self._inserted(db, conversation_id, at)
            record = WindowRecord(conversation_id, runs.done(), finish())
            self._write_window(
                db, conversation_id, 1, frame_runs(record, 1, *self._window_keys(at))
            )
        return 1

    def _append(
        self,
        db: Any,
        conversation_id: str,
        log: Sequence[Block],
        summaries: Sequence[Block],
        at: Any,
        fresh: bool = False,
        vectors: Mapping[str, bytes] | None = None,
    ) -> None:
        """Insert the commit's blocks (with their ``vectors``, by block id); a summary is
        stored against the previous one. An id already stored is fine when it holds this
        very block (a re-persist after ``restore``; never when ``fresh``), a
        DuplicateBlockIdError otherwise."""
        codec = BlockCodec(
            conversation_id,
            lambda ids: self._rows_by_id(db, conversation_id, ids),
            text_apart=self.TEXT_APART,
        )
        base: Base | None = None
        if summaries:
            of, params = self._of(conversation_id)
            latest = self._row_list(
                db,
                f"SELECT {self.ROW_SELECT} FROM {{blocks}} WHERE {of} "
                f"AND kind = 'summary' ORDER BY {self.ORDER} DESC LIMIT 1",
                params,
            )
            base = codec.base_of(latest[0]) if latest else None
        embedded: list[tuple[int, bytes]] = []
        for kind, group in (("log", log), ("summary", summaries)):
            for block in group:
                row, after = codec.encode(kind, block, base if kind == "summary" else None)
                seq = self._insert(db, conversation_id, row, block, at)
                if seq is not None:
                    if kind == "summary":
                        base = after
                    elif vectors and block.id in vectors:
                        embedded.append((seq, vectors[block.id]))
                    continue
                if fresh:
                    raise DuplicateBlockIdError(
                        f"block id {block.id!r} appears twice in conversation {conversation_id!r}",
                        conversation_id=conversation_id,
                        block_id=block.id,
                    )
                stored = self._rows_by_id(db, conversation_id, [block.id])
                check_same(conversation_id, block, codec.decode(stored[0]))
        if embedded:
            self._put_vectors(db, conversation_id, embedded)
        if not fresh:  # a streamed commit indexes once it let the blocks go
            self._inserted(db, conversation_id, at)

    def _row_list(self, db: Any, sql: str, params: Sequence[Any]) -> list[Row]:
        return as_rows(db.execute(self._sql(sql), params).fetchall())

    def _rows_by_id(self, db: Any, conversation_id: str, ids: Sequence[str]) -> list[Row]:
        out: list[Row] = []
        of, params = self._of(conversation_id, keyed=True)
        for chunk in _chunks(list(ids), 500):
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT {self.ROW_SELECT} FROM {{blocks}} WHERE {of} AND block_id IN ({marks})"
            if db is None:
                out += as_rows(self._query(self._sql(sql), (*params, *chunk), conversation_id))
            else:
                out += self._row_list(db, sql, (*params, *chunk))
        return out

    def _codec(self, conversation_id: str) -> BlockCodec:
        """A codec that reads a summary's bases with separate queries."""
        return BlockCodec(
            conversation_id,
            lambda ids: self._rows_by_id(None, conversation_id, ids),
            text_apart=self.TEXT_APART,
        )

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        check_keys(conversation_id=conversation_id)
        keys = f", {self.WINDOW_KEYS}" if self.WINDOW_KEYS else ""
        rows = self._query(
            self._sql(
                f"SELECT version, live_window{keys} FROM {{conversations}} "
                "WHERE conversation_id = ? AND live_window IS NOT NULL"
            ),
            (conversation_id,),
            conversation_id,
        )
        if not rows:
            return None
        version, raw, *extra = rows[0]
        return self._assemble(conversation_id, version, raw, extra)

    def _assemble(
        self, conversation_id: str, version: Any, raw: Any, extra: Sequence[Any]
    ) -> tuple[int, TimelineSnapshot]:
        """The version and window of a conversation row, with the blocks it names."""
        record = decode_window(raw, conversation_id, version, *extra)
        version = stored_version(version, conversation_id)
        codec = self._codec(conversation_id)
        found = self._rows_by_id(None, conversation_id, [r.id for r in record.refs])
        blocks = {b.id: b for b in codec.decode_all(found)}
        return version, assemble_window(record, blocks)

    def _blocks(
        self, conversation_id: str, where: str, params: Sequence[Any], keyed: bool = False
    ) -> list[Block]:
        of, first = self._of(conversation_id, keyed=keyed)
        sql = f"SELECT {self.ROW_SELECT} FROM {{blocks}} WHERE {of} {where} ORDER BY {self.ORDER}"
        rows = self._query(self._sql(sql), (*first, *params), conversation_id)
        return self._codec(conversation_id).decode_all(as_rows(rows))

    def get_block(self, conversation_id: str, block_id: str) -> Block:
        check_keys(conversation_id=conversation_id, block_id=block_id)
        found = self._blocks(conversation_id, "AND block_id = ?", (block_id,), keyed=True)
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
        return self._blocks(conversation_id, "AND path = ?", (path,), keyed=True)

    def turn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]:
        check_keys(conversation_id=conversation_id, turn_id=turn_id)
        if turn_id is None:
            return self._blocks(conversation_id, "AND kind = 'log'", ())
        where = "AND kind = 'log' AND turn_id = ?"
        return self._blocks(conversation_id, where, (turn_id,), keyed=True)

    def summaries(self, conversation_id: str) -> list[Block]:
        check_keys(conversation_id=conversation_id)
        return self._blocks(conversation_id, "AND kind = 'summary'", ())

    def delete(self, conversation_id: str) -> bool:
        """Remove everything of one conversation (window, log, summaries, checkpoints)."""
        check_keys(conversation_id=conversation_id)
        of, params = self._of(conversation_id)  # may read the conversation row: blocks first
        with self._tx(conversation_id) as db:
            removed: int = db.execute(
                self._sql(f"DELETE FROM {{blocks}} WHERE {of}"), params
            ).rowcount
            for table in ("conversations", "checkpoints"):
                sql = f"DELETE FROM {{{table}}} WHERE conversation_id = ?"
                removed += db.execute(self._sql(sql), (conversation_id,)).rowcount
            self._deleted(db, conversation_id)
        return removed > 0

    def _deleted(self, db: Any, conversation_id: str) -> None:
        """After a conversation's rows were deleted, inside the same transaction."""

    def conversations(self) -> list[str]:
        sql = "SELECT conversation_id FROM {conversations} WHERE live_window IS NOT NULL ORDER BY 1"
        return [r[0] for r in self._query(self._sql(sql))]


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
