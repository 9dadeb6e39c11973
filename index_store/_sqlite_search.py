"""Search of the SQLite store: one conversation's range of the search index
(:mod:`index_store._sqlite_index`), ranked by :mod:`index_store._search`.

Each term's rows come from an FTS5 ``MATCH`` with a rowid range (FTS5 seeks to the
conversation's range, whatever else the store holds); the conversation's size from
``search_totals``, each candidate's length and repeated terms from ``search_docs``.
Nothing is decompressed or highlighted to rank: only the hits' rows are read, for their
blocks and snippets.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Final

from index_store._search import DocInfo, Ranked, rank, ranking
from index_store._sqlite_commit import SEQ_BITS
from timeline.model.ranking import Corpus

__all__ = ["ranked"]

_CHUNK: Final = 500
"""Rows named in one ``IN (...)`` list."""


def ranked(
    db: sqlite3.Connection, lo: int, hi: int, terms: list[str], limit: int
) -> tuple[list[Ranked], Mapping[int, DocInfo]]:
    """The best rows of ``[lo, hi]`` for ``terms`` (:func:`~index_store._search.ranking`),
    with their infos."""
    matches = {term: _holding(db, term, lo, hi) for term in terms}
    summaries = [
        seq
        for (seq,) in db.execute(
            "SELECT seq FROM blocks WHERE kind = 'summary' AND seq BETWEEN ? AND ?", (lo, hi)
        )
    ]
    latest = summaries[-1] if summaries else None
    corpus = _corpus(db, lo)
    return rank(ranking(terms, matches, set(summaries), latest, corpus, limit), _infos(db))


def _holding(db: sqlite3.Connection, term: str, lo: int, hi: int) -> set[int]:
    """The rows of ``[lo, hi]`` holding ``term`` (as one string: a row each costs more)."""
    (found,) = db.execute(
        "SELECT group_concat(rowid) FROM search_index WHERE search_index MATCH ? "
        "AND rowid BETWEEN ? AND ?",
        (f'"{term}"', lo, hi),
    ).fetchone()
    return set(map(int, found.split(","))) if found else set()


def _corpus(db: sqlite3.Connection, lo: int) -> Corpus:
    """The conversation's turn-log rows and terms."""
    found = db.execute(
        "SELECT rows, terms FROM search_totals WHERE conv_no = ?", (lo >> SEQ_BITS,)
    ).fetchone()
    return Corpus(*found) if found else Corpus(0, 0)


def _infos(db: sqlite3.Connection) -> Callable[[Collection[int]], Mapping[int, DocInfo]]:
    def read(seqs: Collection[int]) -> dict[int, DocInfo]:
        out: dict[int, DocInfo] = {}
        for chunk in _chunks(sorted(seqs)):
            marks = ", ".join("?" * len(chunk))
            for seq, length, repeats, call in db.execute(
                f"SELECT seq, length, repeats, call FROM search_docs WHERE seq IN ({marks})",
                chunk,
            ):
                out[seq] = DocInfo(length, repeats, call)
        return out

    return read


def _chunks(seqs: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(seqs), _CHUNK):
        yield seqs[i : i + _CHUNK]
