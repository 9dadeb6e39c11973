"""A summary prepared ahead of the trigger (``CompactionPolicy(prepare_at=...)``): what it
covers, the job making it off the agent's path, and whether the compaction at the
trigger may apply it.

The job is handed immutable inputs only (the summary requests: frozen blocks, the
digest, the text of the previous summary) and gives back the summarizer's results; it
never sees the ledger. The ledger keeps the prepared summary as an opaque value, and
the compaction reads it on the agent's thread (see :mod:`.background` for when one is
started).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import attrs

from timeline._compaction import CompactionPolicy, CutPlan, SummaryResult, plan_at
from timeline._model import Block
from timeline._render.prepare import Prep, cut_costs
from timeline._render.settings import Settings
from timeline._state import Ledger

__all__ = ["Job", "PreparedSummary", "adopt", "current", "holds", "task_job", "thread_job"]

Results = tuple[SummaryResult, ...]


@attrs.frozen(eq=False)
class Job:
    """The summarizer's results for a prepared summary, being made: by a worker thread
    (``future``) or an asyncio task (``task``)."""

    future: concurrent.futures.Future[Results] | None = None
    task: asyncio.Task[Results] | None = None

    def ready(self, asynchronous: bool) -> bool:
        """Its results can be had on this path: a thread's always (waiting for it if it
        still runs), a task's on the async path, or on the sync one once it is done (a
        sync render cannot wait for a task)."""
        if self.task is None:
            return True
        return not self.task.cancelled() and (asynchronous or self.task.done())

    def wait(self) -> Results:
        """The results, waiting for a worker thread that still runs."""
        if self.task is not None:
            return self.task.result()
        assert self.future is not None
        return self.future.result()

    async def result(self) -> Results:
        """The results, awaited on the async path."""
        if self.task is not None:
            return await self.task
        assert self.future is not None
        return await asyncio.wrap_future(self.future)


def thread_job(work: Callable[[], Results]) -> Job:
    """``work`` run in a daemon worker thread (a hung summarizer never holds up the
    interpreter's exit; the policy's timeout bounds how long a render waits for it)."""
    future: concurrent.futures.Future[Results] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(work())
        except BaseException as exc:  # handed to the thread that waits for the result
            future.set_exception(exc)

    threading.Thread(target=run, name="timeline-prepare", daemon=True).start()
    return Job(future=future)


def task_job(work: Coroutine[Any, Any, Results]) -> Job:
    """``work`` as a task on the running event loop."""
    return Job(task=asyncio.get_running_loop().create_task(work))


@attrs.frozen(eq=False)
class PreparedSummary:
    """The cut the next compaction was expected to make and the job summarizing it.

    ``previous`` is the summary it extends (None: the first one) and ``region`` the
    blocks from just after it through the cut block, exactly as they were: the summary
    still holds while these are the same objects (appends after them change nothing; a
    hide, a restore or a compaction replaces them)."""

    previous: Block | None
    region: tuple[Block, ...]
    plan: CutPlan
    policy: CompactionPolicy
    job: Job
    structure_version: int
    """The ledger's structure version when it was last found to hold."""


def _same_plan(a: CutPlan, b: CutPlan) -> bool:
    return (a.history, a.prefix, a.compacted, a.split_turn_id, a.mid_turn) == (
        b.history,
        b.prefix,
        b.compacted,
        b.split_turn_id,
        b.mid_turn,
    )


def current(ledger: Ledger) -> PreparedSummary | None:
    found = ledger.prepared
    return found if isinstance(found, PreparedSummary) else None


def holds(
    ledger: Ledger,
    settings: Settings,
    prepared: PreparedSummary,
    costs: Sequence[int],
    released: Sequence[str] = (),
) -> CutPlan | None:
    """The prepared cut's plan as it stands now, when it still covers exactly what it
    was made for: the same previous summary, the same blocks up to and at the cut, a cut
    still valid, the same policy and the same split (None otherwise). ``costs``: each
    block's rendered cost, as the cut planner takes them; ``released``: carried
    follow-ups the compaction due now stops carrying (those before the cut are the
    plan's ``released``)."""
    blocks = ledger.blocks
    index = ledger.summary_index
    if (blocks[index] if index >= 0 else None) is not prepared.previous:
        return None
    start = index + 1
    cut = start + len(prepared.region) - 1
    if cut >= len(blocks) or settings.policy != prepared.policy:
        return None
    if any(a is not b for a, b in zip(blocks[start : cut + 1], prepared.region, strict=True)):
        return None
    gone = set(released)
    carried = {i for i in ledger.carried if i not in gone} if gone else ledger.carried
    plan = plan_at(
        blocks,
        start,
        cut,
        costs,
        carried,
        settings.policy,
        current_turn=ledger.state.current_turn_id,
        pinned=ledger.pinned,
    )
    if plan is None or not _same_plan(plan, prepared.plan):
        return None
    if gone:  # those at or after the cut stay visible where they are
        later = {b.id for b in blocks[cut:] if b.id in gone}
        plan = attrs.evolve(plan, released=tuple(i for i in released if i not in later))
    return plan


def adopt(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    fresh: CutPlan,
    reason: str,
    limit: float,
    asynchronous: bool,
) -> tuple[CutPlan, Job | None]:
    """The plan a compaction due now (for ``reason``) makes, and the job holding its
    summaries when one was prepared for it: the prepared summary is applied instead of
    ``fresh`` (the cut it would make otherwise) when it still holds, keeps no more than
    ``fresh`` would or leaves at most ``limit`` tokens besides the summary, keeps at
    least half of what ``fresh`` would (the planner's own tolerance between cuts), and
    its results can be had on this path (a sync render cannot wait for a task). Only an
    automatic compaction applies one; it is used up either way."""
    prepared = current(ledger)
    if prepared is None:
        return fresh, None
    ledger.prepared = None
    if reason not in ("tokens", "blocks") or not prepared.job.ready(asynchronous):
        return fresh, None
    costs, fixed = cut_costs(ledger, prep)
    plan = holds(ledger, settings, prepared, costs, fresh.released)
    if plan is None or 2 * plan.kept_tokens < fresh.kept_tokens:
        return fresh, None
    if plan.kept_tokens > max(fresh.kept_tokens, limit - fixed):
        return fresh, None
    return plan, prepared.job
