"""The SQLite store's schema (version 6) and the upgrade of schema-1 to -5 files.

Schema 6 is schema 5 with each term's highest count in a row of a conversation
(``search_most``, what bounds a row's score in a search), filled from the rows' counts
when a schema-5 file is opened. Schema 5 is schema 4 with a search index of analysed
terms (:mod:`index_store._sqlite_index`): every older file's upgrade indexes every row
again. Schema 4:

- ``blocks.seq`` is ``conv_no * 2**32 + position``: one conversation's rows are one range
  of the table and of the search index, so a search (a rowid range inside the FTS5 query),
  ``load`` and ``turn_log`` read what the conversation holds, whatever else the store holds.
  ``conv_no`` comes from ``conversations`` (AUTOINCREMENT: never reused).
- a block row names its conversation by that number alone (``seq >> 32``): no id in the
  row, and the indexes by block id, turn and path are expressions of ``seq``. A store of
  tiny blocks of conversations named by UUIDs took about 150 bytes a block more with the
  id in every row and in every index (schema 3).
- bodies are framed rows (:mod:`index_store._rows`): a checksum over the row and its key
  columns, the block without what the columns hold, summaries as deltas.
- the triggers are plain SQL: they only queue the changed rows in ``fts_pending`` (with
  the body the index holds for them), and the library brings the index up to date before
  it writes or searches. So the ``sqlite3`` shell, or any program, can update and delete
  rows without the library's functions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any, Final

from index_store._common import (
    decode_block_row,
    decode_snapshot_row,
    decode_window_row,
    encode_checkpoint,
    frame_window,
)
from index_store._rows import Base, BlockCodec
from index_store._search import unpack_repeats
from index_store._sqlite_commit import SEQ_BITS
from index_store._sqlite_index import (
    MOST_TABLE,
    SEARCH,
    TRIGGERS,
    bring_index_up_to_date,
    most_tf,
)
from timeline._model import CorruptRecordError, StoreUnavailableError

__all__ = ["SCHEMA_VERSION", "SEQ_BITS", "TABLES", "migrate"]

SCHEMA_VERSION: Final = 6

_CONVERSATIONS: Final = """
CREATE TABLE conversations (
    conv_no INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    live_window BLOB,
    updated_at TEXT NOT NULL
);
"""

_BLOCKS: Final = """
CREATE TABLE blocks (
    seq INTEGER PRIMARY KEY,
    block_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('log', 'summary')),
    turn_id TEXT NOT NULL,
    path TEXT NOT NULL,
    type TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE UNIQUE INDEX blocks_id ON blocks (seq >> 32, block_id);
CREATE INDEX blocks_turn ON blocks (seq >> 32, turn_id);
CREATE INDEX blocks_path ON blocks (seq >> 32, path);
"""
"""The block table and its indexes: a row's conversation is ``seq >> 32`` (the same
expression in a query, or the index is not used)."""

_CHECKPOINTS: Final = """
CREATE TABLE checkpoints (
    conversation_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    block_count INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (conversation_id, checkpoint_id)
);
"""

TABLES: Final = _CONVERSATIONS + _BLOCKS + _CHECKPOINTS

_OLD_SEARCH = (
    "DROP TRIGGER IF EXISTS blocks_ai",
    "DROP TRIGGER IF EXISTS blocks_au",
    "DROP TRIGGER IF EXISTS blocks_ad",
    "DROP TABLE IF EXISTS blocks_fts",
    "DROP VIEW IF EXISTS blocks_text",
    "DROP TABLE IF EXISTS fts_pending",
    "DROP TABLE IF EXISTS damaged_rows",
)
"""The search objects of schemas 1 to 4 (FTS5 over the texts, by its own tokenizer)."""


def migrate(db: sqlite3.Connection, path: str) -> bool:
    """Bring the schema up to date inside the caller's transaction; True when an existing
    store was upgraded (the caller then gives the freed space back)."""
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    current = db.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0
    if isinstance(current, bool) or not isinstance(current, int):
        raise CorruptRecordError(
            f"SQLite store {path!r} has schema version {current!r}, not an integer; the "
            "schema_version table is damaged"
        )
    if current > SCHEMA_VERSION:
        raise StoreUnavailableError(
            f"SQLite store {path!r} has schema version {current}, newer than this library "
            f"supports ({SCHEMA_VERSION}); upgrade block-timeline"
        )
    if current == SCHEMA_VERSION:
        return False
    if (
        not current
        and db.execute(
            "SELECT 1 FROM sqlite_master WHERE name IN ('blocks', 'conversations')"
        ).fetchone()
    ):
        raise CorruptRecordError(
            f"SQLite store {path!r} holds a store's tables but no schema version; the "
            "schema_version table is damaged"
        )
    if current == 5:
        _most_counts(db)
    elif current == 3:
        _drop_conversation_ids(db)
    elif current in (1, 2):
        _upgrade(db)
    elif not current:
        _script(db, TABLES)
    if current != 5:
        _analysed_search_index(db)
    for version in range(current + 1, SCHEMA_VERSION + 1):
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    return current > 0


def _script(db: sqlite3.Connection, script: str) -> None:
    for statement in split_sql(script):
        db.execute(statement)


def split_sql(script: str) -> list[str]:
    """Statements of a script (triggers keep their inner semicolons)."""
    out: list[str] = []
    buf: list[str] = []
    for line in script.strip().splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    if "\n".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out


def _drop_conversation_ids(db: sqlite3.Connection) -> None:
    """Schema 3 to 4: the block table rebuilt without its ``conversation_id`` column (a
    column in a UNIQUE constraint cannot be dropped in place), its indexes keyed by
    ``seq >> 32``. Bodies are copied as they are (their checksums cover the conversation's
    id, which the reader now takes from the conversation row), so a row that did not decode
    still does not, and the integrity check still names it; ``seq`` is kept. The search
    index is made again by schema 5."""
    for statement in ("DROP TRIGGER blocks_ai", "DROP TRIGGER blocks_au", "DROP TRIGGER blocks_ad"):
        db.execute(statement)
    db.execute("DROP VIEW blocks_text")
    db.execute("ALTER TABLE blocks RENAME TO old_blocks")
    for index in ("blocks_turn", "blocks_path"):
        db.execute(f"DROP INDEX {index}")
    _script(db, _BLOCKS)
    db.execute(
        "INSERT INTO blocks (seq, block_id, kind, turn_id, path, type, body) "
        "SELECT seq, block_id, kind, turn_id, path, type, body FROM old_blocks ORDER BY seq"
    )
    db.execute("DROP TABLE old_blocks")


def _analysed_search_index(db: sqlite3.Connection) -> None:
    """Schema 5: the search index of analysed terms, every row indexed (the index of
    earlier schemas, and its queue, dropped)."""
    for statement in _OLD_SEARCH:
        db.execute(statement)
    _script(db, SEARCH + TRIGGERS)
    db.execute("INSERT INTO fts_pending (seq, indexed) SELECT seq, NULL FROM blocks")
    bring_index_up_to_date(db)


def _most_counts(db: sqlite3.Connection) -> None:
    """Schema 5 to 6: ``search_most`` made and filled from the turn-log rows' counts over
    1 (``search_docs.repeats``)."""
    _script(db, MOST_TABLE)
    for seq, repeats in db.execute(
        "SELECT seq, repeats FROM search_docs WHERE repeats IS NOT NULL AND summary IS NULL"
    ).fetchall():
        most_tf(db, seq >> SEQ_BITS, unpack_repeats(bytes(repeats)))


def _upgrade(db: sqlite3.Connection) -> None:
    """Schema 1 or 2 to 4: every row rewritten in its framed form, each conversation's
    blocks renumbered into their range (in stored order). A row that does not decode is
    kept as it was: the integrity check reports it."""
    for statement in _OLD_SEARCH:
        db.execute(statement)
    for table in ("conversations", "blocks", "checkpoints"):
        db.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
    for index in ("blocks_turn", "blocks_path"):
        db.execute(f"DROP INDEX IF EXISTS {index}")
    _script(db, TABLES)
    order = db.execute(
        "SELECT conversation_id FROM old_blocks GROUP BY conversation_id ORDER BY min(rowid)"
    ).fetchall()
    windows = db.execute(
        "SELECT conversation_id, version, live_window, updated_at FROM old_conversations"
    ).fetchall()
    named = [r[0] for r in order] + sorted({w[0] for w in windows} - {r[0] for r in order})
    numbers = {cid: n for n, cid in enumerate(named, 1)}
    for cid, version, window, updated in windows:
        db.execute(
            "INSERT INTO conversations (conv_no, conversation_id, version, live_window, "
            "updated_at) VALUES (?, ?, ?, ?, ?)",
            (numbers[cid], cid, version, _window(window, cid, version, numbers[cid]), updated),
        )
    for cid in sorted(set(named) - {w[0] for w in windows}):  # blocks without a window
        db.execute(
            "INSERT INTO conversations (conv_no, conversation_id, version, live_window, "
            "updated_at) VALUES (?, ?, 0, NULL, '')",
            (numbers[cid], cid),
        )
    for cid in named:
        _copy_blocks(db, cid, numbers[cid])
    for row in db.execute("SELECT * FROM old_checkpoints").fetchall():
        db.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?)", (*row[:4], _checkpoint(*row)))
    for table in ("conversations", "blocks", "checkpoints"):
        db.execute(f"DROP TABLE old_{table}")


def _old_rows(db: sqlite3.Connection, cid: str) -> Iterator[tuple[Any, ...]]:
    yield from db.execute(
        "SELECT block_id, kind, turn_id, path, type, body FROM old_blocks "
        "WHERE conversation_id = ? ORDER BY rowid",
        (cid,),
    ).fetchall()


def _copy_blocks(db: sqlite3.Connection, cid: str, conv_no: int) -> None:
    codec = BlockCodec(cid)
    base: Base | None = None
    insert = (
        "INSERT INTO blocks (seq, block_id, kind, turn_id, path, type, body) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    for n, (bid, kind, turn_id, path, type_, body) in enumerate(_old_rows(db, cid), 1):
        try:
            block = decode_block_row(body, cid, bid)
        except CorruptRecordError:
            db.execute(insert, (conv_no << SEQ_BITS | n, bid, kind, turn_id, path, type_, body))
            continue
        row, after = codec.encode(kind, block, base if kind == "summary" else None)
        if kind == "summary":
            base = after
        db.execute(insert, (conv_no << SEQ_BITS | n, *row.columns))


def _window(raw: Any, cid: str, version: Any, conv_no: int) -> Any:
    try:
        record = decode_window_row(raw, cid)
    except CorruptRecordError:
        return raw
    return frame_window(record, version, conv_no)


def _checkpoint(cid: str, name: str, created: str, count: Any, body: Any) -> Any:
    try:
        snapshot = decode_snapshot_row(body, cid, f"checkpoint {name!r}")
    except CorruptRecordError:
        return body
    if len(snapshot.blocks) != count:
        return body
    return encode_checkpoint(snapshot, cid, name, created)
