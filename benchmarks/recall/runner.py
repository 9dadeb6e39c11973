"""Drive the library through a session as an agent would, and measure every question.

Per step: blocks appended, the prompt rendered before each model request, the timeline
persisted when a turn ends. At each question: is every answer string in the rendered
prompt, in the summary, and are the evidence blocks in the top results of one
``store.search`` with the question as asked; the same question against the baselines.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

import index_store
from benchmarks.recall.baselines import Mirror
from benchmarks.recall.model import Ask, Call, Question, Say, Session, Turn
from timeline import CompactionPolicy, TiktokenCounter, Timeline, blocks
from timeline._model.block import CONV_RANGE_SUMMARY

BM25_SHARE = 0.3
"""The share of the budget the recency + BM25 baseline gives to its hits."""


@attrs.define
class Outcome:
    """One question's figures."""

    qid: str
    kind: str
    distance: int | None
    in_prompt: bool
    in_summary: bool
    visible: bool
    """Every evidence block is itself in the prompt (verbatim, not a summary of it)."""
    search_rank: int | None
    """Worst rank of the evidence blocks in ``store.search`` (None: one not in the hits)."""
    recency: bool
    recency_bm25: bool
    reference_rank: int | None


@attrs.define
class Run:
    """One session at one budget with one policy."""

    outcomes: list[Outcome] = attrs.field(factory=list)
    renders: int = 0
    compactions: int = 0
    bound: float = 0.0
    """Compactions the session's new content allows: its tokens as the prompt counts
    them (each block with its framing, :meth:`Timeline.block_tokens`) over
    ``(trigger_ratio - keep_ratio) x budget``, the room a compaction frees."""
    content_tokens: int = 0
    prefix_changes: int = 0
    search_seconds: list[float] = attrs.field(factory=list)
    summary_tokens: list[int] = attrs.field(factory=list)
    prompt_tokens: list[int] = attrs.field(factory=list)


@attrs.define
class _Clock:
    now: dt.datetime = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        self.now += dt.timedelta(seconds=20)
        return self.now


Policy = Callable[[int], CompactionPolicy]


def policy_from(overrides: Mapping[str, Any]) -> Policy:
    """The library's policy at a budget: its defaults with ``overrides`` (a mapping as
    ``CompactionPolicy.from_mapping`` takes)."""
    return lambda budget: CompactionPolicy.from_mapping({**overrides, "max_tokens": budget})


@attrs.define
class _Driver:
    session: Session
    budget: int
    policy: Policy
    store: Any
    run: Run = attrs.field(factory=Run)
    clock: _Clock = attrs.field(factory=_Clock)
    ids: dict[str, str] = attrs.field(factory=dict)
    mirror: Mirror = attrs.field(factory=lambda: Mirror(TiktokenCounter()))
    previous: tuple[list[tuple[str, str]], int] | None = None

    @property
    def conversation_id(self) -> str:
        return f"{self.session.shape}-{self.session.seed}-{self.budget}"

    def timeline(self) -> Timeline:
        return Timeline(
            self.conversation_id,
            policy=self.policy(self.budget),
            clock=self.clock,
        )

    def render(self, tl: Timeline, *, session: bool = True) -> Any:
        """Render as the agent's next request; ``session=False`` for a question asked of
        the reloaded conversation, which is not part of the session's own history (its
        compactions and cache breaks are not counted)."""
        view = tl.render(system=self.session.system)
        if not session:
            return view
        self.run.renders += 1
        self.run.prompt_tokens.append(view.tokens)
        if view.compaction is not None:
            self.run.compactions += 1
        shown = [(b.id, b.text) for b in view.blocks]
        if self.previous is not None:
            before, cached = self.previous
            if shown[:cached] != before[:cached]:
                self.run.prefix_changes += 1
        points = list(view.cache_points)
        self.previous = (shown, (max(points) + 1) if points else len(shown))
        return view

    def drive(self) -> Run:
        tl = self.timeline()
        first = True
        for step in self.session.steps:
            if isinstance(step, Turn):
                if not first:
                    tl.persist(self.store)
                first = False
                self.clock.now = step.when.replace(tzinfo=dt.UTC)
                tl.begin_turn()
                self.run.content_tokens += tl.block_tokens(tl.blocks[-1])  # its header
            elif isinstance(step, Say):
                make = blocks.user_prompt if step.role == "user" else blocks.assistant_completion
                stored = tl.append(make(step.text))
                self.run.content_tokens += tl.block_tokens(stored)
                self.mirror.add(step.key, step.text)
                if step.key:
                    self.ids[step.key] = stored.id
                if step.render:
                    self.render(tl)
            elif isinstance(step, Call):
                call = tl.append(blocks.tool_call(step.tool, step.params))
                self.mirror.add(None, f"{step.tool} {call.text}")
                result = tl.append(blocks.tool_result(call.call_id, step.result, tool_id=step.tool))
                self.run.content_tokens += tl.block_tokens(call) + tl.block_tokens(result)
                self.mirror.add(step.key, step.result, result=True)
                if step.key:
                    self.ids[step.key] = result.id
                self.render(tl)
            elif isinstance(step, Ask):
                self.ask(tl, step.question)
                reply = tl.append(blocks.assistant_completion("Let me check."))
                self.run.content_tokens += tl.block_tokens(reply)
                self.mirror.add(None, "Let me check.")
        tl.persist(self.store)
        policy = self.policy(self.budget)
        room = (policy.trigger_ratio - policy.keep_ratio) * self.budget
        self.run.bound = self.run.content_tokens / room
        for question in self.session.final_questions:
            again = Timeline.load(
                self.store, tl.conversation_id, policy=self.policy(self.budget), clock=self.clock
            )
            self.ask(again, question, session=False)
            self.mirror.pop()  # the question leaves with the reloaded timeline
        return self.run

    def ask(self, tl: Timeline, q: Question, *, session: bool = True) -> None:
        reference = self.mirror.reference_ranks(q.text, q.evidence)
        start = time.perf_counter()
        hits = self.store.search(tl.conversation_id, q.text, limit=10)
        self.run.search_seconds.append(time.perf_counter() - start)
        asked = tl.append(blocks.user_prompt(q.text))
        if session:
            self.run.content_tokens += tl.block_tokens(asked)
        self.mirror.add(None, q.text)
        view = self.render(tl, session=session)
        text = view.to_text()
        summary = "\n".join(b.text for b in view.blocks if b.type == CONV_RANGE_SUMMARY)
        if summary:
            self.run.summary_tokens.append(tl.token_memo.counter.count(summary))
        shown = {b.id for b in view.blocks} | _recalled_ids(view)
        wanted = [self.ids[k] for k in q.evidence]
        room = self.budget - self.mirror.counter.count(self.session.system)
        self.run.outcomes.append(
            Outcome(
                qid=q.qid,
                kind=q.kind,
                distance=q.distance,
                in_prompt=all(a in text for a in q.answers),
                in_summary=bool(summary) and all(a in summary for a in q.answers),
                visible=all(i in shown for i in wanted),
                search_rank=_worst_rank(hits, wanted),
                recency=all(a in self.mirror.recency(room) for a in q.answers),
                recency_bm25=all(
                    a in self.mirror.recency_bm25(room, q.text, BM25_SHARE) for a in q.answers
                ),
                reference_rank=reference,
            )
        )


def _recalled_ids(view: Any) -> set[str]:
    """The blocks a recall put back into the prompt (none before recall existed)."""
    recalled = getattr(view, "recalled", None) or ()
    out = set()
    for item in recalled:
        block = getattr(item, "block", item)
        block_id = getattr(block, "id", None)
        if isinstance(block_id, str):
            out.add(block_id)
    return out


def _hit_ids(hit: Any) -> list[str]:
    """The blocks one search hit brings: its own, and its call's or result's when the
    store links them."""
    out = [hit.block.id]
    for name in ("call", "result", "related"):
        linked = getattr(hit, name, None)
        for block in linked if isinstance(linked, list | tuple) else (linked,):
            block_id = getattr(block, "id", None)
            if isinstance(block_id, str):
                out.append(block_id)
    return out


def _worst_rank(hits: list[Any], wanted: list[str]) -> int | None:
    ranks = []
    for block_id in wanted:
        rank = next((n for n, hit in enumerate(hits, 1) if block_id in _hit_ids(hit)), None)
        if rank is None:
            return None
        ranks.append(rank)
    return max(ranks)


def run_session(session: Session, budget: int, policy: Policy, store_url: str | None) -> Run:
    """One session at one budget, in a fresh store (SQLite in a temporary directory when
    ``store_url`` is None)."""
    with tempfile.TemporaryDirectory() as tmp:
        url = store_url or f"sqlite:///{Path(tmp) / 'recall.db'}"
        store = index_store.open(url)
        try:
            return _Driver(session, budget, policy, store).drive()
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                close()
