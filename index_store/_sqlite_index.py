"""The SQLite store's search index (schema 6), and how it is kept up to date.

Each block row is indexed by its terms (:mod:`timeline._model.search_text`, analysed in
Python, so every backend agrees): an FTS5 table of the distinct terms (``detail=none``:
which rows hold a term, seeked by a conversation's range of rowids) and ``search_docs``,
a row's length, its counts over 1, and a tool call's or result's link (what a result's
call is found by; a result's row holds its call's row and the terms it carried from it).
No text is stored twice: the FTS5 table reads its content through a view of the bodies
(what its ``integrity-check`` compares with).

The triggers are plain SQL: a change to ``blocks`` only queues the row in ``fts_pending``
(with the body the index holds for it), and the library brings the index up to date
before it writes or searches, so the ``sqlite3`` shell can update and delete rows.
``damaged_rows``: rows found damaged when they were indexed (a search of their
conversation says so instead of leaving them out unsaid).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any, Final

from index_store._rows import body_block, key_bytes, unframe
from index_store._search import SearchDoc, doc_of, link_of, own_terms
from index_store._sqlite_commit import SEQ_BITS
from timeline._model import CONV_RANGE_SUMMARY, REACT_TOOL_CALL, REACT_TOOL_RESULT, Block

__all__ = [
    "MOST",
    "MOST_TABLE",
    "PAGE",
    "SEARCH",
    "TRIGGERS",
    "bring_index_up_to_date",
    "first_damaged",
    "most_tf",
    "terms_of",
]

MOST_TABLE: Final = """
CREATE TABLE search_most (
    conv_no INTEGER NOT NULL,
    term TEXT NOT NULL,
    tf INTEGER NOT NULL,
    PRIMARY KEY (conv_no, term)
) WITHOUT ROWID;
"""

SEARCH: Final = (
    MOST_TABLE
    + """
CREATE TABLE search_docs (
    seq INTEGER PRIMARY KEY,
    length INTEGER NOT NULL,
    repeats BLOB,
    link INTEGER,
    call INTEGER,
    carried TEXT,
    summary INTEGER
);
CREATE TABLE search_vectors (
    seq INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE TABLE search_totals (
    conv_no INTEGER PRIMARY KEY,
    rows INTEGER NOT NULL,
    terms INTEGER NOT NULL
);
CREATE INDEX search_links ON search_docs (link, seq) WHERE link IS NOT NULL;
CREATE INDEX blocks_summaries ON blocks (seq) WHERE kind = 'summary';
CREATE VIEW search_text (seq, terms) AS SELECT b.seq, bt_search_terms(b.body, d.carried)
    FROM blocks b LEFT JOIN search_docs d ON d.seq = b.seq;
CREATE VIRTUAL TABLE search_index USING fts5(
    terms, content='search_text', content_rowid='seq', detail=none, columnsize=0,
    tokenize="ascii tokenchars '._'"
);
CREATE TABLE fts_pending (seq INTEGER PRIMARY KEY, indexed BLOB);
CREATE TABLE damaged_rows (seq INTEGER PRIMARY KEY);
"""
)
"""The index's tables. FTS5's ``ascii`` tokenizer keeps every non-ASCII character and
``.`` and ``_`` in a token, so a term is indexed as it is. ``search_totals``: each
conversation's turn-log rows and their terms (what BM25 averages over), kept as rows
are indexed; ``search_most``: each term's highest count in one turn-log row of a
conversation, when over 1 (what bounds a row's score; never lowered, so it stays a
bound when rows go). ``search_vectors``: the rows' vectors of a store given an embedder (a row
changed or deleted loses its vector)."""

TRIGGERS: Final = """
CREATE TRIGGER blocks_ai AFTER INSERT ON blocks BEGIN
    INSERT OR IGNORE INTO fts_pending (seq, indexed) VALUES (new.seq, NULL);
END;
CREATE TRIGGER blocks_au AFTER UPDATE ON blocks BEGIN
    INSERT OR IGNORE INTO fts_pending (seq, indexed) VALUES (old.seq, old.body);
    INSERT OR IGNORE INTO fts_pending (seq, indexed) VALUES (new.seq, NULL);
END;
CREATE TRIGGER blocks_ad AFTER DELETE ON blocks BEGIN
    INSERT OR IGNORE INTO fts_pending (seq, indexed) VALUES (old.seq, old.body);
END;
"""
"""``fts_pending.indexed``: the body whose terms the index holds for ``seq`` (NULL:
nothing). The first change since the index was last brought up to date is the one that
counts, hence ``OR IGNORE``."""

PAGE: Final = 1024
"""Queued rows read at once by :func:`bring_index_up_to_date`."""


MOST: Final = (
    "INSERT INTO search_most (conv_no, term, tf) VALUES (?, ?, ?) ON CONFLICT "
    "(conv_no, term) DO UPDATE SET tf = max(tf, excluded.tf)"
)


def most_tf(db: sqlite3.Connection, conv_no: int, counts: Mapping[str, int]) -> None:
    """Raise the conversation's highest counts (``search_most``) to a row's."""
    over = [(conv_no, t, n) for t, n in counts.items() if n > 1]
    if over:
        db.executemany(MOST, over)


def terms_of(body: Any, carried: str | None) -> str:
    """``bt_search_terms(body, carried)``: the terms the index holds for a row."""
    return own_terms(body_block(body), carried)


def bring_index_up_to_date(
    db: sqlite3.Connection, known: Mapping[int, Block | None] | None = None
) -> int:
    """Apply the queued changes to the search index (inside the caller's transaction):
    take out what the index holds for each queued row, index the row as it is now, and
    then the results of any call that changed. ``known`` gives the blocks of rows the
    caller just wrote (None: a long text, read back from its row). Returns the rows done.
    The queue is read :data:`PAGE` rows at a time (a first persist of many blocks queues
    every one of them)."""
    indexer = _Indexer(db)
    done, after = 0, -1
    while True:
        queued = db.execute(
            "SELECT seq, indexed FROM fts_pending WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, PAGE),
        ).fetchall()
        if not queued:
            break
        for seq, indexed in queued:
            if indexed is not None:
                indexer.unindex(seq, indexed)
            indexer.index(seq, known.get(seq) if known is not None else None)
        done += len(queued)
        after = queued[-1][0]
    if done:
        indexer.dependents()
        indexer.totals()
        db.execute("DELETE FROM fts_pending")
    return done


class _Indexer:
    """One run of index updates: the calls it indexed (what their results carry)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.calls: dict[tuple[int, str], tuple[int, Block]] = {}
        self.changed_calls: dict[int, int] = {}
        """Rows of calls taken out of the index -> their links."""
        self.added: dict[int, list[int]] = {}
        """Conversation number -> turn-log rows and terms indexed (less those taken out)."""

    def unindex(self, seq: int, body: Any) -> None:
        """Take row ``seq`` out of the index; ``body``: the body it was indexed from."""
        found = self.db.execute(
            "SELECT carried, link, call, length, summary FROM search_docs WHERE seq = ?", (seq,)
        ).fetchone()
        if found is None:
            return
        carried, link, call, length, summary = found
        if not summary:
            self._count(seq, -1, -length)
        self.db.execute(
            "INSERT INTO search_index(search_index, rowid, terms) VALUES ('delete', ?, ?)",
            (seq, terms_of(body, carried)),
        )
        for table in ("search_docs", "search_vectors", "damaged_rows"):
            self.db.execute(f"DELETE FROM {table} WHERE seq = ?", (seq,))
        if link is not None and call is None:
            self.changed_calls[seq] = link

    def index(self, seq: int, block: Block | None) -> None:
        """Index row ``seq`` as it is now (``block``: its block, when the caller has it)."""
        summary = block is not None and block.type == CONV_RANGE_SUMMARY
        if block is None:
            row = self.db.execute(
                "SELECT c.conversation_id, b.block_id, b.kind, b.turn_id, b.path, b.type, "
                f"b.body FROM blocks b LEFT JOIN conversations c ON c.conv_no = b.seq >> "
                f"{SEQ_BITS} WHERE b.seq = ?",
                (seq,),
            ).fetchone()
            if row is None:
                return
            summary = row[2] == "summary"
            block = body_block(row[-1], row[-2])
            if block is None or not _decodes(row):
                self.db.execute("INSERT OR IGNORE INTO damaged_rows (seq) VALUES (?)", (seq,))
        doc = SearchDoc({}) if block is None else self._doc(seq, block)
        self.db.execute("INSERT INTO search_index(rowid, terms) VALUES (?, ?)", (seq, doc.terms))
        self.db.execute(
            "INSERT INTO search_docs (seq, length, repeats, link, call, carried, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                doc.length,
                doc.repeats,
                doc.link,
                doc.call,
                " ".join(doc.carried) or None,
                1 if summary else None,
            ),
        )
        if not summary:
            self._count(seq, 1, doc.length)
            most_tf(self.db, seq >> SEQ_BITS, doc.counts)

    def _count(self, seq: int, rows: int, terms: int) -> None:
        added = self.added.setdefault(seq >> SEQ_BITS, [0, 0])
        added[0] += rows
        added[1] += terms

    def totals(self) -> None:
        """Add what this run indexed to each conversation's totals."""
        self.db.executemany(
            "INSERT INTO search_totals (conv_no, rows, terms) VALUES (?, ?, ?) "
            "ON CONFLICT (conv_no) DO UPDATE SET rows = rows + excluded.rows, "
            "terms = terms + excluded.terms",
            [(conv, rows, terms) for conv, (rows, terms) in sorted(self.added.items())],
        )

    def _doc(self, seq: int, block: Block) -> SearchDoc:
        call = None
        if block.type == REACT_TOOL_RESULT and block.call_id:
            call = self._call_of(seq, block.call_id)
        elif block.type == REACT_TOOL_CALL and block.call_id:
            self.calls[(seq >> SEQ_BITS, block.call_id)] = (seq, block)
        return doc_of(block, call)

    def _call_of(self, seq: int, call_id: str) -> tuple[int, Block] | None:
        """The latest call with ``call_id`` before row ``seq`` in its conversation."""
        known = self.calls.get((seq >> SEQ_BITS, call_id))
        if known is not None and known[0] < seq:
            return known
        lo = seq >> SEQ_BITS << SEQ_BITS
        for (found,) in self.db.execute(
            "SELECT seq FROM search_docs WHERE link = ? AND seq BETWEEN ? AND ? "
            "AND call IS NULL ORDER BY seq DESC",
            (link_of(call_id), lo, seq - 1),
        ).fetchall():
            row = self.db.execute("SELECT type, body FROM blocks WHERE seq = ?", (found,))
            type_, body = row.fetchone() or ("", b"")
            block = body_block(body, type_)
            if block is not None and block.type == REACT_TOOL_CALL and block.call_id == call_id:
                return found, block
        return None

    def dependents(self) -> None:
        """Index again the results of every call that changed (they carry its terms)."""
        for call, link in sorted(self.changed_calls.items()):
            for (seq,) in self.db.execute(
                "SELECT seq FROM search_docs WHERE link = ? AND seq > ? AND call = ?",
                (link, call, call),
            ).fetchall():
                current = self.db.execute("SELECT body FROM blocks WHERE seq = ?", (seq,))
                self.unindex(seq, (current.fetchone() or (b"",))[0])
                self.index(seq, None)


def _decodes(row: tuple[Any, ...]) -> bool:
    if row[0] is None:  # of no conversation: the integrity check names it
        return False
    try:
        unframe(key_bytes(*row[:-1]), row[-1])
    except ValueError:
        return False
    return True


def first_damaged(db: sqlite3.Connection, lo: int, hi: int) -> str | None:
    """The id of a row of ``[lo, hi]`` found damaged when it was indexed, if any."""
    row = db.execute(
        "SELECT b.block_id FROM damaged_rows d JOIN blocks b ON b.seq = d.seq "
        "WHERE d.seq BETWEEN ? AND ? ORDER BY d.seq LIMIT 1",
        (lo, hi),
    ).fetchone()
    return None if row is None else str(row[0])
