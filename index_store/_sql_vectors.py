"""The vectors of the SQL stores given an :class:`~timeline.Embedder`
(:mod:`index_store._vectors`): computed before a commit takes its write lock, stored
with the rows, and filled in for rows that lack them (:meth:`SqlVectors.embed_missing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

from index_store._common import check_keys
from index_store._rows import BlockCodec
from index_store._vectors import embeddable, model_of, try_vectors
from timeline._model import Block, Embedder

__all__ = ["SqlVectors"]


class SqlVectors:
    """Mixin for :class:`~index_store._sql.SqlStore` subclasses (which hold
    ``embedder``)."""

    embedder: Embedder | None
    VECTOR_PUT: ClassVar[str] = ""
    """Stores one row's vector: parameters ``seq``, conversation id, model, vector."""

    if TYPE_CHECKING:  # provided by SqlStore and the backend

        def _sql(self, sql: str) -> str: ...

        def _tx(self, conversation_id: str | None = None) -> AbstractContextManager[Any]: ...

        def _codec(self, conversation_id: str) -> BlockCodec: ...

        def _missing_vectors(self, conversation_id: str, model: str) -> list[tuple[int, Block]]:
            """The conversation's turn-log rows with no vector of ``model``."""
            ...

    def _vectors_of(self, conversation_id: str, blocks: Sequence[Block]) -> dict[str, bytes]:
        """The vectors of the blocks, by block id (none without an embedder, or when it
        fails: the blocks are stored all the same, searched by words)."""
        if self.embedder is None:
            return {}
        texts = [(b.id, t) for b in blocks if (t := embeddable(b)) is not None]
        if not texts:
            return {}
        got = try_vectors(self.embedder, conversation_id, [t for _, t in texts], "storing blocks")
        return {} if got is None else {i: v for (i, _), v in zip(texts, got, strict=True)}

    def _put_vectors(self, db: Any, conversation_id: str, rows: list[tuple[int, bytes]]) -> None:
        if self.embedder is None:
            return
        model = model_of(self.embedder)
        db.executemany(
            self._sql(self.VECTOR_PUT), [(seq, conversation_id, model, v) for seq, v in rows]
        )

    def embed_missing(self, conversation_id: str) -> int:
        """Embed the conversation's turn-log blocks that have no vector of this store's
        embedder (blocks stored before it was set, or by another model); how many were."""
        check_keys(conversation_id=conversation_id)
        if self.embedder is None:
            return 0
        missing = self._missing_vectors(conversation_id, model_of(self.embedder))
        texts = [(seq, t) for seq, b in missing if (t := embeddable(b)) is not None]
        got = try_vectors(
            self.embedder, conversation_id, [t for _, t in texts], "embedding stored blocks"
        )
        if not got:
            return 0
        rows = [(seq, v) for (seq, _), v in zip(texts, got, strict=True)]
        with self._tx(conversation_id) as db:
            self._put_vectors(db, conversation_id, rows)
        return len(rows)
