"""How recall orders what the archive gave it: one BM25 over the candidates together (the
in-memory archive's and the store's), so that where a block lives does not decide its
place, with the candidates as the corpus and no length normalization: a long block comes
back by its matching lines, so its length costs the prompt nothing, and a rare word of
the query found in one line of a long tool output counts as much as in a short message.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from timeline._model import K1, idf

__all__ = ["rank_candidates"]

K = TypeVar("K", bound=Hashable)


def rank_candidates(
    terms: Sequence[str], candidates: Sequence[tuple[K, Mapping[str, int]]]
) -> list[tuple[K, float]]:
    """``candidates`` (a key and its term counts) best first, each with how much of the
    query it matches: its score over the score of a text holding every term once (1.0;
    a term repeated counts a little more); only those holding a term of ``terms``; ties
    keep the order given."""
    n = len(candidates)
    weights = [(t, idf(n, sum(1 for _, c in candidates if c.get(t)))) for t in terms]
    whole = sum(w for _, w in weights) or 1.0
    scored: list[tuple[float, int, K]] = []
    for i, (key, counts) in enumerate(candidates):
        score = 0.0
        for term, weight in weights:
            tf = counts.get(term, 0)
            if tf:
                score += weight * tf * (K1 + 1.0) / (tf + K1)
        if score > 0:
            scored.append((-score / whole, i, key))
    scored.sort()
    return [(key, -neg) for neg, _, key in scored]
