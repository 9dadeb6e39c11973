"""One ranking for search: BM25 over the terms of :mod:`timeline._model.search_text`, the
same arithmetic in every store and in any in-memory search (:class:`Bm25Index`), and
reciprocal-rank fusion to merge it with another ranking (an embedding model's).

Every distinct term of a query counts; a text matching more of them, or a rarer one, or
more often for its length, ranks higher. Equal scores keep the texts' order (older first).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Final, Generic, NamedTuple, TypeVar

from timeline._model.search_text import query_terms, term_counts

__all__ = ["B", "K1", "RRF_K", "Bm25", "Bm25Index", "Corpus", "bm25", "fuse", "idf"]

K1: Final = 1.2
"""How fast a term's score saturates with its count in one text."""
B: Final = 0.3
"""How much a text's length (against the average) discounts its counts: a little. A
tool's output is long because it holds many things (a file, a log), not because it says
one thing at length, and the line a question is about is one of them; BM25's usual 0.75
lets every short message sharing a few words with the question outrank it."""
RRF_K: Final = 60
"""Reciprocal-rank fusion's constant: a text ranked ``r`` adds ``1 / (RRF_K + r)``."""

K = TypeVar("K", bound=Hashable)


class Corpus(NamedTuple):
    """What BM25 needs of the texts searched: how many, and their total length in terms."""

    texts: int
    terms: int

    @property
    def average(self) -> float:
        return self.terms / self.texts if self.texts and self.terms else 1.0


def idf(texts: int, holding: int) -> float:
    """The weight of a term held by ``holding`` of ``texts`` texts (never negative)."""
    return math.log(1.0 + (texts - holding + 0.5) / (holding + 0.5))


class Bm25:
    """BM25 of one query over one corpus: ``holding`` is each term's number of texts
    holding it. Terms are summed in query order, so every store computes the same float.
    """

    def __init__(self, terms: Sequence[str], corpus: Corpus, holding: Mapping[str, int]):
        self.weights = tuple((t, idf(corpus.texts, holding.get(t, 0))) for t in terms)
        self.average = corpus.average

    def score(self, length: int, counts: Mapping[str, int]) -> float:
        """The score of a text of ``length`` terms holding ``counts`` of the query's (a
        term not in ``counts`` counts 0)."""
        return self.score_counts(length, [counts.get(t, 0) for t, _ in self.weights])

    def score_counts(self, length: int, counts: Sequence[int]) -> float:
        """:meth:`score` with the counts in the query's order (0: not held)."""
        norm = K1 * (1.0 - B + B * length / self.average)
        score = 0.0
        for (_, weight), tf in zip(self.weights, counts, strict=True):
            if tf:
                score += weight * tf * (K1 + 1.0) / (tf + norm)
        return score

    def score_terms(self, held: Sequence[Iterable[tuple[K, int, int]]]) -> dict[K, float]:
        """The score of every text holding a term, a term at a time: ``held`` lists, for
        each term in query order, the texts holding it as ``(key, count, length)``. The
        same floats as :meth:`score_counts` (each text's terms are added in query order),
        for a backend that has each term's texts at hand rather than each text's terms."""
        average = self.average
        norms: dict[K, float] = {}
        scores: dict[K, float] = {}
        for (_, weight), texts in zip(self.weights, held, strict=True):
            for key, tf, length in texts:
                norm = norms.get(key)
                if norm is None:
                    norm = norms[key] = K1 * (1.0 - B + B * length / average)
                    scores[key] = 0.0
                scores[key] += weight * tf * (K1 + 1.0) / (tf + norm)
        return scores


def bm25(
    terms: Sequence[str],
    corpus: Corpus,
    holding: Mapping[str, int],
    candidates: Iterable[tuple[K, int, Mapping[str, int]]],
) -> list[tuple[K, float]]:
    """Each candidate's score: ``candidates`` are ``(key, length, counts)``."""
    scorer = Bm25(terms, corpus, holding)
    return [(key, scorer.score(length, counts)) for key, length, counts in candidates]


def fuse(*rankings: Sequence[K], k: int = RRF_K) -> list[tuple[K, float]]:
    """Reciprocal-rank fusion: each ranking adds ``1 / (k + rank)`` (rank from 1) to each
    key it holds; best first, ties in the order keys first appear."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


class _Text(NamedTuple):
    order: int
    length: int
    counts: dict[str, int]


class Bm25Index(Generic[K]):
    """An in-memory BM25 index of texts by key (a block id, a position): what the memory
    store searches, and what searching blocks not yet stored needs.

    >>> index: Bm25Index[str] = Bm25Index()
    >>> index.add("b1", "Researching adoption agencies")
    >>> index.add("b2", "We went hiking")
    >>> [key for key, _ in index.search("What did Caroline research?")]
    ['b1']
    """

    def __init__(self) -> None:
        self._texts: dict[K, _Text] = {}
        self._postings: dict[str, dict[K, int]] = {}
        self._terms = 0
        self._added = 0

    def __len__(self) -> int:
        return len(self._texts)

    def __contains__(self, key: object) -> bool:
        return key in self._texts

    @property
    def corpus(self) -> Corpus:
        return Corpus(len(self._texts), self._terms)

    def add(self, key: K, text: str) -> None:
        """Index ``text`` under ``key`` (replacing what ``key`` held)."""
        self.add_counts(key, term_counts(text))

    def add_counts(self, key: K, counts: Mapping[str, int]) -> None:
        """Index a text by its term counts (:func:`~timeline._model.search_text.term_counts`)."""
        self.discard(key)
        own = dict(counts)
        length = sum(own.values())
        self._texts[key] = _Text(self._added, length, own)
        self._added += 1
        self._terms += length
        for term, n in own.items():
            self._postings.setdefault(term, {})[key] = n

    def discard(self, key: K) -> None:
        """Forget ``key`` (nothing when it is not indexed)."""
        text = self._texts.pop(key, None)
        if text is None:
            return
        self._terms -= text.length
        for term in text.counts:
            holders = self._postings[term]
            del holders[key]
            if not holders:
                del self._postings[term]

    def counts(self, key: K) -> tuple[int, Mapping[str, int]]:
        """The length and term counts ``key`` was indexed with."""
        text = self._texts[key]
        return text.length, text.counts

    def holding(self, terms: Iterable[str]) -> dict[str, set[K]]:
        """The keys holding each term."""
        return {t: set(self._postings.get(t, ())) for t in terms}

    def search(self, query: str | Sequence[str], limit: int | None = None) -> list[tuple[K, float]]:
        """Keys whose texts hold any term of ``query`` (a text, or its terms), best first,
        with their scores; at most ``limit``."""
        terms = query_terms(query) if isinstance(query, str) else list(dict.fromkeys(query))
        holders = self.holding(terms)
        found = set().union(*holders.values()) if holders else set()
        candidates = [(key, self._texts[key].length, self._texts[key].counts) for key in found]
        scored = bm25(terms, self.corpus, {t: len(k) for t, k in holders.items()}, candidates)
        scored.sort(key=lambda ks: (-ks[1], self._texts[ks[0]].order))
        return scored if limit is None else scored[:limit]
