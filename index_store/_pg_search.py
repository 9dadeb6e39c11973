"""PostgreSQL's search index (schema 3) and its queries, for the sync store and its async
twin alike.

Each block row has a ``bt_search`` row: its distinct terms (:mod:`timeline.model.search_text`,
analysed in Python so every backend agrees) with its conversation's token, under a GIN
index, and what ranking needs (length, counts over 1, a tool call's or result's link, a
result's call, whether it is a summary). A query ANDs each term with the conversation's
token, so it costs what the conversation holds, never the whole store. Nothing is read
to rank but these rows; only the hits' blocks are read.

The flows are generators of ``(sql, params)`` that receive each statement's rows, so one
piece of code runs on a sync cursor (:func:`run`) and an async one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator
from typing import Any, Final

import attrs

from index_store._pg_sql import ROW_SELECT
from index_store._rows import BlockCodec, Row
from index_store._search import (
    Chosen,
    DocInfo,
    SearchDoc,
    doc_of,
    link_of,
    ranking,
    select,
)
from index_store._vectors import DEPTH, fused, nearest
from timeline.model.block import REACT_TOOL_CALL, REACT_TOOL_RESULT, Block
from timeline.model.errors import CorruptRecordError
from timeline.model.ranking import Corpus

__all__ = [
    "INSERT",
    "SEARCH_3",
    "TOTALS",
    "Pending",
    "Flow",
    "Hits",
    "index_flow",
    "params",
    "run",
    "search_flow",
    "token",
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
    "CREATE INDEX bt_search_terms ON bt_search USING GIN (terms) WITH (fastupdate = off)",
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
_STATS: Final = (
    "SELECT t.rows, t.terms, (SELECT max(seq) FROM bt_search WHERE conversation_id = "
    "%(cid)s AND summary) FROM (SELECT 1) AS one LEFT JOIN bt_search_totals t "
    "ON t.conversation_id = %(cid)s"
)
_MATCHES: Final = (
    "SELECT q.term, array_agg(s.seq), array_agg(s.seq) FILTER (WHERE s.summary) "
    "FROM unnest(%(terms)s::text[]) AS q(term), "
    "LATERAL (SELECT seq, summary FROM bt_search WHERE terms @> ARRAY[%(token)s, q.term] "
    "AND conversation_id = %(cid)s) AS s GROUP BY q.term"
)
_INFOS: Final = (
    "SELECT seq, length, repeats, call FROM bt_search WHERE seq = ANY(%(seqs)s) "
    "AND conversation_id = %(cid)s"
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


PG_BATCH: Final = 256
"""Rows whose infos one query reads while ranking (a round trip costs more than rows)."""


def token(conversation_id: str) -> str:
    """The term that marks a conversation's rows (a ``:`` no analysed term holds)."""
    return ":" + hashlib.md5(conversation_id.encode("utf-8")).hexdigest()[:16]


@attrs.define
class Pending:
    """What one commit indexed so far: its calls (what their results carry) and the
    turn-log rows and terms it added (for :data:`TOTALS`)."""

    calls: dict[str, tuple[int, Block]] = attrs.field(factory=dict)
    rows: int = 0
    terms: int = 0


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
        pending.rows += 1
        pending.terms += doc.length
    yield INSERT, params(cid, seq, kind, doc)


def totals_flow(cid: str, pending: Pending) -> Flow:
    """Add what the commit indexed to the conversation's totals."""
    if pending.rows:
        yield TOTALS, (cid, pending.rows, pending.terms)
    pending.rows = pending.terms = 0


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
    """The ``bt_search`` row of ``doc`` (:data:`INSERT`'s parameters)."""
    terms = [token(cid), *doc.counts]
    return (seq, cid, terms, doc.length, doc.repeats, doc.link, doc.call, kind == "summary")


Hits = tuple[list[Chosen], dict[int, Row]]


def search_flow(
    cid: str, terms: list[str], limit: int, near: tuple[str, bytes] | None = None
) -> Flow:
    """The hits of ``terms`` in conversation ``cid`` (fused with the rows nearest a
    query's vector, ``near``: its model and vector): returns the chosen hits and the rows
    (``seq`` first) of them and of their partners."""
    ((rows, length, latest),) = yield _STATS, {"cid": cid}
    corpus = Corpus(int(rows or 0), int(length or 0))
    matched = yield _MATCHES, {"cid": cid, "terms": terms, "token": token(cid)}
    matches: dict[str, set[int]] = {t: set() for t in terms}
    summaries: set[int] = set()
    for term, seqs, apart in matched:
        matches[term] = set(seqs)
        summaries.update(apart or ())
    depth = limit if near is None else max(limit, DEPTH)
    steps = ranking(terms, matches, summaries, latest, corpus, depth, batch=PG_BATCH)
    infos: dict[int, DocInfo] = {}
    try:
        need = next(steps)
        while True:
            rows = (yield _INFOS, {"cid": cid, "seqs": sorted(need)}) if need else []
            got = {s: DocInfo(n, r, c) for s, n, r, c in rows}
            need = steps.send(got)
    except StopIteration as stop:
        ranked, infos = stop.value
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


def run(cur: Any, flow: Flow) -> Any:
    """Run ``flow`` on a sync cursor; its return value."""
    try:
        query = next(flow)
        while True:
            cur.execute(*query)
            query = flow.send(cur.fetchall() if cur.description else [])
    except StopIteration as stop:
        return stop.value
