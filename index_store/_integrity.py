"""``check_integrity`` of the SQL stores: every window, block row and checkpoint decoded
from the raw rows (never through the readers, which refuse a damaged key before reading).

Each window that does not load (it is damaged, or names a block that is missing or
damaged: its first problem), then each block row whose bytes, key columns or checksum were
damaged (or whose base summary is gone), then each damaged checkpoint: one
:class:`CorruptRecordError` each, naming conversation and row. Rows are read as a stream,
one conversation at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any, ClassVar

from index_store._common import decode_checkpoint
from index_store._rows import BlockCodec, Row
from timeline._model import CorruptRecordError

__all__ = ["SqlIntegrity"]


class SqlIntegrity:
    """Mixin for :class:`~index_store._sql.SqlStore` subclasses."""

    WINDOW_KEYS: ClassVar[str]
    ORDER: ClassVar[str]
    ROW_SELECT: ClassVar[str]
    ROWS_IN_ORDER: ClassVar[str] = ""
    """The query of every block row, its conversation's id first, one conversation after
    another (empty: the rows' own ``conversation_id`` column, PostgreSQL's)."""

    if TYPE_CHECKING:  # provided by SqlStore and the backend

        def _sql(self, sql: str) -> str: ...

        def _stream(self, sql: str) -> Iterator[Sequence[Any]]: ...

        def _codec(self, conversation_id: str) -> BlockCodec: ...

        def _created_text(self, value: Any) -> str: ...

        def _assemble(self, cid: str, version: Any, raw: Any, extra: Sequence[Any]) -> Any: ...

    def check_integrity(self) -> list[CorruptRecordError]:
        """Every window, block row and checkpoint decoding; the problems found, one
        :class:`CorruptRecordError` each naming conversation and row (empty: all good)."""
        problems: list[CorruptRecordError] = []
        for check in (self._check_windows, self._check_rows, self._check_checkpoints):
            try:
                check(problems)
            except CorruptRecordError as exc:  # a damaged page cut the scan short
                problems.append(exc)
        return problems

    def _check_windows(self, problems: list[CorruptRecordError]) -> None:
        """Each window and the blocks it names (the first problem of each window)."""
        keys = f", {self.WINDOW_KEYS}" if self.WINDOW_KEYS else ""
        sql = f"SELECT conversation_id, version, live_window{keys} FROM {{conversations}}"
        for cid, version, raw, *extra in self._stream(self._sql(sql + " ORDER BY 1")):
            if raw is None:
                continue
            try:
                self._assemble(cid, version, raw, extra)
            except CorruptRecordError as exc:
                problems.append(exc)
            except UnicodeError as exc:
                problems.append(
                    CorruptRecordError(
                        f"conversation {cid!r} has a damaged id ({exc})", conversation_id=cid
                    )
                )

    def _check_rows(self, problems: list[CorruptRecordError]) -> None:
        sql = self.ROWS_IN_ORDER or self._sql(
            f"SELECT conversation_id, {self.ROW_SELECT} FROM {{blocks}} "
            f"ORDER BY conversation_id, {self.ORDER}"
        )
        for cid, rows in groupby(self._stream(sql), key=lambda r: r[0]):
            problems += _check_conversation(self._codec(cid), (Row(*r[1:]) for r in rows))

    def _check_checkpoints(self, problems: list[CorruptRecordError]) -> None:
        sql = self._sql(
            "SELECT conversation_id, checkpoint_id, created_at, block_count, body "
            "FROM {checkpoints} ORDER BY 1, 2"
        )
        for cid, name, created, count, body in self._stream(sql):
            try:
                decode_checkpoint(body, cid, name, self._created_text(created), count)
            except CorruptRecordError as exc:
                problems.append(exc)


def _check_conversation(codec: BlockCodec, rows: Iterable[Row]) -> list[CorruptRecordError]:
    problems: list[CorruptRecordError] = []
    for row in rows:
        try:
            codec.decode_all([row])
        except CorruptRecordError as exc:
            problems.append(exc)
    return problems
