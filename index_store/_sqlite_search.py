"""Search of the SQLite store: one conversation's range of the FTS5 index, ranked by BM25
over that conversation alone.

FTS5's own ``bm25()`` takes its statistics from the whole table (every conversation) and
reads each term's whole list of rows to get them: a common word cost the whole store, and
a conversation's scores moved when another conversation used its words (#28 items 1-2).
Here every figure comes from the conversation's range of rowids (``seq``): the rows
matching each term (``MATCH`` with a rowid range, which FTS5 seeks to), each row's count
of the term (the instances ``highlight()`` marks), the row lengths and their average
(``blocks_fts_docsize``). The formula is FTS5's (k1 = 1.2, b = 0.75), so a store holding
one conversation scores as before.

The index is brought up to date first when rows were changed outside the library
(``fts_pending``, see :mod:`index_store._sqlite_schema`).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping
from typing import Any, Final

from index_store._common import make_snippet
from index_store._pieces import pieces
from index_store._rows import key_bytes, unframe
from index_store._sqlite_schema import SEQ_BITS, text_of

__all__ = ["bring_index_up_to_date", "first_damaged", "rank", "snippets"]

K1: Final = 1.2
B: Final = 0.75
_OPEN: Final = "\x01"


def bring_index_up_to_date(
    db: sqlite3.Connection, known: Mapping[int, str | None] | None = None
) -> int:
    """Apply the queued changes to the search index (inside the caller's transaction):
    remove what the index holds for each queued row, index the row as it is now. ``known``
    gives the rows the caller just wrote, with their texts (None: a long text, which the
    index reads from the row itself, see :func:`_index_row`). Returns the rows done.
    The queue is read :data:`PAGE` rows at a time (a first persist of many blocks queues
    every one of them)."""
    done, after = 0, -1
    while True:
        queued = db.execute(
            "SELECT seq, indexed FROM fts_pending WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, PAGE),
        ).fetchall()
        if not queued:
            break
        for seq, indexed in queued:
            if known is not None and seq in known:
                _index_row(db, seq, indexed, known[seq], ours=True)
            else:
                _index_row(db, seq, indexed, None)
        done += len(queued)
        after = queued[-1][0]
    if done:
        db.execute("DELETE FROM fts_pending")
    return done


PAGE: Final = 1024
"""Queued rows read at once by :func:`bring_index_up_to_date`."""


def _index_row(
    db: sqlite3.Connection, seq: int, indexed: Any, text: str | None, ours: bool = False
) -> None:
    """Take out what the index holds for row ``seq`` (``indexed``: its body then, or None)
    and index the row as it is now (``text`` when the caller has it). A long text the
    library just wrote (``ours``, no ``text``) is read by SQL from the row, so no Python
    copy of it is alive while FTS5 takes it in (a streamed import: one copy less)."""
    if indexed is not None:
        db.execute(
            "INSERT INTO blocks_fts(blocks_fts, rowid, text) VALUES ('delete', ?, ?)",
            (seq, text_of(indexed)),
        )
    db.execute("DELETE FROM damaged_rows WHERE seq = ?", (seq,))
    if text is None and ours:
        db.execute(
            "INSERT INTO blocks_fts(rowid, text) SELECT seq, bt_block_text(body) FROM blocks "
            "WHERE seq = ?",
            (seq,),
        )
        return
    if text is None:
        row = db.execute(
            "SELECT c.conversation_id, b.block_id, b.kind, b.turn_id, b.path, b.type, b.body "
            f"FROM blocks b LEFT JOIN conversations c ON c.conv_no = b.seq >> {SEQ_BITS} "
            "WHERE b.seq = ?",
            (seq,),
        ).fetchone()
        if row is None:
            return
        text = text_of(row[-1])
        if not _decodes(row):
            db.execute("INSERT INTO damaged_rows (seq) VALUES (?)", (seq,))
    db.execute("INSERT INTO blocks_fts(rowid, text) VALUES (?, ?)", (seq, text))


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


def _varint(blob: bytes, pos: int = 0) -> int:
    """The first SQLite varint of ``blob`` (a row's token count in ``%_docsize``)."""
    value = 0
    if not isinstance(blob, bytes):
        return 0  # a damaged row of the index: counted as empty
    for i in range(pos, min(pos + 9, len(blob))):
        byte = blob[i]
        if i - pos == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value


LONG_TOKENS: Final = 8_192
"""Rows of this many tokens or more get their counts of a term from their text, indexed
again in pieces (:func:`_long_counts`): FTS5's ``highlight()`` over one document takes
time quadratic in its instances of a term, so a search hitting one long text of a
common word took minutes."""


def rank(
    db: sqlite3.Connection, lo: int, hi: int, terms: list[str]
) -> tuple[list[tuple[int, float]], bool]:
    """Rows of ``[lo, hi]`` holding every term (or, when none does and there are several,
    any term) with their BM25 scores over that range; and whether all terms matched."""
    sizes = {
        seq: _varint(sz)
        for seq, sz in db.execute(
            "SELECT id, sz FROM blocks_fts_docsize WHERE id BETWEEN ? AND ?", (lo, hi)
        )
    }
    long = [seq for seq, size in sizes.items() if size >= LONG_TOKENS]
    if long:  # in a table: a conversation may hold more than a statement's parameters
        db.execute("CREATE TEMP TABLE IF NOT EXISTS bt_long (seq INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM temp.bt_long")
        db.executemany("INSERT INTO temp.bt_long (seq) VALUES (?)", ((s,) for s in long))
    counts = [_short_counts(db, lo, hi, term, bool(long)) for term in terms]
    for seq, found in (_long_counts(db, lo, hi, terms) if long else {}).items():
        for count, n in zip(counts, found, strict=True):
            if n:
                count[seq] = n
    every = set(counts[0]).intersection(*counts[1:]) if counts else set()
    hits = every or (set().union(*counts) if len(terms) > 1 else set())
    if not hits:
        return [], True
    n = len(sizes) or 1
    average = (sum(sizes.values()) / n) or 1.0
    idf = [_idf(n, len(c)) for c in counts]
    scored = []
    for seq in hits:
        norm = K1 * (1 - B + B * sizes.get(seq, 0) / average)
        score = 0.0
        for weight, c in zip(idf, counts, strict=True):
            tf = c.get(seq, 0)
            score += weight * (tf * (K1 + 1)) / (tf + norm)
        scored.append((seq, score))
    return scored, bool(every)


def _short_counts(
    db: sqlite3.Connection, lo: int, hi: int, term: str, long: bool
) -> dict[int, int]:
    """Each matching row's count of ``term`` (the instances ``highlight()`` marks), but
    for the long rows (``temp.bt_long``, when ``long``)."""
    skip = " AND rowid NOT IN (SELECT seq FROM temp.bt_long)" if long else ""
    rows = db.execute(
        "SELECT rowid, highlight(blocks_fts, 0, char(1), char(2)) FROM blocks_fts "
        f"WHERE blocks_fts MATCH ? AND rowid BETWEEN ? AND ?{skip}",
        (f'"{term}"', lo, hi),
    ).fetchall()
    return {seq: marked.count(_OPEN) for seq, marked in rows}


def _long_counts(
    db: sqlite3.Connection, lo: int, hi: int, terms: list[str]
) -> dict[int, list[int]]:
    """The counts of each term in each long row (``temp.bt_long``) that matches any: the
    row's text indexed again, in pieces cut between words (the same tokenizer), in a
    temporary FTS5 table, and each piece's instances added up."""
    match = " OR ".join(f'"{t}"' for t in terms)
    matching = [
        seq
        for (seq,) in db.execute(
            "SELECT rowid FROM blocks_fts WHERE blocks_fts MATCH ? AND rowid BETWEEN ? AND ? "
            "AND rowid IN (SELECT seq FROM temp.bt_long)",
            (match, lo, hi),
        )
    ]
    if not matching:
        return {}
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.bt_pieces "
        "USING fts5(text, tokenize='porter unicode61')"
    )
    out: dict[int, list[int]] = {}
    for seq in matching:
        found = db.execute("SELECT bt_block_text(body) FROM blocks WHERE seq = ?", (seq,))
        text = (found.fetchone() or ("",))[0]
        db.execute("DELETE FROM temp.bt_pieces")
        db.executemany("INSERT INTO temp.bt_pieces (text) VALUES (?)", ((p,) for p in pieces(text)))
        del text
        out[seq] = [
            sum(
                marked.count(_OPEN)
                for (marked,) in db.execute(
                    "SELECT highlight(bt_pieces, 0, char(1), char(2)) FROM temp.bt_pieces "
                    "WHERE bt_pieces MATCH ?",
                    (f'"{term}"',),
                )
            )
            for term in terms
        ]
    db.execute("DELETE FROM temp.bt_pieces")
    return out


def _idf(rows: int, hits: int) -> float:
    # a damaged index can count more hits than rows: the word is then as common as can be
    value = math.log((max(rows - hits, 0) + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6


SNIPPET_FROM_FTS: Final = 1 << 16
"""Texts this long get their snippet from :func:`~index_store._common.make_snippet`:
FTS5's ``snippet()`` weighs a window around every instance of the terms, in time
quadratic in their count, so a search hitting one long text of a common word took
minutes."""


def snippets(
    db: sqlite3.Connection, match: str, texts: Mapping[int, str], terms: list[str]
) -> dict[int, str]:
    """Snippets of these rows (their texts by ``seq``) for ``match``: FTS5's (16 tokens
    around the best part) for a text shorter than :data:`SNIPPET_FROM_FTS`, a window
    around the first term for a longer one."""
    out = {
        seq: make_snippet(text, terms)
        for seq, text in texts.items()
        if len(text) >= SNIPPET_FROM_FTS
    }
    short = [seq for seq in texts if seq not in out]
    if short:
        marks = ", ".join("?" * len(short))
        rows = db.execute(
            "SELECT rowid, snippet(blocks_fts, 0, '[', ']', '…', 16) FROM blocks_fts "
            f"WHERE blocks_fts MATCH ? AND rowid IN ({marks})",
            (match, *short),
        ).fetchall()
        out.update(rows)
    return out
