"""PostgreSQL's postings (schema 5): for each turn-log term of a conversation, the rows
holding it with what ranking needs of each (its count of the term, its length, a
result's call), packed in a few ``bt_search_postings`` rows, so a search reads each
query term's rows with one index range and no row of ``bt_search``.

A term's postings are cut in *chunks* numbered from 0, each of at most :data:`CHUNK`
entries (one commit's entries for a term may overfill the last by what does not fit).
A persist appends a term's new entries to its last chunk while they fit, else starts
the next one (the conversation's row lock orders the appends), so a term held by every
row of a 300-turn coding session is read as about 70 rows of ``bytea`` instead of 4,000
rows, and a term held once costs one row. Each entry is three little-endian 64-bit
numbers: the row's ``seq``, its call's row (0: none) and ``count << 32 | length``.

Summaries are not in the postings (their statistics do not count): a search reads the
latest summary's row of ``bt_search`` with them.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from index_store._search import DocInfo
from timeline._model import Bm25

__all__ = [
    "CHUNK",
    "POSTINGS_5",
    "POST",
    "WORDS",
    "Postings",
    "entry",
    "post_params",
]

CHUNK: Final = 64
"""Entries of a chunk (1,536 bytes: a postings row stays under PostgreSQL's 2 kB out of
line threshold, so appending to it rewrites little)."""
_WIDTH: Final = 24
"""Bytes of an entry."""
_LENGTH: Final = 0xFFFFFFFF
_SWAP: Final = sys.byteorder != "little"

POSTINGS_5: Final = (
    """CREATE TABLE bt_search_postings (
        conversation_id TEXT NOT NULL,
        term TEXT NOT NULL,
        chunk INTEGER NOT NULL,
        data BYTEA NOT NULL,
        PRIMARY KEY (conversation_id, term, chunk)) WITH (fillfactor = 70)""",
    "ALTER TABLE bt_search_postings ALTER COLUMN data SET STORAGE MAIN",
)
"""Schema 5's postings (``data``: the entries, kept in line and uncompressed when they
fit, as they do). Room is left in each page so that appending to a row rewrites it in
the same page, with no new index entry (a HOT update)."""

POST: Final = f"""
WITH last AS MATERIALIZED (
    SELECT DISTINCT ON (p.term) p.term, p.chunk, octet_length(p.data) AS size
    FROM bt_search_postings p
    WHERE p.conversation_id = %(cid)s AND p.term = ANY(%(terms)s::text[])
    ORDER BY p.term, p.chunk DESC)
INSERT INTO bt_search_postings (conversation_id, term, chunk, data)
SELECT %(cid)s, u.t, coalesce(l.chunk, -1) + u.k + CASE WHEN l.chunk IS NOT NULL
    AND l.size + u.f <= {CHUNK * _WIDTH} THEN 0 ELSE 1 END, u.d
FROM unnest(%(terms)s::text[], %(parts)s::int[], %(firsts)s::int[], %(datas)s::bytea[])
    AS u(t, k, f, d)
LEFT JOIN last l ON l.term = u.t
ON CONFLICT (conversation_id, term, chunk)
DO UPDATE SET data = bt_search_postings.data || excluded.data
"""
"""Append a commit's entries: each term's in parts of :data:`CHUNK` (``k`` from 0), the
first appended to the term's last chunk when it fits, else each part a chunk of its
own after it (``f``: the first part's size, for every part). The terms' last chunks are
read once, before the rows go in: a lookup per entry could be planned as a scan of the
table, which then also passes every row the statement inserted so far (a commit of
250,000 new terms took longer than 15 minutes that way)."""

WORDS: Final = """
WITH latest AS MATERIALIZED (
    SELECT s.seq, s.length, s.repeats, s.call, s.terms FROM bt_search s
    WHERE s.conversation_id = %(cid)s AND s.summary ORDER BY s.seq DESC LIMIT 1)
SELECT t.rows, t.terms, l.seq, l.length, l.repeats, l.call, q.term, q.term = ANY(l.terms),
    (SELECT m.tf FROM bt_search_most m WHERE m.conversation_id = %(cid)s AND m.term = q.term),
    (SELECT string_agg(p.data, ''::bytea ORDER BY p.chunk) FROM bt_search_postings p
        WHERE p.conversation_id = %(cid)s AND p.term = q.term)
FROM (SELECT 1) AS one
LEFT JOIN bt_search_totals t ON t.conversation_id = %(cid)s
LEFT JOIN latest l ON true
LEFT JOIN unnest(%(terms)s::text[]) WITH ORDINALITY AS q(term, n) ON true
ORDER BY q.n
"""
"""A search's words in one statement: the conversation's size, its latest summary (and
whether it holds each term), and for each term its highest count in a turn-log row and
its postings."""


def entry(seq: int, call: int | None, count: int, length: int) -> tuple[int, int, int]:
    """A row's entry in a term's postings."""
    return seq, call or 0, count << 32 | length


def post_params(cid: str, postings: Mapping[str, list[tuple[int, int, int]]]) -> dict[str, Any]:
    """:data:`POST`'s parameters: ``postings`` maps each term to its new entries
    (:func:`entry`) in row order."""
    terms, parts, firsts, datas = [], [], [], []
    for term, items in postings.items():
        first = min(len(items), CHUNK) * _WIDTH
        for k, at in enumerate(range(0, len(items), CHUNK)):
            packed = array("q", [v for item in items[at : at + CHUNK] for v in item])
            if _SWAP:
                packed.byteswap()
            terms.append(term)
            parts.append(k)
            firsts.append(first)
            datas.append(packed.tobytes())
    return {"cid": cid, "terms": terms, "parts": parts, "firsts": firsts, "datas": datas}


class _Latest(NamedTuple):
    seq: int
    info: DocInfo


class Postings:
    """What :data:`WORDS` returned for a query's terms: each term's turn-log rows (with
    the latest summary when it holds the term), the summary, the conversation's size,
    each term's highest count, and the infos of any row on demand (:meth:`infos`)."""

    def __init__(self, terms: Sequence[str], found: Sequence[Sequence[Any]]) -> None:
        first = found[0]
        self.rows = int(first[0] or 0)
        self.length = int(first[1] or 0)
        self.latest: int | None = None if first[2] is None else int(first[2])
        summary = None
        if self.latest is not None:
            repeats = None if first[4] is None else bytes(first[4])
            summary = _Latest(self.latest, DocInfo(int(first[3]), repeats, first[5]))
        self._summary = summary
        self.most: dict[str, int] = {}
        self.matches: dict[str, Collection[int]] = {}
        self._entries: list[tuple[set[int], array[int], array[int]]] = []
        self.size = 0
        """How many entries the terms' postings hold."""
        for *_, term, in_summary, most, data in found:
            if term is None:
                continue
            if most is not None:
                self.most[term] = int(most)
            packed = array("q")
            packed.frombytes(data or b"")
            if _SWAP:
                packed.byteswap()
            seqs = packed[0::3]
            rows = set(seqs)
            self.size += len(seqs)
            self._entries.append((rows, seqs, packed))
            if in_summary and self.latest is not None:
                rows = {*rows, self.latest}
            self.matches[term] = rows

    @property
    def summaries(self) -> set[int]:
        return set() if self.latest is None else {self.latest}

    def scores(self, scorer: Bm25) -> tuple[dict[int, float], dict[int, int]]:
        """The score of every turn-log row of the terms (``scorer``: the query's, its terms
        in the order the postings were read), and each result's call."""
        held = []
        calls: dict[int, int] = {}
        for _, seqs, packed in self._entries:
            values = packed[2::3]
            counts = [v >> 32 for v in values]
            held.append(zip(seqs, counts, [v & _LENGTH for v in values], strict=True))
            calls.update((s, c) for s, c in zip(seqs, packed[1::3], strict=True) if c)
        return scorer.score_terms(held), calls

    def infos(self, seqs: Iterable[int]) -> dict[int, DocInfo]:
        """The infos of ``seqs`` (a row of no term left out): length, a result's call,
        the counts of the query's terms."""
        need = set(seqs)
        out: dict[int, DocInfo] = {}
        summary = self._summary
        if summary is not None and summary.seq in need:
            need.discard(summary.seq)
            out[summary.seq] = summary.info
        width = len(self._entries)
        counts: dict[int, list[int]] = {}
        for j, (rows, order, packed) in enumerate(self._entries):
            entries: Iterable[tuple[int, int, int]]
            if len(need) < len(rows):
                ats = [3 * bisect_left(order, seq) for seq in need & rows]
                entries = [(packed[at], packed[at + 1], packed[at + 2]) for at in ats]
            else:  # most of the term's rows: a pass over them
                entries = zip(order, packed[1::3], packed[2::3], strict=True)
            for seq, call, value in entries:
                if seq in need:
                    held = counts.get(seq)
                    if held is None:
                        held = counts[seq] = [0] * width
                        out[seq] = DocInfo(value & _LENGTH, None, call or None, held)
                    held[j] = value >> 32
        return out
