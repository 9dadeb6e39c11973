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

from index_store._pg_sql import ROW_SELECT
from index_store._rows import BlockCodec, Row
from index_store._search import (
    Chosen,
    DocInfo,
    SearchDoc,
    doc_of,
    link_of,
    rank,
    select,
    unpack_repeats,
)
from timeline.model.block import REACT_TOOL_CALL, REACT_TOOL_RESULT, Block
from timeline.model.errors import CorruptRecordError
from timeline.model.ranking import Corpus

__all__ = [
    "INSERT",
    "SEARCH_3",
    "Flow",
    "Hits",
    "index_flow",
    "params",
    "run",
    "search_flow",
    "token",
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
    "CREATE INDEX bt_search_terms ON bt_search USING GIN (terms)",
    "CREATE INDEX bt_search_rows ON bt_search (conversation_id, seq)",
    "CREATE INDEX bt_search_links ON bt_search (conversation_id, link, seq) WHERE link IS NOT NULL",
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
_STATS: Final = (
    "SELECT summary, count(*), coalesce(sum(length), 0), max(seq) FROM bt_search "
    "WHERE conversation_id = %(cid)s GROUP BY summary"
)
_MATCHES: Final = (
    "SELECT q.term, s.seq, s.summary FROM unnest(%(terms)s::text[]) AS q(term), "
    "LATERAL (SELECT seq, summary FROM bt_search WHERE terms @> ARRAY[%(token)s, q.term] "
    "AND conversation_id = %(cid)s) AS s"
)
_INFOS: Final = (
    "SELECT seq, length, repeats, call FROM bt_search WHERE seq = ANY(%(seqs)s) "
    "AND conversation_id = %(cid)s"
)
_ROWS: Final = (
    f"SELECT seq, {ROW_SELECT} FROM bt_blocks WHERE seq = ANY(%(seqs)s) "
    "AND conversation_id = %(cid)s"
)


def token(conversation_id: str) -> str:
    """The term that marks a conversation's rows (a ``:`` no analysed term holds)."""
    return ":" + hashlib.md5(conversation_id.encode("utf-8")).hexdigest()[:16]


def index_flow(
    cid: str, seq: int, kind: str, block: Block, calls: dict[str, tuple[int, Block]]
) -> Flow:
    """Index a block just inserted as row ``seq``; ``calls`` are the calls the same
    commit wrote (a result carries its call's terms), kept up to date."""
    call = None
    if block.type == REACT_TOOL_RESULT and block.call_id:
        call = calls.get(block.call_id)
        if call is None:
            found = yield _CALL, {"cid": cid, "link": link_of(block.call_id), "seq": seq}
            call = _the_call(cid, block.call_id, found)
    elif block.type == REACT_TOOL_CALL and block.call_id:
        calls[block.call_id] = (seq, block)
    yield INSERT, params(cid, seq, kind, doc_of(block, call))


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


def search_flow(cid: str, terms: list[str], limit: int) -> Flow:
    """The hits of ``terms`` in conversation ``cid``: returns the chosen hits and the
    rows (``seq`` first) of them and of their partners."""
    corpus, latest = Corpus(0, 0), None
    for summary, n, length, top in (yield _STATS, {"cid": cid}):
        if summary:
            latest = top
        else:
            corpus = Corpus(int(n), int(length))
    matched = yield _MATCHES, {"cid": cid, "terms": terms, "token": token(cid)}
    matches: dict[str, set[int]] = {t: set() for t in terms}
    summaries: set[int] = set()
    for term, seq, summary in matched:
        matches[term].add(seq)
        if summary:
            summaries.add(seq)
    found = sorted(set().union(*matches.values()))
    infos = {
        seq: DocInfo(length, unpack_repeats(repeats), call)
        for seq, length, repeats, call in (yield _INFOS, {"cid": cid, "seqs": found})
    }
    ranked, _ = rank(terms, matches, summaries, latest, corpus, lambda _: infos)
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
