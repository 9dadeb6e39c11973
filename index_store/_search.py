"""Search, written once for every backend: what a store keeps for each row it indexes,
and how the rows a query's terms match become ranked hits.

A backend gives the rows of one conversation holding each term (its full-text index:
FTS5, GIN, a dict), the conversation's size, and each candidate's length and repeated
terms; this module ranks them with :func:`timeline.model.ranking.bm25`, so the same
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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Final, NamedTuple

import msgspec

from timeline.model.block import REACT_TOOL_CALL, REACT_TOOL_RESULT, Block
from timeline.model.persistence import SearchHit
from timeline.model.ranking import Corpus, bm25
from timeline.model.search_text import block_counts
from timeline.model.snippet import snippet

__all__ = [
    "Chosen",
    "DocInfo",
    "Ranked",
    "SearchDoc",
    "doc_of",
    "hit_of",
    "link_of",
    "own_terms",
    "rank",
    "select",
    "unpack_repeats",
]

_encode = msgspec.msgpack.Encoder(order="deterministic").encode
_decode_counts = msgspec.msgpack.Decoder(dict[str, int])


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
        """The counts over 1, packed (None when every term occurs once)."""
        over = {t: n for t, n in self.counts.items() if n > 1}
        return _encode(over) if over else None


def link_of(call_id: str) -> int:
    """A call id as a signed 64-bit number (what a store looks a call up by)."""
    digest = hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def doc_of(block: Block, call: tuple[int, Block] | None = None) -> SearchDoc:
    """The indexed form of ``block``; ``call`` is a tool result's call (its row and block)."""
    tool = block.type in (REACT_TOOL_CALL, REACT_TOOL_RESULT) and block.call_id
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


def unpack_repeats(blob: bytes | None) -> dict[str, int]:
    return _decode_counts.decode(blob) if blob else {}


class DocInfo(NamedTuple):
    """A candidate row's length, counts over 1 and (a result's) call row."""

    length: int
    repeats: Mapping[str, int]
    call: int | None = None


class Ranked(NamedTuple):
    seq: int
    score: float
    kind: str


_NO_INFO: Final = DocInfo(0, {})
_Candidate = tuple[int, int, dict[str, int]]


def rank(
    terms: Sequence[str],
    matches: Mapping[str, Collection[int]],
    summaries: Collection[int],
    latest_summary: int | None,
    corpus: Corpus,
    info: Callable[[Collection[int]], Mapping[int, DocInfo]],
) -> tuple[list[Ranked], Mapping[int, DocInfo]]:
    """Every turn-log row holding a term, best first (then in stored order), then the
    latest summary when it holds one; with the rows' infos. ``matches`` are each term's
    rows (summaries included), ``corpus`` the turn log's size, ``info`` reads rows."""
    log = {t: {s for s in matches.get(t, ()) if s not in summaries} for t in terms}
    found = set().union(*log.values()) if log else set()
    summary = (
        latest_summary
        if latest_summary is not None and any(latest_summary in matches.get(t, ()) for t in terms)
        else None
    )
    infos = info(found | ({summary} if summary is not None else set()))

    def candidate(seq: int, where: Mapping[str, Collection[int]]) -> _Candidate:
        doc = infos.get(seq, _NO_INFO)
        return seq, doc.length, {t: doc.repeats.get(t, 1) for t in terms if seq in where[t]}

    holding = {t: len(rows) for t, rows in log.items()}
    scored = bm25(terms, corpus, holding, (candidate(s, log) for s in found))
    scored.sort(key=lambda ss: (-ss[1], ss[0]))
    ranked = [Ranked(seq, score, "log") for seq, score in scored]
    if summary is not None:
        everywhere = {t: matches.get(t, ()) for t in terms}
        ((seq, score),) = bm25(terms, corpus, holding, [candidate(summary, everywhere)])
        ranked.append(Ranked(seq, score, "summary"))
    return ranked, infos


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
