"""PostgreSQL statements and error translation shared by the sync store and its async
twin."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from index_store._common import decode_block_row
from timeline.model.errors import StoreError
from timeline.model.persistence import SearchHit

__all__ = [
    "INDEX_BYTES",
    "LOCK_INSERT",
    "LOCK_SELECT",
    "SEARCH",
    "WRITE_WINDOW",
    "failed",
    "index_text",
    "search_hits",
]

INDEX_BYTES: Final = 262_144
"""UTF-8 bytes of a block's text that PostgreSQL indexes for search. A ``tsvector`` holds
at most 1 MB and takes up to ~3 bytes per byte of text, so a longer text would make the
insert (and every later persist) fail; the whole text is kept in the stored block."""


def index_text(text: str) -> str:
    """The part of ``text`` the search column holds: NUL removed (``text`` cannot hold
    it), cut at :data:`INDEX_BYTES` on a character boundary."""
    text = text.replace("\x00", "")
    if len(text) * 4 <= INDEX_BYTES:
        return text
    return text.encode("utf-8")[:INDEX_BYTES].decode("utf-8", "ignore")


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
SEARCH: Final = (
    "SELECT block_id, kind, body, ts_headline('english', text, q, "
    "'StartSel=[, StopSel=], MaxWords=24, MinWords=8'), ts_rank(tsv, q) "
    "FROM bt_blocks, to_tsquery('english', %s) q "
    "WHERE conversation_id = %s AND tsv @@ q "
    "ORDER BY kind = 'summary', ts_rank(tsv, q) DESC, seq LIMIT %s"
)
SEARCH_JOINERS: Final = (" & ", " | ")
"""All terms first; any term when nothing has them all."""


def search_hits(rows: Iterable[Any], conversation_id: str) -> list[SearchHit]:
    hits = []
    for bid, kind, body, snippet, score in rows:
        b = decode_block_row(body, conversation_id, bid)
        hits.append(SearchHit(b, b.path, b.turn_id, snippet, round(float(score), 6), kind))
    return hits


def failed(exc: Exception, conversation_id: str | None) -> StoreError:
    """The StoreError for a failed transaction (statement or ``COMMIT``): where, why, and
    what to do. psycopg rolled the transaction back and the connection stays usable."""
    about = f" (conversation {conversation_id!r})" if conversation_id is not None else ""
    return StoreError(
        f"PostgreSQL store{about}: {exc}; rolled back, nothing of it was written and the "
        "store stays usable: retry",
        conversation_id=conversation_id,
    )
