"""PostgreSQL statements and error translation shared by the sync store and its async
twin.

Schema 2 keeps each block's text once, in ``bt_text`` pieces of at most
:data:`PIECE_CHARS` characters cut at whitespace; the block row's body holds the rest of
the block (framed, :mod:`index_store._rows`). Search uses an expression GIN index over
each piece's words plus a token naming its conversation (``bt`` + md5 of the id), so a
query ANDs with the token and costs what the conversation holds, never the whole store
(#28 items 1 and 3), and a word past the first piece of a long text is found like any
other (#29 item 3). No ``tsvector`` is stored: the index is the only copy.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from index_store._pieces import PIECE_CHARS, pieces
from timeline.model.errors import StoreError

__all__ = [
    "LOCK_INSERT",
    "LOCK_SELECT",
    "PIECE_CHARS",
    "ROW_SELECT",
    "SCHEMA_2",
    "WRITE_WINDOW",
    "failed",
    "pieces",
    "TOP_SQL",
    "rank",
    "search_sql",
    "token",
]

TSV: Final = (
    "(to_tsvector('english'::regconfig, text) || "
    "array_to_tsvector(ARRAY['bt' || md5(conversation_id)]))"
)
"""The indexed expression of a ``bt_text`` row: its words and its conversation token."""

SCHEMA_2: Final = (
    """CREATE TABLE bt_text (
        seq BIGINT NOT NULL,
        piece INTEGER NOT NULL,
        conversation_id TEXT NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (seq, piece))""",
    f"CREATE INDEX bt_text_search ON bt_text USING GIN ({TSV})",
)

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


def token(conversation_id: str) -> str:
    """The lexeme that marks a conversation's pieces (what ``md5`` gives in SQL)."""
    return "bt" + hashlib.md5(conversation_id.encode("utf-8")).hexdigest()


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


def search_sql(terms: list[str], every: bool) -> tuple[str, dict[str, Any]]:
    """The pieces of one conversation holding any of ``terms`` (through the index, with
    the conversation's token); with ``every``, only those of blocks holding each term (a
    stop word, which matches nothing, is left out) in some piece, each term again through
    the index. Rows: seq, piece, kind, text. No ``tsvector`` is computed per row (about
    0.3 ms for a 700-byte text): :func:`rank` scores the texts. Parameters ``token`` is
    the caller's."""
    params: dict[str, Any] = {"any": " | ".join(terms)}
    ctes, each = [], []
    if every and len(terms) > 1:
        for i, term in enumerate(terms):
            params[f"t{i}"] = term
            # each term's blocks through the index, in a CTE of its own (as a subquery
            # the planner may scan the table instead, computing every row's tsvector)
            ctes.append(
                f"m{i} AS MATERIALIZED (SELECT seq FROM bt_text t WHERE {TSV} @@ "
                f"(to_tsquery('english', %(t{i})s) && %(token)s::tsquery)),"
            )
            each.append(
                f"AND (numnode(to_tsquery('english', %(t{i})s)) = 0 "
                f"OR t.seq IN (SELECT seq FROM m{i}))"
            )
    sql = f"""
WITH q AS (SELECT to_tsquery('english', %(any)s) AS any_q), {"".join(ctes)}
found AS MATERIALIZED (
    SELECT t.seq, t.piece, t.text FROM bt_text t, q
    WHERE numnode(q.any_q) > 0 AND {TSV} @@ (q.any_q && %(token)s::tsquery) {" ".join(each)}
)
SELECT found.seq, found.piece, b.kind, found.text FROM found JOIN bt_blocks b USING (seq)"""
    return sql, params


K1: Final = 1.2
B: Final = 0.75
AVERAGE: Final = 2000.0
"""The piece length BM25's length normalisation is taken against (a constant: a score
depends on its block alone)."""


def rank(rows: list[Any], terms: list[str], limit: int) -> list[tuple[int, int, float]]:
    """The best ``limit`` blocks of :func:`search_sql`'s rows: (seq, best piece, score),
    turn-log blocks before summaries, then by score. A piece's score is BM25's term part
    with each term's count in its lowercased text; a block's is the sum of its pieces'."""
    words = [t.lower() for t in terms]
    blocks: dict[int, list[Any]] = {}
    for seq, piece, kind, text in rows:
        low = str(text).lower()
        norm = K1 * (1 - B + B * len(low) / AVERAGE)
        score = 0.0
        for w in words:
            tf = low.count(w) if w else 0
            score += tf / (tf + norm) if tf else 0.0
        entry = blocks.setdefault(seq, [kind == "summary", 0.0, piece, -1.0])
        entry[1] += score
        if score > entry[3]:
            entry[2], entry[3] = piece, score
    ordered = sorted(blocks.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0]))
    return [(seq, e[2], round(e[1], 6)) for seq, e in ordered[:limit]]


TOP_SQL: Final = f"""
SELECT b.seq, {ROW_SELECT.replace("bt_blocks.seq", "b.seq")},
    (SELECT ts_headline('english', x.text, to_tsquery('english', %(any)s),
        'StartSel=[, StopSel=], MaxWords=24, MinWords=8')
     FROM bt_text x WHERE x.seq = b.seq AND x.piece = w.best)
FROM unnest(%(seqs)s::bigint[], %(best)s::int[]) AS w(seq, best)
JOIN bt_blocks b ON b.seq = w.seq WHERE b.conversation_id = %(cid)s"""
"""The block rows and snippets of the ranked blocks (any order)."""


def failed(exc: Exception, conversation_id: str | None) -> StoreError:
    """The StoreError for a failed transaction (statement or ``COMMIT``): where, why, and
    what to do. psycopg rolled the transaction back and the connection stays usable."""
    about = f" (conversation {conversation_id!r})" if conversation_id is not None else ""
    return StoreError(
        f"PostgreSQL store{about}: {exc}; rolled back, nothing of it was written and the "
        "store stays usable: retry",
        conversation_id=conversation_id,
    )
