"""The part of the archive a timeline still holds, indexed for recall.

After a compaction the blocks before the latest summary (but those carried past it) are
no longer shown; until a persist moves them to the store they live only in memory. With
the blocks the clearing tier shows as a placeholder, they are what recall searches
besides the store. The index is rebuilt when what it covers may have changed (the
structure or the store version moved); each block's terms are analysed once, ever.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence, Set

import attrs

from timeline._model import (
    CONV_RANGE_SUMMARY,
    REACT_PLAN_HISTORY,
    Block,
    Bm25Index,
    IndexStore,
    block_counts,
    block_type,
    search_text,
    shown_words,
)

__all__ = [
    "RECALLABLE",
    "Archive",
    "Entry",
    "Recall",
    "RecallMemo",
    "VisibleWords",
    "recallable",
]

RECALLABLE = frozenset({"text", "attachment", "tool_call", "tool_result"})
"""Render kinds whose blocks may be recalled (not headers, summaries, thinking or opaque
provider items)."""


def recallable(block: Block) -> bool:
    """A block whose text may come back into the prompt."""
    return (
        not block.hidden
        and block.type not in (CONV_RANGE_SUMMARY, REACT_PLAN_HISTORY)
        and block_type(block.type).render in RECALLABLE
        and bool(block.text.strip())
    )


@attrs.define(eq=False)
class Archive:
    """The in-memory archive's BM25 index (by block id), its blocks, and each tool
    result's call (a result is found by its call's words too, and shown with them)."""

    index: Bm25Index[str] = attrs.field(factory=Bm25Index)
    blocks: dict[str, Block] = attrs.field(factory=dict)
    calls: dict[str, Block] = attrs.field(factory=dict)
    """Result id -> its call."""
    key: tuple[int, ...] | None = None
    """What the index was built for (None: never built)."""
    _counts: dict[str, tuple[Block, Block | None, dict[str, int]]] = attrs.field(factory=dict)
    """Block id -> (the block, its call, its term counts) of every block indexed: each
    analysed once, and the index changed only by what entered or left the archive."""

    def refresh(
        self,
        key: tuple[int, ...],
        blocks: Sequence[Block],
        summary_index: int,
        carried: Set[str],
        cleared: Mapping[str, str],
    ) -> None:
        """Index the blocks no longer shown whole: before ``summary_index`` and not
        ``carried``, or ``cleared``; nothing is done when ``key`` is the one indexed."""
        if key == self.key:
            return
        self.key = key
        wanted: dict[str, tuple[Block, Block | None]] = {}
        calls: dict[str, Block] = {}
        answered = {b.call_id for b in blocks if block_type(b.type).render == "tool_result"}
        for i, b in enumerate(blocks):
            kind = block_type(b.type).render
            if kind == "tool_call" and b.call_id:
                calls[b.call_id] = b
            shown = i > summary_index or b.id in carried
            if (shown and b.id not in cleared) or not recallable(b):
                continue
            if kind == "tool_call" and b.call_id in answered:
                continue  # found, and shown, with its result
            wanted[b.id] = (b, calls.get(b.call_id or "") if kind == "tool_result" else None)
        held = self._counts
        for bid, (b, call, _) in list(held.items()):
            now = wanted.get(bid)
            if now is None or now[0] is not b or now[1] is not call:
                del held[bid]  # left the archive, or changed: indexed again below if in it
                self.index.discard(bid)
        for bid, (b, call) in wanted.items():
            if bid not in held:
                counts = block_counts(b, call)
                held[bid] = (b, call, counts)
                self.index.add_counts(bid, counts)
        self.blocks = {bid: b for bid, (b, _) in wanted.items()}
        self.calls = {bid: call for bid, (_, call) in wanted.items() if call is not None}

    def counts(self, block_id: str) -> Mapping[str, int]:
        """The term counts ``block_id`` is indexed by (its call's included)."""
        return self._counts[block_id][2]

    def search(self, terms: Sequence[str], limit: int) -> list[str]:
        """The ids of the best blocks for ``terms``, best first."""
        if not self.blocks or not terms:
            return []
        return [key for key, _ in self.index.search(terms, limit)]


@attrs.define(eq=False)
class VisibleWords:
    """How many blocks of the visible stream show each word
    (:func:`~timeline._model.search_text.shown_words`): what the prompt already shows, so
    that recall brings back only what it does not.

    Splitting a block costs what its text is long, so blocks are counted only when a
    question needs them: blocks appended since the last count wait in :attr:`pending`,
    and :attr:`counts` (over the counted blocks only) is then a lower bound of what the
    stream shows. When the stream changed otherwise, the blocks no longer shown are
    taken out of the counts and the new ones wait. Each block is split once while it is
    shown."""

    counts: Counter[str] = attrs.field(factory=Counter)
    """Word -> how many counted blocks show it."""
    pending: dict[str, Block] = attrs.field(factory=dict)
    """Blocks shown but not counted yet, by id."""
    version: int = -1
    seen: int = 0
    last: Block | None = None
    _counted: dict[str, tuple[Block, frozenset[str]]] = attrs.field(factory=dict)
    """Block id -> (the block, its words), for the blocks counted."""

    def words_of(self, block: Block) -> frozenset[str]:
        """The words ``block`` shows (split once while it is counted)."""
        held = self._counted.get(block.id)
        if held is not None and held[0] is block:
            return held[1]
        return shown_words(search_text(block))

    def update(self, version: int, shown: Sequence[Block]) -> None:
        """Take in ``shown`` (the stream's blocks at ``version``): blocks appended since
        wait in :attr:`pending`; blocks gone are taken out of the counts."""
        n = self.seen
        if version == self.version and n <= len(shown) and (not n or shown[n - 1] is self.last):
            for b in shown[n:]:
                self.pending[b.id] = b
        else:
            now = {b.id: b for b in shown}
            counts = self.counts
            for bid, (block, words) in list(self._counted.items()):
                if now.get(bid) is not block:
                    del self._counted[bid]
                    counts.subtract(words)
                    for w in words:
                        if counts[w] <= 0:
                            del counts[w]
            counted = self._counted
            self.pending = {
                bid: b for bid, b in now.items() if bid not in counted or counted[bid][0] is not b
            }
            self.version = version
        self.seen = len(shown)
        self.last = shown[-1] if shown else None

    def count(self, blocks: Sequence[Block]) -> None:
        """Count those of ``blocks`` that are pending."""
        pending = self.pending
        for b in blocks:
            if pending.get(b.id) is b:
                del pending[b.id]
                words = shown_words(search_text(b))
                self._counted[b.id] = (b, words)
                self.counts.update(words)

    def flush(self) -> None:
        """Count every pending block: :attr:`counts` is then exact."""
        self.count(list(self.pending.values()))


Entry = tuple[Block | None, Block]
"""One thing recall found: a block, with its call when it is a tool result."""


@attrs.frozen
class Recall:
    """What one render recalled: the labelled block it adds after the stable stream, its
    cost, and the archived blocks it shows."""

    block: Block
    cost: int
    recalled: tuple[Block, ...]


@attrs.define(eq=False)
class RecallMemo:
    """What the last renders found and recalled, reused while the query, the archive
    and the room are the same (each key holds everything its result depends on)."""

    query_sources: tuple[Block, ...] = ()
    """The blocks the last query was taken from (compared by identity)."""
    query_ids: frozenset[str] = frozenset()
    """The ids of those blocks."""
    query_terms: tuple[str, tuple[str, ...]] = ("", ())
    """A query's text and its search terms (analysed only when recall searches)."""
    search_key: tuple[object, ...] | None = None
    store: IndexStore | None = None
    """The store searched for :attr:`found` (compared by identity)."""
    found: list[tuple[Entry, Mapping[str, int]]] = attrs.field(factory=list)
    """The candidates of the last search, best first, with their term counts."""
    counts: dict[str, tuple[Block, dict[str, int]]] = attrs.field(factory=dict)
    """Stored blocks' term counts by id (and the block they were counted for)."""
    visible: VisibleWords = attrs.field(factory=VisibleWords)
    open_words: dict[str, tuple[Block, tuple[str, ...]]] = attrs.field(factory=dict)
    """Each query block's words no other counted block was seen to show, by block id (and
    the block): only those can be missing from view while :attr:`open_version` is the
    stream's version."""
    open_version: int = -1
    pack_key: tuple[object, ...] | None = None
    packed: Recall | None = None
    archive: Archive = attrs.field(factory=Archive)
    """The blocks in memory no longer shown whole, indexed for search."""
