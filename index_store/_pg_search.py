"""PostgreSQL's search index (schema 3, with schema 4's highest counts and schema 5's
postings) and its queries, for the sync store and its async twin alike.

Each block row has a ``bt_search`` row: its distinct terms (:mod:`timeline._model.search_text`,
analysed in Python so every backend agrees) and what ranking needs (length, counts over
1, a tool call's or result's link, a result's call, whether it is a summary). Each
turn-log term of a conversation has its postings (:mod:`index_store._pg_postings`): a
search reads its terms' postings, the conversation's totals and its latest summary in
one statement, ranks in Python, and reads only the hits' blocks after.

The flows are generators of ``(sql, params)`` that receive each statement's rows, so one
piece of code runs on a sync cursor (:func:`run`) and an async one.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Final

import attrs

from index_store._pg_postings import POST, WORDS, Postings, entry, post_params
from index_store._pg_sql import ROW_SELECT
from index_store._rows import BlockCodec, Row
from index_store._search import (
    Chosen,
    DocInfo,
    SearchDoc,
    doc_of,
    link_of,
    rank,
    ranking,
    select,
)
from index_store._vectors import DEPTH, fused, nearest
from timeline._model import REACT_TOOL_CALL, REACT_TOOL_RESULT, Block, Corpus, CorruptRecordError

__all__ = [
    "INSERT",
    "MOST",
    "MOST_4",
    "SEARCHED",
    "SEARCH_3",
    "TOTALS",
    "Pending",
    "Flow",
    "Hits",
    "index_flow",
    "params",
    "run",
    "search_flow",
    "totals_flow",
]

Query = tuple[str, Any]
Flow = Generator[Query, list[Any], Any]

SEARCH_3: Final = (
    """CREATE TABLE bt_search (
        seq BIGINT PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        terms TEXT[] NOT NULL,
        length INTEGER NOT NULL,
        repeats BYTEA,
        link BIGINT,
        call BIGINT,
        summary BOOLEAN NOT NULL)""",
    "ALTER TABLE bt_search ALTER COLUMN terms SET STORAGE EXTERNAL",
    "ALTER TABLE bt_search ALTER COLUMN repeats SET STORAGE EXTERNAL",
    "ALTER TABLE bt_search SET (toast_tuple_target = 128)",
    "CREATE INDEX bt_search_rows ON bt_search (conversation_id, seq)",
    "CREATE INDEX bt_search_links ON bt_search (conversation_id, link, seq) WHERE link IS NOT NULL",
    "CREATE INDEX bt_search_summaries ON bt_search (conversation_id, seq) WHERE summary",
    """CREATE TABLE bt_search_vectors (
        seq BIGINT PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BYTEA NOT NULL)""",
    "CREATE INDEX bt_search_vectors_rows ON bt_search_vectors (conversation_id, seq)",
    """CREATE TABLE bt_search_totals (
        conversation_id TEXT PRIMARY KEY,
        rows BIGINT NOT NULL,
        terms BIGINT NOT NULL)""",
)
"""The index (``bt_search_totals``: each conversation's turn-log rows and their terms,
what BM25 averages over; ``bt_search_vectors``: the rows' vectors of a store given an
embedder). A row's terms and repeats are kept out of line, so a search
visits narrow rows; the GIN index takes each row in as it is written (no pending list
for a search to scan after every commit)."""

MOST_4: Final = (
    """CREATE TABLE bt_search_most (
        conversation_id TEXT NOT NULL,
        term TEXT NOT NULL,
        tf INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, term))""",
)
"""Schema 4: each term's highest count in one turn-log row of a conversation, when over
1 (what bounds a row's score; never lowered, so it stays a bound when rows go)."""

MOST: Final = (
    "INSERT INTO bt_search_most (conversation_id, term, tf) SELECT %s, t, n FROM "
    "unnest(%s::text[], %s::int[]) AS u(t, n) ON CONFLICT (conversation_id, term) "
    "DO UPDATE SET tf = greatest(bt_search_most.tf, excluded.tf)"
)

INSERT: Final = (
    "INSERT INTO bt_search (seq, conversation_id, terms, length, repeats, link, call, "
    "summary) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)
_CALL: Final = (
    f"SELECT {ROW_SELECT}, seq FROM bt_blocks WHERE seq IN (SELECT seq FROM bt_search WHERE "
    "conversation_id = %(cid)s AND link = %(link)s AND seq < %(seq)s AND call IS NULL) "
    "ORDER BY seq DESC"
)
TOTALS: Final = (
    "INSERT INTO bt_search_totals (conversation_id, rows, terms) VALUES (%s, %s, %s) "
    "ON CONFLICT (conversation_id) DO UPDATE SET rows = bt_search_totals.rows + "
    "excluded.rows, terms = bt_search_totals.terms + excluded.terms"
)
_VECTORS: Final = (
    "SELECT seq, vector FROM bt_search_vectors WHERE conversation_id = %(cid)s "
    "AND model = %(model)s"
)
_LINKED: Final = (
    "SELECT seq, length, repeats, call FROM bt_search WHERE conversation_id = %(cid)s "
    "AND (seq = ANY(%(seqs)s) OR call = ANY(%(seqs)s))"
)
_ROWS: Final = (
    f"SELECT seq, {ROW_SELECT} FROM bt_blocks WHERE seq = ANY(%(seqs)s) "
    "AND conversation_id = %(cid)s"
)


EVERY: Final = 1024
"""Postings entries up to which a search scores every row they hold, a term at a time
(:meth:`~index_store._pg_postings.Postings.scores`), rather than in the order of their
bound (:func:`~index_store._search.ranking`): scoring one entry costs a small part of
taking one row in that order, and a common term's rows are then never ordered at all.
A search fused with the nearest rows (an embedder) always ranks in order: fusion ranks
the rows that order scored."""

SEARCHED: Final = False
"""How a search runs its statements (``prepare``): never prepared. psycopg prepares a
statement run five times, and PostgreSQL may then keep one plan for any parameters,
made when the conversation was small: a search's statements took 1.5 to 3 times as
long in a coding session that grew between questions."""


@attrs.define
class Pending:
    """What one commit indexed so far: its calls (what their results carry) and the
    turn-log rows and terms it added (for :data:`TOTALS`)."""

    calls: dict[str, tuple[int, Block]] = attrs.field(factory=dict)
    rows: int = 0
    terms: int = 0
    most: dict[str, int] = attrs.field(factory=dict)
    """The highest counts over 1 of the turn-log rows indexed (for :data:`MOST`)."""
    postings: dict[str, list[tuple[int, int, int]]] = attrs.field(factory=dict)
    """The rows' postings by term (for :data:`~index_store._pg_postings.POST`)."""

    def add(self, seq: int, doc: SearchDoc) -> None:
        """Count a turn-log row and take its postings."""
        self.rows += 1
        self.terms += doc.length
        for term, n in doc.counts.items():
            if n > self.most.get(term, 1):
                self.most[term] = n
        length = doc.length
        for term, n in doc.counts.items():
            self.postings.setdefault(term, []).append(entry(seq, doc.call, n, length))


def index_flow(cid: str, seq: int, kind: str, block: Block, pending: Pending) -> Flow:
    """Index a block just inserted as row ``seq`` (a result carries its call's terms)."""
    call = None
    if block.type == REACT_TOOL_RESULT and block.call_id:
        call = pending.calls.get(block.call_id)
        if call is None:
            found = yield _CALL, {"cid": cid, "link": link_of(block.call_id), "seq": seq}
            call = _the_call(cid, block.call_id, found)
    elif block.type == REACT_TOOL_CALL and block.call_id:
        pending.calls[block.call_id] = (seq, block)
    doc = doc_of(block, call)
    if kind != "summary":
        pending.add(seq, doc)
    yield INSERT, params(cid, seq, kind, doc)


def totals_flow(cid: str, pending: Pending) -> Flow:
    """Add what the commit indexed to the conversation's totals."""
    if pending.rows:
        yield TOTALS, (cid, pending.rows, pending.terms)
    if pending.most:
        yield MOST, (cid, list(pending.most), list(pending.most.values()))
    if pending.postings:
        yield POST, post_params(cid, pending.postings)
    pending.rows = pending.terms = 0
    pending.most = {}
    pending.postings = {}


def _the_call(cid: str, call_id: str, rows: list[Any]) -> tuple[int, Block] | None:
    codec = BlockCodec(cid, text_apart=True)
    for *columns, seq in rows:
        try:
            block = codec.decode(Row(*columns))
        except CorruptRecordError:
            continue
        if block.type == REACT_TOOL_CALL and block.call_id == call_id:
            return int(seq), block
    return None


def params(cid: str, seq: int, kind: str, doc: SearchDoc) -> tuple[Any, ...]:
    """The ``bt_search`` row of ``doc`` (:data:`INSERT`'s parameters). A turn-log row's
    terms are its postings' (:mod:`index_store._pg_postings`), not kept twice: only a
    summary's are listed (what a search reads of the latest)."""
    return (
        seq,
        cid,
        list(doc.counts) if kind == "summary" else [],
        doc.length,
        doc.repeats,
        doc.link,
        doc.call,
        kind == "summary",
    )


Hits = tuple[list[Chosen], dict[int, Row]]


def search_flow(
    cid: str, terms: list[str], limit: int, near: tuple[str, bytes] | None = None
) -> Flow:
    """The hits of ``terms`` in conversation ``cid`` (fused with the rows nearest a
    query's vector, ``near``: its model and vector): returns the chosen hits and the rows
    (``seq`` first) of them and of their partners. The words are read in one statement
    (:data:`~index_store._pg_postings.WORDS`) and ranked in Python."""
    found = yield WORDS, {"cid": cid, "terms": terms}
    words = Postings(terms, found)
    corpus = Corpus(words.rows, words.length)
    depth = limit if near is None else max(limit, DEPTH)
    every = words.scores if near is None and words.size <= EVERY else None
    steps = ranking(
        terms,
        words.matches,
        words.summaries,
        words.latest,
        corpus,
        depth,
        most=words.most,
        scored=every,
    )
    ranked, infos = rank(steps, words.infos)
    if near is not None:
        stored = yield _VECTORS, {"cid": cid, "model": near[0]}
        nearby = nearest(near[1], ((s, bytes(v)) for s, v in stored))
        ranked = fused(ranked, nearby)
        linked = yield _LINKED, {"cid": cid, "seqs": nearby}
        infos = {**{s: DocInfo(n, r, c) for s, n, r, c in linked}, **infos}
    chosen = select(ranked, infos, limit)
    wanted = [c.ranked.seq for c in chosen] + [c.partner for c in chosen if c.partner]
    rows = yield _ROWS, {"cid": cid, "seqs": wanted}
    return chosen, {r[0]: Row(*r[1:]) for r in rows}


def run(cur: Any, flow: Flow, prepare: bool | None = None, binary: bool | None = None) -> Any:
    """Run ``flow`` on a sync cursor; its return value. ``prepare=False``: no statement
    is prepared (:data:`SEARCHED`); ``binary``: rows come in PostgreSQL's binary format
    (a search's postings and bodies as they are, not in hex)."""
    try:
        query = next(flow)
        while True:
            cur.execute(*query, prepare=prepare, binary=binary)
            query = flow.send(cur.fetchall() if cur.description else [])
    except StopIteration as stop:
        return stop.value
