"""Search, written once for every backend: what a store keeps for each row it indexes,
and how the rows a query's terms match become ranked hits.

A backend gives the rows of one conversation holding each term (its full-text index:
FTS5, GIN, a dict), the conversation's size, and each candidate's length and repeated
terms; this module ranks them with :class:`timeline._model.ranking.Bm25`, so the same
conversation ranks the same on every backend:

- one BM25 ranking over every distinct term of the query (stop words left out);
- the statistics (how many rows, their average length, how many hold a term) are the
  turn log's alone: summaries do not skew them;
- only the latest summary is searched (an earlier one is superseded by it), and it comes
  after every turn-log hit;
- a tool result is indexed with its call's words (:func:`doc_of`), and a call and its
  result are one hit: the better ranked one, with the other attached.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Collection, Generator, Iterable, Mapping, Sequence
from typing import Final, NamedTuple

from index_store._bounds import Bounds
from timeline._model import (
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    Block,
    Bm25,
    Corpus,
    SearchHit,
    block_counts,
    snippet,
)

__all__ = [
    "BATCH",
    "Chosen",
    "DocInfo",
    "Ranked",
    "SearchDoc",
    "count_in",
    "doc_of",
    "hit_of",
    "link_of",
    "own_terms",
    "rank",
    "ranking",
    "select",
    "unpack_repeats",
]


class SearchDoc(NamedTuple):
    """What a store indexes for one row: its term counts (a tool result's with its
    call's), the terms only its call gave it (to take it out of the index again), the
    link of a tool call or result (:func:`link_of` its call id) and the row of a
    result's call."""

    counts: dict[str, int]
    carried: tuple[str, ...] = ()
    link: int | None = None
    call: int | None = None

    @property
    def terms(self) -> str:
        """The distinct terms, space-separated (what a full-text index takes in)."""
        return " ".join(self.counts)

    @property
    def length(self) -> int:
        return sum(self.counts.values())

    @property
    def repeats(self) -> bytes | None:
        """The counts over 1, packed as ``\\x01term\\x02count`` each (a term never holds
        either byte), so one term's count is found without unpacking the rest; None when
        every term occurs once."""
        packed = b"".join(
            b"\x01" + t.encode("utf-8", "surrogatepass") + b"\x02" + str(n).encode()
            for t, n in self.counts.items()
            if n > 1
        )
        return packed or None


def link_of(call_id: str) -> int:
    """A call id as a signed 64-bit number (what a store looks a call up by)."""
    digest = hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def doc_of(block: Block, call: tuple[int, Block] | None = None) -> SearchDoc:
    """The indexed form of ``block``; ``call`` is a tool result's call (its row and block)."""
    tool = block.type in (REACT_TOOL_CALL, REACT_TOOL_RESULT)
    link = link_of(block.call_id) if tool and block.call_id else None
    if block.type == REACT_TOOL_RESULT and call is not None:
        own = block_counts(block)
        counts = block_counts(block, call[1])
        carried = tuple(t for t in counts if t not in own)
        return SearchDoc(counts, carried, link, call[0])
    return SearchDoc(block_counts(block), (), link, None)


def own_terms(block: Block | None, carried: str | None) -> str:
    """The distinct terms a row was indexed with: its block's (None: a row that did not
    decode, indexed as empty) and what its call gave it."""
    terms = dict.fromkeys(block_counts(block)) if block is not None else {}
    terms.update(dict.fromkeys((carried or "").split()))
    return " ".join(terms)


def count_in(repeats: bytes | None, term: bytes) -> int:
    """The count of a term a row holds (its UTF-8 form), from the row's packed repeats
    (:attr:`SearchDoc.repeats`): 1 when they do not name it."""
    if not repeats:
        return 1
    at = repeats.find(b"\x01" + term + b"\x02")
    if at < 0:
        return 1
    start = at + len(term) + 2
    end = repeats.find(b"\x01", start)
    return int(repeats[start : end if end >= 0 else len(repeats)])


def unpack_repeats(repeats: bytes) -> dict[str, int]:
    """The counts over 1 packed in :attr:`SearchDoc.repeats`."""
    out: dict[str, int] = {}
    for item in repeats.split(b"\x01")[1:]:
        term, _, n = item.partition(b"\x02")
        out[term.decode("utf-8", "surrogatepass")] = int(n)
    return out


class DocInfo(NamedTuple):
    """A candidate row's length, its packed counts over 1 (:attr:`SearchDoc.repeats`)
    and (a result's) call row."""

    length: int
    repeats: bytes | None
    call: int | None = None
    counts: Sequence[int] | None = None
    """The row's counts of the query's terms, in its order (0: not held), when the
    backend knows them (else they are read from ``repeats``)."""


class Ranked(NamedTuple):
    seq: int
    score: float
    kind: str


_NO_INFO: Final = DocInfo(0, None)
Ranking = Generator[set[int], Mapping[int, DocInfo], tuple[list[Ranked], dict[int, DocInfo]]]
"""A ranking in progress: it yields the rows whose infos it needs next and is sent them."""


BATCH: Final = 32
"""Rows read and scored at once while looking for the best (one query each)."""


def ranking(
    terms: Sequence[str],
    matches: Mapping[str, Collection[int]],
    summaries: Collection[int],
    latest_summary: int | None,
    corpus: Corpus,
    limit: int,
    batch: int = BATCH,
    most: Mapping[str, int] | None = None,
    scored: Callable[[Bm25], tuple[Mapping[int, float], Mapping[int, int]]] | None = None,
) -> Ranking:
    """The turn-log rows for ``terms`` that :func:`select` may take for ``limit`` hits,
    best first and then in stored order, then the latest summary when it holds a term;
    with the infos of the rows scored. ``matches`` are each term's rows (summaries
    included), ``corpus`` the turn log's size.

    A row's score is at most ``(K1 + 1) * idf`` summed over the terms it holds; rows are
    scored in the order of that bound, ``batch`` at a time (and every row sharing the bound
    of a batch that starts and ends on it: none of them can stop the search), until no row
    left could beat the ``limit``-th best hit (a call and its result being one). The hits are
    exactly those of scoring every row, but only the rows that could be hits are read.

    ``most``: each term's highest count in one turn-log row of the conversation (a term
    it does not name: 1), which tightens the bound
    (:func:`~index_store._bounds.term_bound`); None: the loose bound ``(K1 + 1) * idf``.

    ``scored``: the backend scores every turn-log row holding a term itself, in no order
    (:meth:`~timeline._model.ranking.Bm25.score_terms`), and names each result's call; only
    the best rows and their calls' results are then read, at once. The same hits, for a
    backend holding every row's info in memory, when scoring every row costs less than
    ordering them."""
    apart = set(summaries)
    log = {t: set(matches.get(t, ())) - apart for t in terms}
    scorer = Bm25(terms, corpus, {t: len(rows) for t, rows in log.items()})
    raw = [(t.encode("utf-8", "surrogatepass"), log[t]) for t in terms]
    infos: dict[int, DocInfo] = {}
    scores: dict[int, float] = {}
    if scored is not None:
        yield from _top(*scored(scorer), limit, infos, scores)
    else:
        order = Bounds(terms, log, corpus, most)
        yield from _best(order, limit, batch, (scorer, raw), infos, scores)
    ranked = [Ranked(seq, scores[seq], "log") for seq in _ordered(scores)]
    summary = latest_summary
    if summary is not None and any(summary in matches.get(t, ()) for t in terms):
        infos.update((yield {summary}))
        doc = infos.get(summary, _NO_INFO)
        held = [
            count_in(doc.repeats, b) if summary in matches.get(t, ()) else 0
            for t, (b, _) in zip(terms, raw, strict=True)
        ]
        ranked.append(Ranked(summary, scorer.score_counts(doc.length, held), "summary"))
    return ranked, infos


_Raw = list[tuple[bytes, set[int]]]


def _ordered(scores: Mapping[int, float]) -> list[int]:
    """Rows best first, then in stored order (a stable sort by score keeps the order)."""
    return sorted(sorted(scores), key=scores.__getitem__, reverse=True)


def _top(
    every: Mapping[int, float],
    calls: Mapping[int, int],
    limit: int,
    infos: dict[int, DocInfo],
    scores: dict[int, float],
) -> Generator[set[int], Mapping[int, DocInfo], None]:
    """Take the rows of ``every`` (each row's score) that :func:`select` may pass into
    ``scores``, and read their infos and those of their calls' results (``calls``: each
    result's call): it takes a hit and at most one partner per row it passes, so it never
    passes more than ``2 * limit`` rows, and looks a call's partner up among its results."""
    top = _ordered(every)[: 2 * limit]
    scores.update((seq, every[seq]) for seq in top)
    taken = set(top)
    need = taken | {seq for seq, call in calls.items() if call in taken}
    if need:
        infos.update((yield need))


def _score(scorer: Bm25, raw: _Raw, seq: int, doc: DocInfo) -> float:
    """The score of row ``seq`` (``raw``: each term's UTF-8 form and turn-log rows)."""
    held = doc.counts
    if held is None:
        rep = doc.repeats
        held = [(count_in(rep, b) if rep else 1) if seq in rows else 0 for b, rows in raw]
    return scorer.score_counts(doc.length, held)


def _best(
    order: Bounds,
    limit: int,
    batch: int,
    scoring: tuple[Bm25, _Raw],
    infos: dict[int, DocInfo],
    scores: dict[int, float],
) -> Generator[set[int], Mapping[int, DocInfo], None]:
    """Score rows in ``order`` into ``scores`` (reading their ``infos``) until no row left
    could beat the ``limit``-th best hit (a call and its result being one)."""
    hits: dict[int, float] = {}  # the best score of each hit to be (a call with its results)
    least = 0.0
    while order.more(least if len(hits) >= limit else None):
        taken = order.take(batch)
        infos.update((yield set(taken)))
        for seq in taken:
            doc = infos.get(seq, _NO_INFO)
            score = scores[seq] = _score(*scoring, seq, doc)
            hit = doc.call or seq
            hits[hit] = max(score, hits.get(hit, score))
        if len(hits) >= limit:
            least = heapq.nlargest(limit, hits.values())[-1]


def rank(
    steps: Ranking, info: Callable[[Collection[int]], Mapping[int, DocInfo]]
) -> tuple[list[Ranked], dict[int, DocInfo]]:
    """Run a :func:`ranking`, reading the rows' infos with ``info``."""
    try:
        need = next(steps)
        while True:
            need = steps.send(info(need) if need else {})
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


class Chosen(NamedTuple):
    """A hit: its row, and the row of its partner (a result's call, a call's result)."""

    ranked: Ranked
    partner: int | None


def select(ranked: Iterable[Ranked], infos: Mapping[int, DocInfo], limit: int) -> list[Chosen]:
    """The first ``limit`` hits, a call and its result counted once (the better ranked
    of the two, the other as its partner). A call's results are always candidates when
    it is (they hold its terms): its partner is the latest of them."""
    results: dict[int, int] = {}
    for seq, doc in sorted(infos.items()):
        if doc.call is not None:
            results[doc.call] = seq
    taken: set[int] = set()
    out: list[Chosen] = []
    for hit in ranked:
        if len(out) >= limit:
            break
        if hit.seq in taken:
            continue
        partner = infos.get(hit.seq, _NO_INFO).call
        if partner is None:
            partner = results.get(hit.seq)
        taken.add(hit.seq)
        if partner is not None:
            taken.add(partner)
        out.append(Chosen(hit, partner))
    return out


def hit_of(block: Block, chosen: Chosen, partner: Block | None, terms: Sequence[str]) -> SearchHit:
    """The SearchHit of a chosen row: snippet of its own text, its partner attached (a
    result's ``call``, a call's ``result``)."""
    call = partner if partner is not None and block.type == REACT_TOOL_RESULT else None
    result = partner if partner is not None and block.type == REACT_TOOL_CALL else None
    return SearchHit(
        block,
        block.path,
        block.turn_id,
        snippet(block.text, terms),
        round(chosen.ranked.score, 6),
        chosen.ranked.kind,
        call=call,
        result=result,
    )
