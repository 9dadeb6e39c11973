"""The turn-log rows a search may score, in the order of their score's bound (MaxScore):
what lets :func:`index_store._search.ranking` stop once no row left could be a hit, and
read only the rows that could be.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

from timeline._model import K1, B, Corpus, idf

__all__ = ["Bounds", "term_bound"]


def term_bound(weight: float, most: int | None, average: float) -> float:
    """The most a term of idf ``weight`` can add to a row's score: BM25 grows with the
    count and shrinks with the length, and a row holding the term ``most`` times at most
    is at least that long (None: any count, the bound ``(K1 + 1) * idf``). Raised by a
    hair over what the term can add, so a row left unscored (its bound no more than the
    last hit's score) can never tie with a hit."""
    if most is None:
        return (K1 + 1.0) * weight
    norm = K1 * (1.0 - B + B * most / average)
    return weight * most * (K1 + 1.0) / (most + norm) * (1.0 + 1e-9)


class Bounds:
    """The rows by their bound, best first (newest first among equal bounds: a tool
    result holds its call's terms, so it is scored no later than its call, and a call's
    hit then finds its result among the scored rows).

    A row's bound is the sum of the bounds of the terms it holds (:func:`term_bound`),
    in the query's order. Rows are taken in lazily (MaxScore): the terms of the highest
    bounds first, and a term's rows only when the best row not yet taken in could come
    next: a row holding none of the terms taken in is bounded by the sum of the other
    terms' bounds. The order is exactly that of sorting every row, but a search whose
    hits hold its rarer terms never visits the rows of its common ones."""

    def __init__(
        self,
        terms: Sequence[str],
        log: Mapping[str, set[int]],
        corpus: Corpus,
        most: Mapping[str, int] | None,
    ) -> None:
        gains = []
        for term in terms:
            top = None if most is None else most.get(term, 1)
            gains.append(term_bound(idf(corpus.texts, len(log[term])), top, corpus.average))
        self._terms = [(gain, log[term]) for term, gain in zip(terms, gains, strict=True)]
        self._left = sorted(range(len(terms)), key=lambda i: (gains[i], -i))
        """The terms not taken in yet, the next to take in last."""
        self._rest = self._most_left()
        self._seen: set[int] = set()
        self._heap: list[tuple[float, int]] = []

    def _most_left(self) -> float:
        """More than the bound of any row holding only terms not taken in (a hair over
        their sum, whatever the order a row's bound adds them in)."""
        return math.fsum(self._terms[i][0] for i in self._left) * (1.0 + 1e-9)

    def _ready(self) -> None:
        """Take terms in until the best row taken in comes before any row left out."""
        heap = self._heap
        while self._left and (not heap or -heap[0][0] <= self._rest):
            index = self._left.pop()
            rows = self._terms[index][1]
            self._rest = self._most_left()
            # a row not seen holds no term taken in before: its bound adds this term's
            # and those it holds of the terms left, in the query's order
            held = [self._terms[i] for i in sorted([index, *self._left])]
            for seq in rows - self._seen:
                bound = 0.0
                for gain, holding in held:
                    if seq in holding:
                        bound += gain
                heapq.heappush(heap, (-bound, -seq))
            self._seen |= rows

    def __bool__(self) -> bool:
        """Whether rows are left."""
        self._ready()
        return bool(self._heap)

    def _below(self, least: float) -> bool:
        """Whether no row left can score over ``least`` (exact once ready)."""
        heap = self._heap
        return (not heap or -heap[0][0] <= least) and (not self._left or self._rest <= least)

    def more(self, least: float | None) -> bool:
        """Whether rows are left and (``least``: the last hit's score) the next may score
        over it; terms are taken in only when it takes them to know."""
        if least is not None and self._below(least):
            return False
        self._ready()
        return bool(self._heap) and (least is None or not self._below(least))

    def bound(self) -> float:
        """The next row's bound (there is one)."""
        self._ready()
        return -self._heap[0][0]

    def take(self, batch: int) -> list[int]:
        """The next ``batch`` rows, and the rows after them that share their bound when
        they all share the first one's: none of those can stop a search that reached
        them, so all of them are scored and read at once."""
        top = self.bound()
        taken = [self.pop() for _ in range(batch) if self]
        while self and self.bound() == top:
            taken.append(self.pop())
        return taken

    def pop(self) -> int:
        """The next row (there is one)."""
        self._ready()
        return -heapq.heappop(self._heap)[1]
