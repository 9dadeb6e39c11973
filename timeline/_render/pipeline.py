"""The render pipeline behind ``Timeline.render`` / ``arender`` / ``compact`` / ``estimate``.

1. prepare: the system prompt's cost, the volatile tail, the stream brought up to date
   (:mod:`.prepare`);
2. sanitize: compact when over the trigger (or forced) in three steps, so the same code
   serves sync and async summarizers: plan (:mod:`.sanitize`) -> summarize -> apply
   (:mod:`.summary`);
3. recall: with ``CompactionPolicy(recall=...)``, the archived blocks that match the
   newest prompt, in one block opening the volatile tail (:mod:`.recall`);
4. fit: exact counts where the budget needs them, truncation of blocks no cut could
   shrink (render-only), cache checkpoints on the stable stream, the volatile tail last
   (:mod:`.budget`).

Every step reads and changes the timeline's state through its :class:`Ledger` only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import attrs

from timeline._compaction import CompactionStats
from timeline._model import Block, BudgetError, PinnedOverBudgetError, ToolSpec, tracing
from timeline._render.background import prepare_next
from timeline._render.budget import finish, forced_target
from timeline._render.context import RenderedContext
from timeline._render.prepare import Prep, overhead, prepare, raw_tokens
from timeline._render.preview import preview
from timeline._render.recall import recall_async, recall_sync, with_recall
from timeline._render.sanitize import Pending, plan_compaction
from timeline._render.settings import Adjusted, Settings
from timeline._render.summary import run_async, run_sync
from timeline._render.traced import compacted, render_attributes
from timeline._state import Ledger

__all__ = ["acompact", "arender", "compact", "estimate", "focused", "preview", "render"]


def render(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    tail: Sequence[Block],
    tools: tuple[ToolSpec, ...] = (),
) -> RenderedContext:
    tracer = tracing.tracer()
    if tracer is None:
        return _render(ledger, settings, system, force, tail, tools, traced=False)
    with tracer.start_as_current_span("timeline.render") as span:
        view = _render(ledger, settings, system, force, tail, tools, traced=True)
        span.set_attributes(tracing.named(render_attributes(settings, view)))
        return view


def _render(
    ledger: Ledger,
    settings: Settings,
    system: str,
    force: bool,
    tail: Sequence[Block],
    tools: tuple[ToolSpec, ...],
    *,
    traced: bool,
) -> RenderedContext:
    prep = prepare(ledger, system, tail, tools)
    target = forced_target(ledger, settings, prep) if force else None
    start = time.time_ns() if traced else 0
    pending = plan_compaction(ledger, settings, prep, force=force)
    if isinstance(pending, Pending):
        stats: CompactionStats | None = run_sync(ledger, settings, prep, pending)
    else:
        stats = pending
    if traced:
        compacted(settings, stats, start)
    if stats is None and settings.policy.prepare_at is not None:
        prepare_next(ledger, settings, prep, asynchronous=False)
    recall = recall_sync(ledger, settings, prep, force=force)
    try:
        return finish(
            ledger, settings, with_recall(prep, recall), force=force, stats=stats, target=target
        )
    except BudgetError as exc:
        start = time.time_ns() if traced else 0
        again = _escalation(ledger, settings, prep, force, exc)
        stats = run_sync(ledger, settings, prep, again)
        if traced:
            compacted(settings, stats, start)
        return finish(ledger, settings, prep, force=False, stats=stats, target=None)


def _escalation(
    ledger: Ledger, settings: Settings, prep: Prep, force: bool, exc: BudgetError
) -> Pending:
    """An unforced render that does not fit after its compaction and truncation (the
    summary came out larger than the planner reserved beside the kept turns) compacts
    once more as a forced render would, the running turn's start included, without a
    forced render's 3/4 cap; re-raises ``exc`` when that is not possible (a forced
    render, pinned blocks over the budget, nothing left to compact)."""
    if force or isinstance(exc, PinnedOverBudgetError):
        raise exc
    pending = plan_compaction(ledger, settings, prep, force=True)
    if not isinstance(pending, Pending):
        raise exc
    return pending


async def arender(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    tail: Sequence[Block],
    tools: tuple[ToolSpec, ...] = (),
) -> RenderedContext:
    tracer = tracing.tracer()
    if tracer is None:
        return await _arender(ledger, settings, system, force, tail, tools, traced=False)
    with tracer.start_as_current_span("timeline.render") as span:
        view = await _arender(ledger, settings, system, force, tail, tools, traced=True)
        span.set_attributes(tracing.named(render_attributes(settings, view)))
        return view


async def _arender(
    ledger: Ledger,
    settings: Settings,
    system: str,
    force: bool,
    tail: Sequence[Block],
    tools: tuple[ToolSpec, ...],
    *,
    traced: bool,
) -> RenderedContext:
    prep = prepare(ledger, system, tail, tools)
    target = forced_target(ledger, settings, prep) if force else None
    start = time.time_ns() if traced else 0
    pending = plan_compaction(ledger, settings, prep, force=force, asynchronous=True)
    if isinstance(pending, Pending):
        stats: CompactionStats | None = await run_async(ledger, settings, prep, pending)
    else:
        stats = pending
    if traced:
        compacted(settings, stats, start)
    if stats is None and settings.policy.prepare_at is not None:
        prepare_next(ledger, settings, prep, asynchronous=True)
    recall = await recall_async(ledger, settings, prep, force=force)
    try:
        return finish(
            ledger, settings, with_recall(prep, recall), force=force, stats=stats, target=target
        )
    except BudgetError as exc:
        start = time.time_ns() if traced else 0
        again = _escalation(ledger, settings, prep, force, exc)
        stats = await run_async(ledger, settings, prep, again)
        if traced:
            compacted(settings, stats, start)
        return finish(ledger, settings, prep, force=False, stats=stats, target=None)


def focused(settings: Settings, focus: str | None) -> Settings:
    """``settings`` for one compaction whose summary keeps ``focus`` in view (after the
    policy's own ``focus_instructions``)."""
    if focus is None:
        return settings
    policy = settings.policy
    own = policy.focus_instructions
    both = f"{own}\n{focus}" if own else focus
    return Adjusted(settings, attrs.evolve(policy, focus_instructions=both))


def compact(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    keep_tokens: int | None,
    tools: tuple[ToolSpec, ...] = (),
    focus: str | None = None,
) -> CompactionStats | None:
    settings = focused(settings, focus)
    start = time.time_ns()
    prep = prepare(ledger, system, (), tools)
    pending = plan_compaction(
        ledger, settings, prep, force=force, manual=force, keep_tokens=keep_tokens
    )
    stats = run_sync(ledger, settings, prep, pending) if isinstance(pending, Pending) else pending
    compacted(settings, stats, start)
    return stats


async def acompact(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    keep_tokens: int | None,
    tools: tuple[ToolSpec, ...] = (),
    focus: str | None = None,
) -> CompactionStats | None:
    settings = focused(settings, focus)
    start = time.time_ns()
    prep = prepare(ledger, system, (), tools)
    pending = plan_compaction(
        ledger,
        settings,
        prep,
        force=force,
        manual=force,
        keep_tokens=keep_tokens,
        asynchronous=True,
    )
    if isinstance(pending, Pending):
        stats: CompactionStats | None = await run_async(ledger, settings, prep, pending)
    else:
        stats = pending
    compacted(settings, stats, start)
    return stats


def estimate(
    ledger: Ledger, system: str, tail: Sequence[Block], tools: tuple[ToolSpec, ...] = ()
) -> int:
    prep = prepare(ledger, system, tail, tools)
    stream = ledger.refresh_stream()
    stream.resolve()
    return raw_tokens(stream, prep) + overhead(ledger)
