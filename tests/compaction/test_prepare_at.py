"""Background summaries (``CompactionPolicy(prepare_at=...)``): the next compaction's
summary is made off the agent's path and applied at the trigger when it still holds."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from timeline import (
    CompactionPolicy,
    CompactionStats,
    PolicyError,
    SummaryRequest,
    Timeline,
    blocks,
)

SYSTEM = "You are a careful assistant."


class Gated:
    """A summarizer that waits for ``gate`` before answering (a model call that takes as
    long as the test wants), recording the thread of each call."""

    name = "gated"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.calls: list[SummaryRequest] = []
        self.threads: list[int] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.threads.append(threading.get_ident())
        self.calls.append(request)
        self.started.set()
        assert self.gate.wait(10), "the test never opened the gate"
        return f"Summary {len(self.calls)} of {len(request.blocks)} blocks."


def turn(tl: Timeline, i: int) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"Question {i}: " + "what about the parser? " * 12))
    tl.append(blocks.assistant_completion(f"Answer {i}: " + "the parser reads tokens. " * 16))


def timeline(summarizer: Any, prepare_at: float | None = 0.8, **kw: Any) -> Timeline:
    return Timeline(
        "c",
        policy=CompactionPolicy(max_tokens=4_000, prepare_at=prepare_at),
        summarizer=summarizer,
        **kw,
    )


def until_prepared(tl: Timeline, s: Gated, limit: int = 40) -> int:
    """Turns and renders until the summarizer was started without a compaction; the
    number of turns taken."""
    for i in range(limit):
        turn(tl, i)
        view = tl.render(SYSTEM)
        assert view.compaction is None, "compacted before anything was prepared"
        if s.started.is_set():
            return i + 1
    raise AssertionError("nothing was prepared")


def until_compacted(tl: Timeline, first: int, limit: int = 40) -> CompactionStats:
    for i in range(first, first + limit):
        turn(tl, i)
        view = tl.render(SYSTEM)
        if view.compaction is not None:
            return view.compaction
    raise AssertionError("never compacted")


def test_the_summary_starts_off_the_agents_path_before_the_trigger() -> None:
    """Past prepare_at of the trigger a render returns at once while the summarizer is
    still working on the next compaction, in another thread."""
    s = Gated()
    tl = timeline(s)
    until_prepared(tl, s)
    assert s.calls and not s.gate.is_set()  # the render above returned with it waiting
    assert s.threads[0] != threading.get_ident()
    s.gate.set()


def test_the_trigger_applies_the_prepared_summary() -> None:
    """At the trigger the prepared summary is the compaction's summary: no new call to
    the summarizer, and the stats say it was prepared."""
    s = Gated()
    s.gate.set()
    tl = timeline(s)
    n = until_prepared(tl, s)
    calls = len(s.calls)
    stats = until_compacted(tl, n)
    assert stats.prepared
    assert len(s.calls) == calls
    summary = tl.render(SYSTEM).blocks[0]
    assert summary.type == "conv.range.summary"
    assert "Summary 1 of" in summary.text
    assert stats.tokens_after is not None and stats.tokens_after < stats.tokens_before


def test_a_summary_still_running_at_the_trigger_is_awaited_never_made_twice() -> None:
    """The trigger comes while the prepared summary is still being made: the render
    waits for it (the gate opens only once the compaction has begun) instead of calling
    the summarizer again."""
    s = Gated()
    tl = timeline(s, on_before_compaction=lambda stats: s.gate.set())
    n = until_prepared(tl, s)
    stats = until_compacted(tl, n)
    assert stats.prepared
    assert len(s.calls) == 1


def test_without_prepare_at_the_trigger_calls_the_summarizer() -> None:
    """The same conversation without prepare_at summarizes at the trigger, on the
    agent's thread."""
    s = Gated()
    s.gate.set()
    tl = timeline(s, prepare_at=None)
    stats = until_compacted(tl, 0)
    assert not stats.prepared
    assert s.threads == [threading.get_ident()]


def test_a_prepared_summary_that_no_longer_holds_is_made_again() -> None:
    """Hiding a block the prepared summary covers changes what it covers: the summary
    is made again, from the blocks as they are now, and that one is applied."""
    s = Gated()
    s.gate.set()
    tl = timeline(s)
    n = until_prepared(tl, s)
    hidden = tl.blocks[2]
    tl.hide([hidden.path], replacement_text="(hidden by the test)")
    until_compacted(tl, n)
    assert len(s.calls) == 2
    assert [b.hidden for b in s.calls[1].blocks if b.id == hidden.id] == [True]
    assert "Summary 2 of" in tl.render(SYSTEM).blocks[0].text


def test_a_change_just_before_the_trigger_is_caught_by_the_trigger() -> None:
    """A block the prepared summary covers is hidden and the very next render is the
    trigger: that compaction summarizes the blocks as they are now, not the stale
    prepared summary."""
    s = Gated()
    s.gate.set()
    tl = timeline(s)
    n = until_prepared(tl, s)
    hidden = tl.blocks[2]
    tl.hide([hidden.path], replacement_text="(hidden by the test)")
    for i in range(n, n + 40):
        turn(tl, i)
        if tl.estimate(SYSTEM) > 0.9 * 4_000:
            break
    stats = tl.render(SYSTEM).compaction
    assert stats is not None and not stats.prepared
    assert len(s.calls) == 2
    assert [b.hidden for b in s.calls[1].blocks if b.id == hidden.id] == [True]


def _summary_text(tl: Timeline) -> str:
    first = tl.render(SYSTEM).blocks[0]
    assert first.type == "conv.range.summary"
    return first.text


def test_a_compaction_in_between_discards_the_prepared_summary() -> None:
    """A manual compaction after the summary was prepared: the prepared one extends an
    old summary and is never applied; the next compaction extends the manual one."""
    s = Gated()
    s.gate.set()
    tl = timeline(s)
    n = until_prepared(tl, s)
    manual = tl.compact(SYSTEM)
    assert manual is not None and not manual.prepared
    assert "Summary 2 of" in _summary_text(tl)
    until_compacted(tl, n)
    text = _summary_text(tl)
    assert "Summary 1 of" not in text and "Summary 2 of" not in text
    applied = next(r for r in s.calls[2:] if f"Summary {s.calls.index(r) + 1} of" in text)
    assert "Summary 2 of" in applied.previous_summary


def test_the_inventory_summarizer_prepares_nothing() -> None:
    """The default summarizer calls no model: nothing is prepared, compactions say so."""
    tl = timeline(None)
    stats = until_compacted(tl, 0)
    assert not stats.prepared


def test_renders_with_and_without_prepare_at_agree_until_it_is_applied() -> None:
    """Preparing changes nothing a render shows: the same prompts, request by request,
    with and without prepare_at, up to the compaction that applies it."""
    fast = Gated()
    fast.gate.set()
    plain = Gated()
    plain.gate.set()
    a, b = timeline(fast), timeline(plain, prepare_at=None)
    for i in range(40):
        turn(a, i)
        turn(b, i)
        va, vb = a.render(SYSTEM), b.render(SYSTEM)
        if va.compaction is not None:
            assert va.compaction.prepared
            return
        assert va.to_anthropic() == vb.to_anthropic()
    raise AssertionError("never compacted")


class AsyncGated:
    """An async summarizer gated by an asyncio event."""

    name = "async-gated"

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.calls = 0
        self.loop_calls = 0

    async def asummarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        await self.gate.wait()
        return f"Async summary of {len(request.blocks)} blocks."


def test_an_async_summarizer_is_prepared_as_a_task_and_awaited() -> None:
    """On the async path the summary is a task on the running loop: the renders before
    the trigger return while it waits, the trigger awaits it (opened by the compaction's
    own hook) and applies it."""

    async def run() -> tuple[CompactionStats, int]:
        s = AsyncGated()
        tl = timeline(s, on_before_compaction=lambda stats: s.gate.set())
        for i in range(60):
            turn(tl, i)
            view = await tl.arender(SYSTEM)
            if view.compaction is not None:
                return view.compaction, s.calls
            await asyncio.sleep(0)  # the agent's model call: the loop runs the task
        raise AssertionError("never compacted")

    stats, calls = asyncio.run(run())
    assert stats.prepared
    assert calls == 1


def test_a_sync_render_does_not_wait_for_an_unfinished_task() -> None:
    """A summary prepared as a task that has not finished when a sync render reaches the
    trigger is made again on the spot (a sync render cannot await a task)."""
    s = AsyncGated()
    tl = timeline(s)

    async def prepare() -> None:
        for i in range(40):
            turn(tl, i)
            await tl.arender(SYSTEM)
            await asyncio.sleep(0)  # the agent's model call: the task starts
            if s.calls:
                return

    asyncio.run(prepare())  # the loop ends with the task still waiting
    assert s.calls == 1
    s.gate.set()
    stats = until_compacted(tl, 100)
    assert not stats.prepared


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.2, "0.8", True])
def test_prepare_at_must_be_a_share_of_the_trigger(value: Any) -> None:
    """prepare_at outside (0, 1) is refused with the field named."""
    with pytest.raises(PolicyError, match="prepare_at"):
        CompactionPolicy(max_tokens=4_000, prepare_at=value)


def test_prepare_at_loads_from_a_mapping() -> None:
    """prepare_at loads from config like every policy field."""
    policy = CompactionPolicy.from_mapping({"max_tokens": 4_000, "prepare_at": 0.75})
    assert policy.prepare_at == 0.75
