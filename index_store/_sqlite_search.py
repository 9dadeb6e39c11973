"""Search of the SQLite store: one conversation's range of the search index
(:mod:`index_store._sqlite_index`), ranked by :mod:`index_store._search`.

Each term's rows come from an FTS5 ``MATCH`` with a rowid range (FTS5 seeks to the
conversation's range, whatever else the store holds); the conversation's size from
``search_totals``, each term's highest count in a row from ``search_most``, each
candidate's length and repeated terms from ``search_docs``.
Nothing is decompressed or highlighted to rank: only the hits' rows are read, for their
blocks and snippets.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from index_store._common import search_terms
from index_store._rows import BlockCodec, as_rows
from index_store._search import DocInfo, Ranked, hit_of, rank, ranking, select
from index_store._sql import ROW_COLUMNS
from index_store._sqlite_commit import SEQ_BITS
from index_store._sqlite_file import is_damage
from index_store._sqlite_index import bring_index_up_to_date, first_damaged
from index_store._vectors import DEPTH, fused, model_of, nearest, query_vector
from timeline._model import (
    Block,
    Corpus,
    CorruptRecordError,
    Embedder,
    SearchHit,
    StoreError,
    clean_text,
    searched,
)

__all__ = ["SqliteSearch", "linked", "ranked"]

_LOW: Final = 2**SEQ_BITS - 1
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
    marks = ", ".join("?" * len(terms))
    most = dict(
        db.execute(
            f"SELECT term, tf FROM search_most WHERE conv_no = ? AND term IN ({marks})",
            (lo >> SEQ_BITS, *terms),
        ).fetchall()
    )
    steps = ranking(terms, matches, set(summaries), latest, corpus, limit, most=most)
    return rank(steps, _infos(db))


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


def linked(db: sqlite3.Connection, lo: int, hi: int, seqs: list[int]) -> dict[int, DocInfo]:
    """The infos of rows ``seqs`` of ``[lo, hi]`` and of the results of those that are
    calls (a hit on a call brings its result)."""
    wanted = set(seqs)
    out: dict[int, DocInfo] = {}
    for seq, length, repeats, call in db.execute(
        "SELECT seq, length, repeats, call FROM search_docs WHERE seq BETWEEN ? AND ?", (lo, hi)
    ):
        if seq in wanted or call in wanted:
            out[seq] = DocInfo(length, repeats, call)
    return out


def _chunks(seqs: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(seqs), _CHUNK):
        yield seqs[i : i + _CHUNK]


class SqliteSearch:
    """The search methods of :class:`~index_store._sqlite.SqliteStore` (a mixin)."""

    path: str
    embedder: Embedder | None
    _conn: sqlite3.Connection
    _lock: threading.RLock

    if TYPE_CHECKING:  # provided by SqlStore and the store

        def _query(
            self, sql: str, params: Sequence[Any] = (), conversation_id: str | None = None
        ) -> list[Any]: ...

        def _tx(self, conversation_id: str | None = None) -> AbstractContextManager[Any]: ...

        def _codec(self, conversation_id: str) -> BlockCodec: ...

        def _of(
            self, conversation_id: str, *, keyed: bool = False
        ) -> tuple[str, tuple[str, ...]]: ...

        def _damaged(
            self, exc: sqlite3.Error, conversation_id: str | None
        ) -> CorruptRecordError: ...

    def _query_vector(self, conversation_id: str, query: str) -> bytes | None:
        if self.embedder is None:
            return None
        return query_vector(self.embedder, conversation_id, clean_text(query))

    @searched
    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        vector = (
            None if self.embedder is None else query_vector(self.embedder, conversation_id, query)
        )
        if not terms and vector is None:
            return []
        found = self._query(
            "SELECT conv_no FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
            conversation_id,
        )
        if not found:
            return []
        lo = found[0][0] << SEQ_BITS
        with self._lock:
            self._index_pending(conversation_id)
            try:
                return self._search(conversation_id, terms, lo, limit, vector)
            except sqlite3.Error as exc:
                # a damaged search index shows as assorted errors ("SQL logic error"):
                # only a busy file is not damage
                if is_damage(exc):
                    raise self._damaged(exc, conversation_id) from exc
                raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc

    def _missing_vectors(self, conversation_id: str, model: str) -> list[tuple[int, Block]]:
        of, params = self._of(conversation_id)
        rows = self._query(
            f"SELECT seq, {ROW_COLUMNS} FROM blocks b WHERE {of} AND kind = 'log' AND NOT "
            "EXISTS (SELECT 1 FROM search_vectors v WHERE v.seq = b.seq AND v.model = ?) "
            "ORDER BY seq",
            (*params, model),
            conversation_id,
        )
        codec = self._codec(conversation_id)
        return [(r[0], codec.decode(as_rows([r[1:]])[0])) for r in rows]

    def _index_pending(self, conversation_id: str) -> None:
        """Rows changed outside the library (the ``sqlite3`` shell) are indexed before a
        search reads the index."""
        if self._query("SELECT 1 FROM fts_pending LIMIT 1", (), conversation_id):
            with self._tx(conversation_id) as db:
                bring_index_up_to_date(db)

    def _search(
        self, cid: str, terms: list[str], lo: int, limit: int, vector: bytes | None
    ) -> list[SearchHit]:
        damaged = first_damaged(self._conn, lo, lo | _LOW)
        if damaged is not None:
            raise self._codec(cid).corrupt(
                damaged, "it no longer decodes, so search cannot say whether it matches"
            )
        depth = limit if vector is None else max(limit, DEPTH)
        found, infos = ranked(self._conn, lo, lo | _LOW, terms, depth)
        if vector is not None and self.embedder is not None:
            stored = self._conn.execute(
                "SELECT seq, vector FROM search_vectors WHERE seq BETWEEN ? AND ? AND model = ?",
                (lo, lo | _LOW, model_of(self.embedder)),
            )
            near = nearest(vector, stored)
            found = fused(found, near)
            infos = {**linked(self._conn, lo, lo | _LOW, near), **infos}
        chosen = select(found, infos, limit)
        wanted = [c.ranked.seq for c in chosen] + [c.partner for c in chosen if c.partner]
        marks = ", ".join("?" * len(wanted))
        rows = self._conn.execute(
            f"SELECT seq, {ROW_COLUMNS} FROM blocks WHERE seq IN ({marks})", wanted
        ).fetchall()
        codec = self._codec(cid)
        blocks = {r[0]: codec.decode(as_rows([r[1:]])[0]) for r in rows}
        return [
            hit_of(blocks[c.ranked.seq], c, blocks.get(c.partner or -1), terms)
            for c in chosen
            if c.ranked.seq in blocks  # indexed, but the row is gone
        ]
