"""Applying a compaction: the summaries are made (sync or async), the summary block is
built and handed to the ledger, the hooks and the log hear how it went."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import msgspec

from timeline._compaction import (
    STATE_KEY,
    CompactionDigest,
    CompactionStats,
    SummaryResult,
    digest_meta,
    summarize_async,
    summarize_sync,
    summary_content,
)
from timeline._model import CONV_RANGE_SUMMARY, REACT_PLAN_HISTORY, Block
from timeline._model import log as _log
from timeline._render.prepare import Prep, overhead, raw_tokens
from timeline._render.sanitize import Pending
from timeline._render.settings import Settings, timestamp
from timeline._state import RELEASED_KEY, Ledger

__all__ = ["PLAN_LINE_CHARS", "replaced_tokens", "run_async", "run_sync"]

PLAN_LINE_CHARS = 300

Results = Sequence[SummaryResult]


def _new_id(ledger: Ledger, settings: Settings, seq: int, taken: str = "") -> tuple[int, str]:
    """The next block sequence number and id at or after ``seq`` not taken yet (by a
    block in memory or by ``taken``, an id about to be inserted)."""
    bid = settings.id_factory("block", seq)
    while bid == taken or ledger.get(bid) is not None:
        seq += 1
        bid = settings.id_factory("block", seq)
    return seq, bid


def replaced_tokens(ledger: Ledger, cut: int, released: Sequence[str] = ()) -> int:
    """Visible tokens a summary inserted at ``cut`` replaces: the previous summary and
    every visible block before the cut that is not carried past it (``released``:
    follow-ups it stops carrying)."""
    stream = ledger.refresh_stream()
    stream.resolve()
    carried = ledger.carried  # pinned blocks, the carried plan and follow-ups stay visible
    gone = set(released)
    return sum(
        stream.costs[pos]
        for pos, index in enumerate(stream.source_index)
        if index < cut and (stream.blocks[pos].id not in carried or stream.blocks[pos].id in gone)
    )


def _summary_block(
    pending: Pending,
    cut_block: Block,
    content: tuple[str, dict[str, object]],
    error: str | None,
    sid: str,
    ts: str,
    turn: str,
) -> Block:
    """The summary block: its text rendered from the summary state, which its ``meta``
    carries as data (the next compaction reads the state, never the text). ``turn`` is
    the turn running when the compaction ran (the summary itself sits where it cut)."""
    plan = pending.plan
    text, state = content
    return Block(
        type=CONV_RANGE_SUMMARY,
        text=text,
        id=sid,
        author="system",
        turn_id=cut_block.turn_id,
        ts=ts,
        path=f"su:{cut_block.turn_id}.conv.range.summary",
        meta={
            "mid_turn": pending.stats.mid_turn,
            "covered_turn_ids": list(pending.stats.covered_turn_ids),
            "split_turn_id": plan.split_turn_id,
            "compaction_digest": digest_meta(pending.digest),
            "summarizer": pending.stats.summarizer if error is None else "inventory",
            "summarizer_error": error,
            "compacted_block_count": len(plan.compacted),
            "first_block_id": plan.compacted[0].id,
            "last_block_id": plan.compacted[-1].id,
            "ran_in_turn": turn,
            STATE_KEY: state,
            **_tiers_meta(pending.stats),
            **({RELEASED_KEY: list(plan.released)} if plan.released else {}),
        },
    )


def _tiers_meta(stats: CompactionStats) -> dict[str, Any]:
    """What the tiers before the summary did (``{"tiers": [...]}``, shown by the HTML
    view), only when one of them ran: ordinary summaries stay as they were."""
    tiers: list[dict[str, Any]] = []
    if stats.pruned_blocks:
        tiers.append({"tier": "prune (cache TTL)", "blocks": stats.pruned_blocks})
    if stats.cleared_blocks:
        tiers.append(
            {"tier": "clear", "blocks": stats.cleared_blocks, "tokens freed": stats.cleared_tokens}
        )
    if not tiers:
        return {}
    return {"tiers": [*tiers, {"tier": "summarize", "blocks": stats.compacted_blocks}]}


def _plan_history(
    ledger: Ledger,
    settings: Settings,
    digest: CompactionDigest,
    cut_block: Block,
    seq: int,
    ts: str,
    summary_id: str,
) -> tuple[int, Block] | None:
    """The ``react.plan.history`` block folding every compacted plan but the newest (which
    stays carried after the summary), with its block sequence number; None without any."""
    earlier = [p for p in digest.plans if p.block_id != ledger.plan_id]
    if not earlier:
        return None
    lines = ["Earlier plans, oldest first (read a path for the full plan):"]
    for p in earlier:
        flat = " / ".join(line.strip() for line in p.text.splitlines() if line.strip())
        if len(flat) > PLAN_LINE_CHARS:
            flat = f"{flat[: PLAN_LINE_CHARS - 3]}..."
        lines.append(f"- {p.path} (turn {p.turn_id}): {flat}")
    seq, bid = _new_id(ledger, settings, seq + 1, summary_id)
    block = Block(
        type=REACT_PLAN_HISTORY,
        text="\n".join(lines),
        id=bid,
        author="system",
        turn_id=cut_block.turn_id,
        ts=ts,
        path=f"ar:{cut_block.turn_id}.react.plan.history",
        meta={"plan_paths": [p.path for p in earlier]},
    )
    return seq, block


def _ended(settings: Settings, stats: CompactionStats) -> CompactionStats:
    _log.compaction_ended(settings.conversation_id, stats)
    if settings.on_after_compaction is not None:
        settings.on_after_compaction(stats)
    return stats


def _apply(
    ledger: Ledger, settings: Settings, prep: Prep, pending: Pending, results: Results
) -> CompactionStats:
    plan = pending.plan
    outputs = list(results)
    if pending.main_text is not None:
        outputs.insert(0, pending.main_text)
    main = outputs[0]
    prefix = outputs[1] if len(outputs) > 1 else None
    error = main.error or (prefix.error if prefix is not None else None)
    seq, sid = _new_id(ledger, settings, ledger.state.block_seq + 1)
    cut_block = ledger.blocks[plan.cut]
    ts = timestamp(settings.clock)
    content = summary_content(
        pending.reminder, main, prefix, pending.digest, pending.stats.mid_turn
    )
    turn = ledger.state.current_turn_id
    summary = _summary_block(pending, cut_block, content, error, sid, ts, turn)
    if pending.by_provider:  # the provider's compaction block it stands before
        summary = msgspec.structs.replace(
            summary, meta={**summary.meta, "provider_compaction_id": cut_block.id}
        )
    replaced = replaced_tokens(ledger, plan.cut, plan.released)
    cost = ledger.memo.uncached(summary)
    if cost >= replaced and pending.stats.reason != "blocks" and not pending.by_provider:
        # a summary at least as big as what it replaces would grow the prompt: skip it,
        # changing nothing, and do not plan it again until something is appended (unless
        # the block count triggered it: max_blocks bounds blocks, which it still reduces)
        ledger.note_skipped()
        skipped = attrs.evolve(
            pending.stats,
            tokens_after=pending.stats.tokens_before,
            visible_block_count=pending.stats.original_block_count,
            summarizer_error=error,
            skipped=(
                f"the summary ({cost} tokens) would not be smaller than the {replaced} "
                "tokens it replaces"
            ),
        )
        return _ended(settings, skipped)
    history = _plan_history(ledger, settings, pending.digest, cut_block, seq, ts, sid)
    extra = None
    if history is not None:
        seq, extra = history
    ledger.insert_summary(plan.cut, summary, cost, extra, seq)
    stream = ledger.refresh_stream()
    stream.resolve()  # exact, like the figures before it (only the new blocks may be bounds)
    stats = attrs.evolve(
        pending.stats,
        tokens_after=raw_tokens(stream, prep) + overhead(ledger),
        visible_block_count=len(stream.blocks) + len(prep.tail),
        summary_block_count=pending.stats.summary_block_count + 1,
        summarizer_error=error,
        summary_path=summary.path,
    )
    return _ended(settings, stats)


def _conclude(
    ledger: Ledger, settings: Settings, prep: Prep, pending: Pending, results: Results
) -> CompactionStats:
    """Apply the summaries, or (``on_summary_failure="skip"``) compact nothing when one
    failed: the stats say so and the timeline is unchanged."""
    error = next((r.error for r in results if r.error is not None), None)
    if error is None or settings.policy.on_summary_failure == "fallback":
        return _apply(ledger, settings, prep, pending, results)
    # no retry before something new is appended: a failing model is not called per render
    ledger.hold_compaction()
    stats = attrs.evolve(
        pending.stats,
        tokens_after=pending.stats.tokens_before,
        compacted_blocks=0,
        visible_block_count=pending.stats.original_block_count,
        summarizer_error=error,
        skipped=f"summary failed ({error}); nothing compacted (on_summary_failure='skip')",
    )
    if settings.on_after_compaction is not None:
        settings.on_after_compaction(stats)
    return stats


def run_sync(ledger: Ledger, settings: Settings, prep: Prep, pending: Pending) -> CompactionStats:
    """Make the summaries with a sync summarizer (the policy's timeout and fallback), or
    take the ones prepared ahead of the trigger (waiting for them if still running)."""
    if pending.job is not None:
        return _conclude(ledger, settings, prep, pending, pending.job.wait())
    policy = settings.policy
    fallback = policy.on_summary_failure == "fallback"
    results = [
        summarize_sync(settings.summarizer, r, policy.summary_timeout_seconds, fallback=fallback)
        for r in pending.requests
    ]
    return _conclude(ledger, settings, prep, pending, results)


async def run_async(
    ledger: Ledger, settings: Settings, prep: Prep, pending: Pending
) -> CompactionStats:
    """Make the summaries with an async (or sync) summarizer, or await the ones prepared
    ahead of the trigger."""
    if pending.job is not None:
        return _conclude(ledger, settings, prep, pending, await pending.job.result())
    policy = settings.policy
    fallback = policy.on_summary_failure == "fallback"
    results = [
        await summarize_async(
            settings.summarizer, r, policy.summary_timeout_seconds, fallback=fallback
        )
        for r in pending.requests
    ]
    return _conclude(ledger, settings, prep, pending, results)
