"""What a compaction would do now, without doing it (``Timeline.compact(dry_run=True)``).

The compaction is planned on a copy of the ledger (:meth:`Ledger.fork`) by the same
code a real one runs (pruning, the clearing tier, the cut, a prepared summary), with no
hook, no log line and no summarizer call; the copy is then dropped. So the preview is
exactly what :meth:`Timeline.compact` would decide, and the timeline is unchanged.
"""

from __future__ import annotations

import attrs

from timeline._compaction import NO_BUDGET, CompactionPreview, CompactionStats
from timeline._model import ToolSpec
from timeline._model import log as _log
from timeline._render.prepare import Prep, overhead, prepare, raw_tokens
from timeline._render.sanitize import Pending, plan_compaction
from timeline._render.settings import Adjusted, Settings
from timeline._render.summary import replaced_tokens
from timeline._state import Ledger

__all__ = ["preview"]


def _now(ledger: Ledger, prep: Prep) -> int:
    stream = ledger.refresh_stream()
    stream.resolve()
    return raw_tokens(stream, prep) + overhead(ledger)


@attrs.frozen
class _Frame:
    """The budget and the trigger (in tokens) the preview is measured against."""

    budget: int | None
    trigger: int | None


def _summary(
    ledger: Ledger, settings: Settings, prep: Prep, pending: Pending, frame: _Frame
) -> CompactionPreview:
    """The preview of a summary at ``pending``'s cut (on the copy, after its pruning and
    clearing)."""
    plan, stats = pending.plan, pending.stats
    stream = ledger.refresh_stream()
    stream.resolve()
    cut = plan.cut
    carried = ledger.carried
    released = set(plan.released)  # follow-ups the summary stops carrying
    kept = [
        pos
        for pos, index in enumerate(stream.source_index)
        if index >= cut
        or (stream.blocks[pos].id in carried and stream.blocks[pos].id not in released)
    ]
    kept_tokens = sum(stream.costs[pos] for pos in kept)
    budget = frame.budget
    reserve = settings.policy.summary_reserve(budget) if budget is not None else 0
    fixed = prep.fixed_tokens + sum(prep.tail_costs) + overhead(ledger)
    cut_block = ledger.blocks[cut]
    return CompactionPreview(
        tier=stats.tier,
        reason=stats.reason,
        tokens_before=stats.tokens_before,
        tokens_after=fixed + kept_tokens + reserve,
        cut_path=cut_block.path,
        cut_block_id=cut_block.id,
        summarized_blocks=len(plan.compacted),
        summarized_tokens=replaced_tokens(ledger, cut, plan.released),
        kept_blocks=len(kept),
        kept_tokens=kept_tokens,
        summary_tokens=reserve,
        cleared_blocks=stats.cleared_blocks,
        cleared_tokens=stats.cleared_tokens,
        pruned_blocks=stats.pruned_blocks,
        split_turn_id=plan.split_turn_id,
        prepared=stats.prepared,
        note=f"a summary of {len(plan.compacted):,} blocks before {cut_block.path}",
        budget=frame.budget,
        trigger=frame.trigger,
    )


def _cleared(stats: CompactionStats, frame: _Frame) -> CompactionPreview:
    """The preview of a compaction that clearing (or cache-TTL pruning) would finish."""
    return CompactionPreview(
        tier=stats.tier,
        reason=stats.reason,
        tokens_before=stats.tokens_before,
        tokens_after=stats.tokens_after or stats.tokens_before,
        cleared_blocks=stats.cleared_blocks,
        cleared_tokens=stats.cleared_tokens,
        pruned_blocks=stats.pruned_blocks,
        note=stats.skipped or "old tool output cleared, no summary needed",
        budget=frame.budget,
        trigger=frame.trigger,
    )


def _nothing(settings: Settings, tokens: int, frame: _Frame) -> CompactionPreview:
    policy = settings.policy
    trigger = frame.trigger
    if policy.budget is None:
        note = NO_BUDGET
    elif not policy.enabled:
        note = "compaction is disabled"
    elif trigger is not None and tokens <= trigger:
        note = f"under the trigger ({tokens:,} of {trigger:,} tokens): nothing to compact yet"
    else:
        note = "nothing to cut: no valid cut point before the part kept verbatim"
    return CompactionPreview(
        tier=None,
        reason=None,
        tokens_before=tokens,
        tokens_after=tokens,
        budget=frame.budget,
        trigger=frame.trigger,
        note=note,
    )


def preview(
    ledger: Ledger,
    settings: Settings,
    system: str,
    *,
    force: bool,
    keep_tokens: int | None,
    tools: tuple[ToolSpec, ...] = (),
) -> CompactionPreview:
    """What ``compact(system, tools=tools, force=force, keep_recent_tokens=keep_tokens)``
    would do."""
    scratch = ledger.fork()
    quiet = Adjusted(settings, settings.policy, quiet=True)
    budget = settings.policy.budget if settings.policy.enabled else None
    trigger = None if budget is None else int(settings.policy.trigger_ratio * budget)
    frame = _Frame(budget, trigger)
    with _log.silenced():
        prep = prepare(scratch, system, (), tools)
        before = _now(scratch, prep)
        found = plan_compaction(
            scratch, quiet, prep, force=force, manual=force, keep_tokens=keep_tokens
        )
        if isinstance(found, Pending):
            return _summary(scratch, quiet, prep, found, frame)
    if isinstance(found, CompactionStats):
        return _cleared(found, frame)
    return _nothing(settings, before, frame)
