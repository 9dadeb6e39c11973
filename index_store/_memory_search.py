"""The memory store's search index: one conversation's rows by position, what
:mod:`index_store._search` ranks, kept up to date as rows are stored."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import attrs

from index_store._search import DocInfo, Ranked, doc_of, rank, ranking
from timeline._model import REACT_TOOL_CALL, REACT_TOOL_RESULT, Block, Corpus

__all__ = ["MemoryIndex"]


@attrs.define
class MemoryIndex:
    """Postings and row infos of one conversation; a row's key is its position."""

    ids: list[str] = attrs.field(factory=list)
    """Position -> block id."""
    postings: dict[str, set[int]] = attrs.field(factory=dict)
    docs: dict[int, DocInfo] = attrs.field(factory=dict)
    summaries: list[int] = attrs.field(factory=list)
    calls: dict[str, tuple[int, Block]] = attrs.field(factory=dict)
    """A call id -> the latest call with it (what a later result carries)."""
    results: dict[int, int] = attrs.field(factory=dict)
    """A call's position -> its latest result's."""
    vectors: dict[int, tuple[str, bytes]] = attrs.field(factory=dict)
    """Position -> the embedder's name and the row's packed vector."""
    most: dict[str, int] = attrs.field(factory=dict)
    """A term -> its highest count in one turn-log row (over 1 only; never lowered)."""
    log_rows: int = 0
    log_terms: int = 0

    def add(self, kind: str, block: Block) -> int:
        """Index a newly stored row; its position."""
        position = len(self.ids)
        self.ids.append(block.id)
        call = self.calls.get(block.call_id or "") if block.type == REACT_TOOL_RESULT else None
        doc = doc_of(block, call)
        if block.type == REACT_TOOL_CALL and block.call_id:
            self.calls[block.call_id] = (position, block)
        for term in doc.counts:
            self.postings.setdefault(term, set()).add(position)
        self.docs[position] = DocInfo(doc.length, doc.repeats, doc.call)
        if doc.call is not None:
            self.results[doc.call] = position
        if kind == "summary":
            self.summaries.append(position)
        else:
            self.log_rows += 1
            self.log_terms += doc.length
            for term, n in doc.counts.items():
                if n > self.most.get(term, 1):
                    self.most[term] = n
        return position

    def rank(self, terms: list[str], limit: int) -> tuple[list[Ranked], Mapping[int, DocInfo]]:
        matches = {t: self.postings.get(t, set()) for t in terms}

        def info(rows: Collection[int]) -> Mapping[int, DocInfo]:
            return {r: self.docs[r] for r in rows}

        latest = self.summaries[-1] if self.summaries else None
        corpus = Corpus(self.log_rows, self.log_terms)
        return rank(
            ranking(terms, matches, set(self.summaries), latest, corpus, limit, most=self.most),
            info,
        )

    def linked(self, positions: Iterable[int]) -> dict[int, DocInfo]:
        """The infos of ``positions`` and of their calls' results."""
        wanted = set(positions)
        wanted |= {self.results[p] for p in wanted if p in self.results}
        return {p: self.docs[p] for p in wanted}
