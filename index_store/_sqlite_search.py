"""Search of the SQLite store: one conversation's range of the search index
(:mod:`index_store._sqlite_index`), ranked by :mod:`index_store._search`.

Each term's rows come from an FTS5 ``MATCH`` with a rowid range (FTS5 seeks to the
conversation's range, whatever else the store holds); the conversation's size and each
candidate's length and repeated terms from ``search_docs``. Nothing is decompressed or
highlighted to rank: only the hits' rows are read, for their blocks and snippets.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Final

from index_store._search import DocInfo, Ranked, rank, unpack_repeats
from timeline.model.ranking import Corpus

__all__ = ["ranked"]

_CHUNK: Final = 500
"""Rows named in one ``IN (...)`` list."""


def ranked(
    db: sqlite3.Connection, lo: int, hi: int, terms: list[str]
) -> tuple[list[Ranked], Mapping[int, DocInfo]]:
    """The rows of ``[lo, hi]`` holding any of ``terms``, ranked, with their infos."""
    matches = {
        term: {
            seq
            for (seq,) in db.execute(
                "SELECT rowid FROM search_index WHERE search_index MATCH ? "
                "AND rowid BETWEEN ? AND ?",
                (f'"{term}"', lo, hi),
            )
        }
        for term in terms
    }
    summaries = [
        seq
        for (seq,) in db.execute(
            "SELECT seq FROM blocks WHERE kind = 'summary' AND seq BETWEEN ? AND ?", (lo, hi)
        )
    ]
    latest = summaries[-1] if summaries else None
    return rank(terms, matches, set(summaries), latest, _corpus(db, lo, hi, summaries), _infos(db))


def _corpus(db: sqlite3.Connection, lo: int, hi: int, summaries: list[int]) -> Corpus:
    """The turn log's rows and terms (every indexed row of the range but the summaries)."""
    rows, terms = db.execute(
        "SELECT count(*), total(length) FROM search_docs WHERE seq BETWEEN ? AND ?", (lo, hi)
    ).fetchone()
    for chunk in _chunks(summaries):
        marks = ", ".join("?" * len(chunk))
        n, length = db.execute(
            f"SELECT count(*), total(length) FROM search_docs WHERE seq IN ({marks})", chunk
        ).fetchone()
        rows, terms = rows - n, terms - length
    return Corpus(int(rows), int(terms))


def _infos(db: sqlite3.Connection) -> Callable[[Collection[int]], Mapping[int, DocInfo]]:
    def read(seqs: Collection[int]) -> dict[int, DocInfo]:
        out: dict[int, DocInfo] = {}
        for chunk in _chunks(sorted(seqs)):
            marks = ", ".join("?" * len(chunk))
            for seq, length, repeats, call in db.execute(
                f"SELECT seq, length, repeats, call FROM search_docs WHERE seq IN ({marks})",
                chunk,
            ):
                out[seq] = DocInfo(length, unpack_repeats(repeats), call)
        return out

    return read


def _chunks(seqs: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(seqs), _CHUNK):
        yield seqs[i : i + _CHUNK]
