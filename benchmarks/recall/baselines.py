"""What the library is measured against, fed the same blocks: a plain recency window of
the same budget, the same window with BM25 hits from older history added, and a plain
BM25 ranking of every block (the reference for ``store.search``).

Independent of the library on purpose: its own word splitting and its own BM25, so a
change in the library's search cannot move the yardstick.
"""

from __future__ import annotations

import collections
import math
import re

import attrs

from timeline import TokenCounter

OVERHEAD = 4
"""Tokens a message costs beyond its text (role and framing), for every strategy."""
_STOP_WORDS = (
    "a an and are as at be but by did do does for from had has have he her his how i if in "
    "into is it its me my of on or our she so that the their them then there they this to "
    "up was we were what when where which who why will with you your"
)
STOP = frozenset(_STOP_WORDS.split(" "))
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP]


@attrs.frozen
class Entry:
    """One appended block as every strategy sees it."""

    key: str | None
    text: str
    tokens: int
    result: bool
    """A tool result (a window never starts with one: its call would be missing)."""


@attrs.define
class Mirror:
    """The blocks appended so far, with a BM25 index over them."""

    counter: TokenCounter
    entries: list[Entry] = attrs.field(factory=list)
    postings: dict[str, list[tuple[int, int]]] = attrs.field(factory=dict)
    lengths: list[int] = attrs.field(factory=list)

    def add(self, key: str | None, text: str, *, result: bool = False) -> None:
        tokens = self.counter.count(text) + OVERHEAD
        self.entries.append(Entry(key, text, tokens, result))
        terms = words(text)
        for term, tf in collections.Counter(terms).items():
            self.postings.setdefault(term, []).append((len(self.lengths), tf))
        self.lengths.append(len(terms))

    def pop(self) -> None:
        """Take the newest entry back out (a question asked of a reloaded timeline)."""
        last = len(self.entries) - 1
        for term in set(words(self.entries.pop().text)):
            self.postings[term].pop()
        del self.lengths[last]

    def window_start(self, budget: int) -> int:
        """The first entry of the newest entries that fit ``budget`` tokens."""
        used, start = 0, len(self.entries)
        while start > 0 and used + self.entries[start - 1].tokens <= budget:
            start -= 1
            used += self.entries[start].tokens
        while start < len(self.entries) and self.entries[start].result:
            start += 1
        return start

    def recency(self, budget: int) -> str:
        return "\n".join(e.text for e in self.entries[self.window_start(budget) :])

    def rank(self, query: str, before: int | None = None) -> list[int]:
        """Entry indexes by BM25 score for ``query`` (k1 1.2, b 0.75), best first, among
        the entries before ``before``."""
        n = len(self.lengths) if before is None else before
        if n == 0:
            return []
        avg = sum(self.lengths[:n]) / n or 1.0
        scores: dict[int, float] = collections.defaultdict(float)
        for term in set(words(query)):
            docs = [(i, tf) for i, tf in self.postings.get(term, ()) if i < n]
            if not docs:
                continue
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            for i, tf in docs:
                norm = tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lengths[i] / avg))
                scores[i] += idf * norm
        return sorted(scores, key=lambda i: (-scores[i], -i))

    def recency_bm25(self, budget: int, query: str, share: float) -> str:
        """The newest entries in ``(1 - share)`` of the budget, then the best BM25 hits
        from before them while they fit the rest."""
        start = self.window_start(int(budget * (1 - share)))
        room = budget - sum(e.tokens for e in self.entries[start:])
        recalled = []
        for i in self.rank(query, before=start):
            if self.entries[i].tokens <= room:
                recalled.append(self.entries[i].text)
                room -= self.entries[i].tokens
        window = [e.text for e in self.entries[start:]]
        return "\n".join(recalled + window)

    def reference_ranks(self, query: str, keys: tuple[str, ...]) -> int | None:
        """The worst rank (1-based) of ``keys`` in a BM25 ranking of every entry, None when
        one is not in the first 100. A hit on a tool call brings its result (the entry
        after it), as a search should."""
        order = [self._found(i) for i in self.rank(query)[:100]]
        ranks = [next((n for n, found in enumerate(order, 1) if k in found), None) for k in keys]
        return None if None in ranks else max(r for r in ranks if r is not None)

    def _found(self, i: int) -> tuple[str | None, ...]:
        """The keys a hit on entry ``i`` finds: its own, and its result's for a call."""
        after = self.entries[i + 1] if i + 1 < len(self.entries) else None
        if after is not None and after.result and not self.entries[i].result:
            return (self.entries[i].key, after.key)
        return (self.entries[i].key,)
