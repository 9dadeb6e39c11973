"""Starting the next compaction's summary ahead of the trigger
(``CompactionPolicy(prepare_at=0.8)``).

A render that does not compact, with the prompt past ``prepare_at`` of the trigger,
plans the cut the compaction at the trigger is expected to make (as if the tokens left
before the trigger had been appended) and starts its summaries off the agent's path: a
worker thread for a :class:`Summarizer`, a task on the running event loop for an
:class:`AsyncSummarizer` on the async path. The compaction at the trigger applies the
result when it still holds (:func:`timeline._render.prepared.adopt`), waiting for it if
it is still running; otherwise it summarizes as usual. One summary is prepared at a
time: a new one only when the last one no longer holds (a compaction, a hide, a
restore changed what it covers).

Nothing is prepared for the default inventory summarizer (it calls no model) nor under
provider-native compaction (the provider summarizes).
"""

from __future__ import annotations

import math

import attrs

from timeline._compaction import (
    AsyncSummarizer,
    SummaryRequest,
    requests_for,
    summarize_async,
    summarize_sync,
)
from timeline._render.prepare import Prep, cut_costs, overhead, raw_tokens
from timeline._render.prepared import (
    Job,
    PreparedSummary,
    Results,
    current,
    holds,
    task_job,
    thread_job,
)
from timeline._render.sanitize import plan_ahead
from timeline._render.settings import Settings
from timeline._state import Ledger

__all__ = ["prepare_next"]


def _room(ledger: Ledger, settings: Settings, prep: Prep) -> int | None:
    """Tokens left before the trigger when the prompt is past ``prepare_at`` of it (None:
    nothing to prepare). Upper bounds are counted exactly only past the threshold."""
    policy = settings.policy
    share, budget = policy.prepare_at, policy.budget
    if share is None or budget is None or settings.summarizer is None:
        return None
    if not policy.enabled or policy.native is not None:
        return None
    trigger = policy.trigger_ratio * budget
    stream = ledger.refresh_stream()
    est = raw_tokens(stream, prep) + overhead(ledger)
    if est <= share * trigger:
        return None
    if stream.pending:
        stream.resolve()
        est = raw_tokens(stream, prep) + overhead(ledger)
        if est <= share * trigger:
            return None
    return max(0, math.ceil(trigger - est))


def _still_holds(ledger: Ledger, settings: Settings, prep: Prep) -> bool:
    """The summary prepared earlier still covers what it was made for (checked again
    only when something but appends changed the timeline since)."""
    prepared = current(ledger)
    if prepared is None:
        return False
    version = ledger.state.structure_version
    if prepared.structure_version == version:
        return True
    if holds(ledger, settings, prepared, cut_costs(ledger, prep)[0]) is None:
        return False
    ledger.prepared = attrs.evolve(prepared, structure_version=version)
    return True


def _start(settings: Settings, requests: tuple[SummaryRequest, ...], asynchronous: bool) -> Job:
    """The summarizer run on ``requests`` off the agent's path, with the policy's
    timeout and fallback (the same results a compaction would get at the trigger)."""
    summarizer = settings.summarizer
    policy = settings.policy
    timeout = policy.summary_timeout_seconds
    fallback = policy.on_summary_failure == "fallback"
    if asynchronous and isinstance(summarizer, AsyncSummarizer):

        async def summarize() -> Results:
            return tuple(
                [await summarize_async(summarizer, r, timeout, fallback=fallback) for r in requests]
            )

        return task_job(summarize())
    return thread_job(
        lambda: tuple(summarize_sync(summarizer, r, timeout, fallback=fallback) for r in requests)
    )


def prepare_next(ledger: Ledger, settings: Settings, prep: Prep, *, asynchronous: bool) -> None:
    """After a render that did not compact: start the next compaction's summary when the
    prompt is past ``prepare_at`` of the trigger and none is prepared yet."""
    room = _room(ledger, settings, prep)
    if room is None or _still_holds(ledger, settings, prep):
        return
    ledger.prepared = None
    plan = plan_ahead(ledger, settings, prep, room)
    if plan is None:
        return
    blocks = ledger.blocks
    index = ledger.summary_index
    previous = blocks[index] if index >= 0 else None
    asked = requests_for(plan, previous, settings.policy, blocks[plan.cut])
    context = tuple(ledger.refresh_stream().blocks)
    requests = tuple(
        attrs.evolve(r, system=prep.system, context=context)
        for r in (asked.history, asked.prefix)
        if r is not None
    )
    job = _start(settings, requests, asynchronous)
    region = tuple(blocks[index + 1 : plan.cut + 1])
    version = ledger.state.structure_version
    ledger.prepared = PreparedSummary(previous, region, plan, settings.policy, job, version)
