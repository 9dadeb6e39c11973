"""The PostgreSQL store's schema and its forward-only migrations.

Schema 1 kept each block's text three times: in a ``text`` column (cut at 256 KiB), in a
stored ``tsvector`` and inside the compressed body, 5.6x the text in all. Schema 2
(:mod:`index_store._pg_sql`) keeps it once, in text pieces, with framed bodies,
windows and checkpoints (:mod:`index_store._rows`). The upgrade rewrites every row in
one transaction; a row that does not decode is kept as it was (``check_integrity``
reports it) and its old ``text`` column becomes its pieces. Schema 3 searches the
analysed terms of each block (:mod:`index_store._pg_search`): its upgrade indexes every
row and drops schema 2's index of the pieces' words. Schema 4 adds each term's highest
count in a row of a conversation (``bt_search_most``, what bounds a row's score in a
search), filled from the rows' counts. Schema 5 keeps each turn-log term's postings
(``bt_search_postings``, :mod:`index_store._pg_postings`), filled from the rows'
``bt_search`` rows, and drops the GIN index of their terms, which searched them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from index_store._common import (
    decode_block_row,
    decode_snapshot_row,
    decode_window_row,
    encode_checkpoint,
    frame_window,
)
from index_store._pg_postings import POST, POSTINGS_5, post_params
from index_store._pg_search import (
    INSERT,
    MOST,
    MOST_4,
    SEARCH_3,
    Pending,
    params,
    run,
    totals_flow,
)
from index_store._pg_sql import INSERT_PIECE, ROW_SELECT, TEXT_TABLE, pieces
from index_store._rows import Base, BlockCodec, Row
from index_store._search import SearchDoc, doc_of, unpack_repeats
from timeline._model import (
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    Block,
    CorruptRecordError,
    StoreUnavailableError,
)

__all__ = ["SCHEMA_VERSION", "created_text", "migrate"]

SCHEMA_VERSION: Final = 5

SCHEMA_1: Final = (
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
        body BYTEA NOT NULL,
        UNIQUE (conversation_id, block_id))""",
    "CREATE INDEX bt_blocks_turn ON bt_blocks (conversation_id, turn_id)",
    "CREATE INDEX bt_blocks_path ON bt_blocks (conversation_id, path)",
    """CREATE TABLE bt_checkpoints (
        conversation_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        block_count INTEGER NOT NULL,
        body BYTEA NOT NULL,
        PRIMARY KEY (conversation_id, checkpoint_id))""",
)
"""A new store's tables (schema 1's without the text and tsvector columns)."""


def migrate(cur: Any) -> None:
    """Bring the schema up to date inside the caller's transaction (which holds the
    migration lock)."""
    cur.execute("CREATE TABLE IF NOT EXISTS bt_schema_version (version INTEGER NOT NULL)")
    cur.execute("SELECT max(version) FROM bt_schema_version")
    current = cur.fetchone()[0] or 0
    if current > SCHEMA_VERSION:
        raise StoreUnavailableError(
            f"PostgreSQL schema version {current} is newer than this library supports "
            f"({SCHEMA_VERSION}); upgrade block-timeline"
        )
    if current == SCHEMA_VERSION:
        return
    if current == 0:
        for statement in (*SCHEMA_1, TEXT_TABLE, *SEARCH_3, *MOST_4, *POSTINGS_5):
            cur.execute(statement)
    elif current in (3, 4):
        if current == 3:
            _most_counts(cur)
        _postings(cur)
    else:
        if current == 1:
            _upgrade_1(cur)
        _index_terms(cur)
    for version in range(current + 1, SCHEMA_VERSION + 1):
        cur.execute("INSERT INTO bt_schema_version (version) VALUES (%s)", (version,))


def _upgrade_1(cur: Any) -> None:
    """Schema 1 to 2: bodies framed (texts moved to pieces), windows and checkpoints framed,
    the text and tsvector columns dropped."""
    cur.execute("ALTER TABLE bt_blocks DROP COLUMN tsv")
    cur.execute(TEXT_TABLE)
    cur.execute("SELECT DISTINCT conversation_id FROM bt_blocks ORDER BY 1")
    for (cid,) in cur.fetchall():
        _upgrade_blocks(cur, cid)
    cur.execute("ALTER TABLE bt_blocks DROP COLUMN text")
    cur.execute("SELECT conversation_id, version, live_window FROM bt_conversations")
    for cid, version, raw in cur.fetchall():
        try:
            framed = frame_window(decode_window_row(raw, cid), version)
        except CorruptRecordError:
            continue
        cur.execute(
            "UPDATE bt_conversations SET live_window = %s WHERE conversation_id = %s",
            (framed, cid),
        )
    cur.execute(
        "SELECT conversation_id, checkpoint_id, created_at, block_count, body FROM bt_checkpoints"
    )
    for cid, name, created, count, body in cur.fetchall():
        try:
            snapshot = decode_snapshot_row(body, cid, f"checkpoint {name!r}")
        except CorruptRecordError:
            continue
        if len(snapshot.blocks) == count:
            at = created_text(created)
            cur.execute(
                "UPDATE bt_checkpoints SET body = %s WHERE conversation_id = %s "
                "AND checkpoint_id = %s",
                (encode_checkpoint(snapshot, cid, name, at), cid, name),
            )


def _upgrade_blocks(cur: Any, cid: str) -> None:
    codec = BlockCodec(cid, text_apart=True)
    base: Base | None = None
    cur.execute(
        "SELECT seq, block_id, kind, text, body FROM bt_blocks WHERE conversation_id = %s "
        "ORDER BY seq",
        (cid,),
    )
    for seq, bid, kind, text, body in cur.fetchall():
        try:
            block = decode_block_row(body, cid, bid)
        except CorruptRecordError:
            parts = list(pieces(text))
        else:
            row, after = codec.encode(kind, block, base if kind == "summary" else None)
            base = after if kind == "summary" else base
            parts = list(pieces(row.text or ""))
            cur.execute("UPDATE bt_blocks SET body = %s WHERE seq = %s", (row.body, seq))
        for n, part in enumerate(parts):
            cur.execute(INSERT_PIECE, (seq, n, cid, part))


def _index_terms(cur: Any) -> None:
    """Schema 2 to 5: every block row indexed by its terms (a row that does not decode as
    empty; ``check_integrity`` reports it), the index of the pieces' words dropped."""
    for statement in (*SEARCH_3, *MOST_4, *POSTINGS_5):
        cur.execute(statement)
    cur.execute("DROP INDEX IF EXISTS bt_text_search")
    cur.execute("SELECT DISTINCT conversation_id FROM bt_blocks ORDER BY 1")
    for (cid,) in cur.fetchall():
        _index_conversation(cur, cid)


def _index_conversation(cur: Any, cid: str) -> None:
    cur.execute(
        f"SELECT seq, {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s ORDER BY seq",
        (cid,),
    )
    rows = {seq: Row(*columns) for seq, *columns in cur.fetchall()}
    by_id = {row.block_id: row for row in rows.values()}
    codec = BlockCodec(cid, lambda ids: [by_id[i] for i in ids if i in by_id], text_apart=True)
    calls: dict[str, tuple[int, Block]] = {}
    log = Pending()
    for seq, row in rows.items():
        doc = _doc(codec, row, seq, calls)
        cur.execute(INSERT, params(cid, seq, row.kind, doc))
        if row.kind != "summary":
            log.add(seq, doc)
    run(cur, totals_flow(cid, log))


def _most_counts(cur: Any) -> None:
    """Schema 3 to 4: ``bt_search_most`` made and filled from the turn-log rows' counts
    over 1 (``bt_search.repeats``)."""
    for statement in MOST_4:
        cur.execute(statement)
    cur.execute(
        "SELECT conversation_id, repeats FROM bt_search WHERE repeats IS NOT NULL "
        "AND NOT summary ORDER BY seq"
    )
    most: dict[str, dict[str, int]] = {}
    for cid, repeats in cur.fetchall():
        top = most.setdefault(cid, {})
        for term, n in unpack_repeats(bytes(repeats)).items():
            top[term] = max(n, top.get(term, 1))
    for cid, top in sorted(most.items()):
        cur.execute(MOST, (cid, list(top), list(top.values())))


def _postings(cur: Any) -> None:
    """Schema 4 to 5: ``bt_search_postings`` made and filled from the turn-log rows'
    ``bt_search`` rows (terms, counts over 1, length, call), a conversation at a time;
    the GIN index of the terms dropped."""
    for statement in POSTINGS_5:
        cur.execute(statement)
    cur.execute("DROP INDEX IF EXISTS bt_search_terms")
    cur.execute("SELECT DISTINCT conversation_id FROM bt_search ORDER BY 1")
    for (cid,) in cur.fetchall():
        cur.execute(
            "SELECT seq, terms, length, repeats, call FROM bt_search WHERE conversation_id = "
            "%s AND NOT summary ORDER BY seq",
            (cid,),
        )
        log = Pending()
        for seq, terms, _length, repeats, call in cur.fetchall():
            counts = dict.fromkeys((t for t in terms if not t.startswith(":")), 1)
            counts.update(unpack_repeats(bytes(repeats)) if repeats else {})
            log.add(seq, SearchDoc(counts, call=call))
        if log.postings:
            cur.execute(POST, post_params(cid, log.postings))


def _doc(codec: BlockCodec, row: Row, seq: int, calls: dict[str, tuple[int, Block]]) -> SearchDoc:
    try:
        block = codec.decode(row)
    except CorruptRecordError:
        return SearchDoc({})
    call = calls.get(block.call_id or "") if block.type == REACT_TOOL_RESULT else None
    if block.type == REACT_TOOL_CALL and block.call_id:
        calls[block.call_id] = (seq, block)
    return doc_of(block, call)


def created_text(value: Any) -> str:
    """A checkpoint's ``created_at`` as the UTC text it was written as (whatever the
    session's time zone)."""
    if isinstance(value, datetime):
        text = value.astimezone(UTC).isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z")
    return str(value)
