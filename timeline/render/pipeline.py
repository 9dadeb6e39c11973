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

from collections.abc import Sequence

from timeline.compaction import CompactionStats
from timeline.model.block import Block
from timeline.model.errors import BudgetError, PinnedOverBudgetError
from timeline.model.tools import ToolSpec
from timeline.render.budget import finish, forced_target
from timeline.render.context import RenderedContext
from timeline.render.prepare import Prep, overhead, prepare, raw_tokens
from timeline.render.recall import recall_async, recall_sync, with_recall
from timeline.render.sanitize import Pending, plan_compaction
from timeline.render.settings import Settings
from timeline.render.summary import run_async, run_sync
from timeline.state.ledger import Ledger

__all__ = ["acompact", "arender", "compact", "estimate", "render"]


def render(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    tail: Sequence[Block],
    tools: tuple[ToolSpec, ...] = (),
) -> RenderedContext:
    prep = prepare(ledger, system, tail, tools)
    target = forced_target(ledger, settings, prep) if force else None
    pending = plan_compaction(ledger, settings, prep, force=force)
    if isinstance(pending, Pending):
        stats: CompactionStats | None = run_sync(ledger, settings, prep, pending)
    else:
        stats = pending
    recall = recall_sync(ledger, settings, prep, force=force)
    try:
        return finish(
            ledger, settings, with_recall(prep, recall), force=force, stats=stats, target=target
        )
    except BudgetError as exc:
        again = _escalation(ledger, settings, prep, force, exc)
        stats = run_sync(ledger, settings, prep, again)
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
    prep = prepare(ledger, system, tail, tools)
    target = forced_target(ledger, settings, prep) if force else None
    pending = plan_compaction(ledger, settings, prep, force=force)
    if isinstance(pending, Pending):
        stats: CompactionStats | None = await run_async(ledger, settings, prep, pending)
    else:
        stats = pending
    recall = await recall_async(ledger, settings, prep, force=force)
    try:
        return finish(
            ledger, settings, with_recall(prep, recall), force=force, stats=stats, target=target
        )
    except BudgetError as exc:
        again = _escalation(ledger, settings, prep, force, exc)
        stats = await run_async(ledger, settings, prep, again)
        return finish(ledger, settings, prep, force=False, stats=stats, target=None)


def compact(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    keep_tokens: int | None,
    tools: tuple[ToolSpec, ...] = (),
) -> CompactionStats | None:
    prep = prepare(ledger, system, (), tools)
    pending = plan_compaction(
        ledger, settings, prep, force=force, manual=force, keep_tokens=keep_tokens
    )
    return run_sync(ledger, settings, prep, pending) if isinstance(pending, Pending) else pending


async def acompact(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    keep_tokens: int | None,
    tools: tuple[ToolSpec, ...] = (),
) -> CompactionStats | None:
    prep = prepare(ledger, system, (), tools)
    pending = plan_compaction(
        ledger, settings, prep, force=force, manual=force, keep_tokens=keep_tokens
    )
    if isinstance(pending, Pending):
        return await run_async(ledger, settings, prep, pending)
    return pending


def estimate(
    ledger: Ledger, system: str, tail: Sequence[Block], tools: tuple[ToolSpec, ...] = ()
) -> int:
    prep = prepare(ledger, system, tail, tools)
    stream = ledger.stream()
    stream.resolve()
    return raw_tokens(stream, prep) + overhead(ledger)
