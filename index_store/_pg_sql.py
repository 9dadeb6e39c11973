"""PostgreSQL statements and error translation shared by the sync store and its async
twin.

Schema 2 keeps each block's text once, in ``bt_text`` pieces of at most
:data:`PIECE_CHARS` characters cut at whitespace; the block row's body holds the rest of
the block (framed, :mod:`index_store._rows`). Schema 2 also had an expression GIN index
over each piece's words (``bt_text_search``, which the upgrade to schema 3 drops); schema
3 searches the analysed terms of :mod:`index_store._pg_search`.
"""

from __future__ import annotations

from typing import Final

from index_store._pieces import PIECE_CHARS, pieces
from timeline._model import StoreError

__all__ = [
    "LOCK_INSERT",
    "LOCK_SELECT",
    "PIECE_CHARS",
    "ROW_SELECT",
    "TEXT_TABLE",
    "WRITE_WINDOW",
    "failed",
    "pieces",
]

TEXT_TABLE: Final = """CREATE TABLE bt_text (
        seq BIGINT NOT NULL,
        piece INTEGER NOT NULL,
        conversation_id TEXT NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (seq, piece))"""

ROW_SELECT: Final = (
    "block_id, kind, turn_id, path, type, body, (SELECT string_agg(p.text, '' ORDER BY "
    "p.piece) FROM bt_text p WHERE p.seq = bt_blocks.seq)"
)
"""A block row with its text put back together from its pieces."""

INSERT_BLOCK: Final = (
    "INSERT INTO bt_blocks (conversation_id, block_id, kind, turn_id, path, type, body) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (conversation_id, block_id) DO NOTHING "
    "RETURNING seq"
)
INSERT_PIECE: Final = (
    "INSERT INTO bt_text (seq, piece, conversation_id, text) VALUES (%s, %s, %s, %s)"
)


# a placeholder row (rolled back with the transaction on conflict) so that two first
# writers serialize on the row lock too
LOCK_INSERT: Final = (
    "INSERT INTO bt_conversations (conversation_id, version) VALUES (%s, 0) "
    "ON CONFLICT (conversation_id) DO NOTHING"
)
LOCK_SELECT: Final = "SELECT version FROM bt_conversations WHERE conversation_id = %s FOR UPDATE"
WRITE_WINDOW: Final = (
    "UPDATE bt_conversations SET version = %s, live_window = %s, updated_at = now() "
    "WHERE conversation_id = %s"
)


def failed(exc: Exception, conversation_id: str | None) -> StoreError:
    """The StoreError for a failed transaction (statement or ``COMMIT``): where, why, and
    what to do. psycopg rolled the transaction back and the connection stays usable."""
    about = f" (conversation {conversation_id!r})" if conversation_id is not None else ""
    return StoreError(
        f"PostgreSQL store{about}: {exc}; rolled back, nothing of it was written and the "
        "store stays usable: retry",
        conversation_id=conversation_id,
    )
