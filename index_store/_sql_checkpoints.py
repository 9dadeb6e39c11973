"""Checkpoints of whole timelines in the SQL stores (save, load, list, delete by id),
written once for SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from index_store._common import check_keys, decode_checkpoint, encode_checkpoint, utc_now_text
from timeline._model import CheckpointInfo, CorruptRecordError, NotFoundError, TimelineSnapshot

__all__ = ["SqlCheckpoints"]


class SqlCheckpoints:
    """Mixin for :class:`~index_store._sql.SqlStore`."""

    if TYPE_CHECKING:  # provided by SqlStore and the backend

        def _sql(self, sql: str) -> str: ...

        def _tx(self, conversation_id: str | None = None) -> AbstractContextManager[Any]: ...

        def _query(
            self, sql: str, params: Sequence[Any] = (), conversation_id: str | None = None
        ) -> list[Any]: ...

        def _created_text(self, value: Any) -> str: ...

    def save_checkpoint(
        self, conversation_id: str, checkpoint_id: str, snapshot: TimelineSnapshot
    ) -> None:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        created = utc_now_text()
        body = encode_checkpoint(snapshot, conversation_id, checkpoint_id, created)
        with self._tx(conversation_id) as db:
            db.execute(
                self._sql(
                    "INSERT INTO {checkpoints} (conversation_id, checkpoint_id, created_at, "
                    "block_count, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT "
                    "(conversation_id, checkpoint_id) DO UPDATE SET created_at = "
                    "excluded.created_at, block_count = excluded.block_count, body = excluded.body"
                ),
                (conversation_id, checkpoint_id, created, len(snapshot.blocks), body),
            )

    def load_checkpoint(self, conversation_id: str, checkpoint_id: str) -> TimelineSnapshot:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        rows = self._query(
            self._sql(
                "SELECT created_at, block_count, body FROM {checkpoints} "
                "WHERE conversation_id = ? AND checkpoint_id = ?"
            ),
            (conversation_id, checkpoint_id),
            conversation_id,
        )
        if not rows:
            raise NotFoundError(
                f"no checkpoint {checkpoint_id!r} for conversation {conversation_id!r}",
                conversation_id=conversation_id,
            )
        created, count, body = rows[0]
        return decode_checkpoint(
            body, conversation_id, checkpoint_id, self._created_text(created), count
        )

    def list_checkpoints(self, conversation_id: str) -> list[CheckpointInfo]:
        check_keys(conversation_id=conversation_id)
        rows = self._query(
            self._sql(
                "SELECT checkpoint_id, created_at, block_count FROM {checkpoints} "
                "WHERE conversation_id = ? ORDER BY checkpoint_id"
            ),
            (conversation_id,),
            conversation_id,
        )
        out = []
        for cid, at, n in rows:
            if isinstance(n, bool) or not isinstance(n, int):
                raise CorruptRecordError(
                    f"checkpoint {cid!r} of conversation {conversation_id!r} has block count "
                    f"{n!r}; the rest of the store is unaffected",
                    conversation_id=conversation_id,
                )
            out.append(CheckpointInfo(cid, self._created_text(at), n))
        return out

    def delete_checkpoint(self, conversation_id: str, checkpoint_id: str) -> bool:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        with self._tx(conversation_id) as db:
            sql = "DELETE FROM {checkpoints} WHERE conversation_id = ? AND checkpoint_id = ?"
            return bool(db.execute(self._sql(sql), (conversation_id, checkpoint_id)).rowcount)
