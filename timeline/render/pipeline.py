"""The render pipeline behind ``Timeline.render`` / ``arender`` / ``compact``.

1. sanitize: compact when over the trigger (or forced), in three steps so the same code
   serves sync and async summarizers: plan -> summarize -> apply;
2. the visible stream (kept incrementally, see ``_stream``);
3. truncation of blocks no cut could shrink (render-only; the timeline keeps them whole);
4. cache checkpoints on the stable stream; the volatile tail last.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import attrs
import msgspec

from timeline.cache import plan_checkpoints
from timeline.compaction import (
    CompactionReason,
    CompactionStats,
    CutPlan,
    plan_cut,
    requests_for,
    summarize_async,
    summarize_sync,
)
from timeline.compaction.digest import CompactionDigest, digest_meta
from timeline.compaction.policy import NO_BUDGET, NoBudgetWarning
from timeline.compaction.pruning import prune_expired, recent_turns
from timeline.compaction.summarizers.base import SummaryRequest, SummaryResult
from timeline.compaction.summary_state import STATE_KEY, summary_content
from timeline.compaction.truncation import truncate_to_fit
from timeline.formats._plan import CONVERSATION_START_TEXT, MISSING_RESULT_TEXT
from timeline.model import log as _log
from timeline.model.block import CONV_RANGE_SUMMARY, REACT_PLAN_HISTORY, Block
from timeline.model.block_types import block_type
from timeline.model.errors import BudgetError, InvalidBlockError, PinnedOverBudgetError, PolicyError
from timeline.model.names import provider_call_id
from timeline.model.validate import check_tail_block
from timeline.render.context import RenderedContext
from timeline.state.stream import track_call
from timeline.tokens import BLOCK_OVERHEAD_TOKENS, BlockTokenMemo

if TYPE_CHECKING:
    from timeline.core.timeline import Timeline

__all__ = ["arender", "compact", "estimate", "render"]


@attrs.frozen
class _Prep:
    system: str
    system_tokens: int
    tail: list[Block]
    tail_costs: list[int]


@attrs.frozen
class _Pending:
    plan: CutPlan
    previous: Block | None
    digest: CompactionDigest
    requests: tuple[SummaryRequest, ...]
    stats: CompactionStats
    main_text: SummaryResult | None = None
    """The history summary when no history request is made (``requests`` is then only
    the turn-prefix request)."""
    reminder: str = ""


def _text_cost(memo: BlockTokenMemo, block: Block) -> int:
    """Cost of a rendered copy that is not the stored block (tail, truncated)."""
    return memo.rendered(block)


def _missing_results(tl: Timeline, prep: _Prep) -> int:
    """Tokens of the synthetic "no result recorded" results the payloads add for visible
    calls without a visible result (usually none: a render follows the result)."""
    open_calls = tl._stream.open_calls
    if prep.tail:
        open_calls = dict(open_calls)
        for b in prep.tail:
            track_call(open_calls, b, block_type(b.type).render)
    memo = tl._memo
    return sum(
        memo.text(f"{MISSING_RESULT_TEXT} {provider_call_id(cid)}") + BLOCK_OVERHEAD_TOKENS
        for cid in open_calls
    )


def system_cost(memo: BlockTokenMemo, system: str) -> int:
    """The system prompt as the text layout shows it (``[SYSTEM]`` label, framing), plus
    the prompt's fixed framing: the one message of the document layout, or the
    ``[conversation start]`` message a payload opening on the assistant side gets.
    Remembered for the last prompt seen (the same string at every render)."""
    last = memo.last_system
    if last is not None and (last[0] is system or last[0] == system):
        return last[1]
    frame = memo.text(CONVERSATION_START_TEXT) + 2 * BLOCK_OVERHEAD_TOKENS
    cost = frame
    if system.strip():
        cost += memo.text(f"[SYSTEM]\n{system}") + BLOCK_OVERHEAD_TOKENS
    memo.last_system = (system, cost)
    return cost


def _sync_stream(tl: Timeline) -> None:
    version = tl._state.structure_version
    if tl._stream.version != version:
        tl._stream.rebuild(tl._blocks, tl._summary_index, tl._carried)
        tl._stream.version = version
    else:
        tl._stream.extend(tl._blocks)


def _prepare(tl: Timeline, system: str, tail: Sequence[Block]) -> _Prep:
    if not isinstance(system, str):
        raise InvalidBlockError(f"system must be a str, got {type(system).__name__}")
    memo = tl._memo
    if not tl.incremental:  # the reference engine: nothing remembered between calls
        memo.reset()
        tl._stream.version = -1
    blocks: list[Block] = []
    for i, raw in enumerate(tail):
        b = check_tail_block(raw)
        spec = block_type(b.type)
        turn = b.turn_id or tl.current_turn_id
        blocks.append(
            msgspec.structs.replace(
                b,
                id=b.id or f"tail-{i}",
                turn_id=turn,
                author=b.author or spec.default_author or "system",
                path=b.path or spec.default_path(turn, None, None),
            )
        )
    _sync_stream(tl)
    prep = _Prep(system, system_cost(memo, system), blocks, [_text_cost(memo, b) for b in blocks])
    missing = _missing_results(tl, prep)
    return attrs.evolve(prep, system_tokens=prep.system_tokens + missing) if missing else prep


def _overhead(tl: Timeline) -> int:
    """Calibration from the last usage report: exact while the stream only grew since,
    and (only when positive, to stay conservative) after it changed shape."""
    usage = tl._state.usage
    if usage is None:
        return 0
    delta = usage.prompt_tokens - usage.raw_estimate
    return delta if usage.structure_version == tl._state.structure_version else max(0, delta)


def _raw(tl: Timeline, prep: _Prep) -> int:
    return prep.system_tokens + tl._stream.tokens + sum(prep.tail_costs)


def estimate(tl: Timeline, system: str, tail: Sequence[Block]) -> int:
    prep = _prepare(tl, system, tail)
    tl._stream.resolve()
    return _raw(tl, prep) + _overhead(tl)


def _plan(
    tl: Timeline,
    prep: _Prep,
    *,
    force: bool,
    reason: CompactionReason | None = None,
    keep_tokens: int | None = None,
) -> _Pending | CompactionStats | None:
    """What to compact (a pending compaction), or the stats of a TTL pruning that was
    enough on its own, or None."""
    policy = tl.policy
    budget = policy.budget
    if reason is None and not policy.active:
        if budget is None and policy.enabled and not tl._warned_no_budget:
            tl._warned_no_budget = True
            warnings.warn(
                f"{NO_BUDGET} for conversation {tl.conversation_id!r}: set max_tokens, "
                "context_window or a known model name",
                NoBudgetWarning,
                stacklevel=4,
            )
        return None
    if budget is None:
        if keep_tokens is None:
            raise PolicyError(
                "compaction needs a budget: set max_tokens or context_window, or pass "
                "keep_recent_tokens"
            )
        budget = prep.system_tokens + 2 * keep_tokens
    if prep.system_tokens > budget:
        raise BudgetError(
            f"the system prompt alone needs {prep.system_tokens} tokens but the budget is "
            f"{budget}; shorten it or raise the budget",
            budget=budget,
            required=prep.system_tokens,
            conversation_id=tl.conversation_id,
        )
    stream = tl._stream
    overhead = _overhead(tl)
    est = _raw(tl, prep) + overhead  # an upper bound while blocks are pending
    over_blocks = policy.max_blocks is not None and len(stream.blocks) > policy.max_blocks
    trigger = policy.trigger_ratio * budget
    if stream.pending and (reason or force or over_blocks):
        stream.resolve()  # planning a cut needs exact costs
    elif stream.pending and est > trigger:
        # count exactly, each block once ever; all pending at once, so the renders after
        # this one stay free until new bounds reach the trigger again
        stream.resolve()
    est = _raw(tl, prep) + overhead
    if reason is None:
        if force:
            reason = "forced"
        elif est > trigger:
            reason = "tokens"
        elif over_blocks:
            reason = "blocks"
        else:
            return None
        seq = tl._state.block_seq
        if not force and seq in (tl._state.compacted_at_seq, tl._skipped_at_seq):
            return None  # nothing appended since the last compaction: never thrash
    stream.resolve()
    pruned = _prune_ttl(tl) if policy.cache_ttl_seconds is not None else 0
    if pruned:
        _sync_stream(tl)
        stream.resolve()
        after = _raw(tl, prep) + overhead
        over_blocks = policy.max_blocks is not None and len(stream.blocks) > policy.max_blocks
        if reason in ("tokens", "blocks") and after <= trigger and not over_blocks:
            return CompactionStats(
                reason=reason,
                tokens_before=est,
                tokens_after=after,
                compacted_blocks=0,
                summary_block_count=tl._summary_count,
                split_turn=False,
                split_turn_id=None,
                covered_turn_ids=(),
                original_block_count=len(stream.blocks) + len(prep.tail),
                compacted_block_count=len(stream.blocks) + len(prep.tail),
                summarizer=_summarizer_name(tl),
                pruned_blocks=pruned,
                skipped="cache-TTL pruning brought the prompt under the trigger; no summary",
            )
    blocks = tl._blocks
    start = tl._summary_index + 1
    costs = [0] * len(blocks)
    fixed = prep.system_tokens + sum(prep.tail_costs) + max(0, overhead)
    for pos, index in enumerate(stream.source_index):
        if index >= start:
            costs[index] = stream.costs[pos]
        elif blocks[index].type != CONV_RANGE_SUMMARY:
            fixed += stream.costs[pos]  # pinned blocks already before the summary
    reserve = min(policy.summary_budget(), max(64, budget // 5))
    plan = plan_cut(
        blocks,
        start,
        costs,
        tl._carried,
        policy,
        budget=budget,
        system_tokens=prep.system_tokens,
        fixed_tokens=fixed,
        summary_reserve=reserve,
        force=force,
        keep_tokens=keep_tokens,
        current_turn=tl.current_turn_id,
        pinned_only=tl._pinned.keys(),
    )
    if plan is None:
        _log.compaction_skipped(tl.conversation_id, reason, est)
        return None
    previous = blocks[tl._summary_index] if tl._summary_index >= 0 else None
    asked = requests_for(plan, previous, tl.policy, blocks[plan.cut])
    digest, history, prefix = asked.digest, asked.history, asked.prefix
    mid_turn = None
    if plan.mid_turn:
        mid_turn = 1
        if previous is not None and previous.meta.get("split_turn_id") == plan.split_turn_id:
            mid_turn += int(previous.meta.get("mid_turn") or 0)
    covered = list(previous.meta.get("covered_turn_ids", ())) if previous is not None else []
    covered += [b.turn_id for b in plan.compacted]
    stats = CompactionStats(
        reason=reason,
        tokens_before=est,
        tokens_after=None,
        compacted_blocks=len(plan.compacted),
        summary_block_count=tl._summary_count,
        split_turn=plan.split_turn_id is not None,
        split_turn_id=plan.split_turn_id,
        covered_turn_ids=tuple(dict.fromkeys(covered)),
        original_block_count=len(stream.blocks) + len(prep.tail),
        compacted_block_count=None,
        summarizer=_summarizer_name(tl),
        mid_turn=mid_turn,
        pruned_blocks=pruned,
    )
    _log.compaction_started(tl.conversation_id, stats)
    if tl.on_before_compaction is not None:
        tl.on_before_compaction(stats)
    requests = tuple(r for r in (history, prefix) if r is not None)
    main_text = asked.previous if history is None else None
    return _Pending(plan, previous, digest, requests, stats, main_text, asked.reminder)


def _prune_ttl(tl: Timeline) -> int:
    """Hide the tool results past the cache TTL (see :mod:`timeline.compaction.pruning`)."""
    policy = tl.policy
    if policy.cache_ttl_seconds is None:
        return 0
    blocks = tl._blocks
    start = tl._summary_index + 1
    protected = recent_turns(blocks, start, policy.keep_recent_turns, tl.current_turn_id)
    found = prune_expired(
        blocks,
        start,
        now=tl.clock(),
        ttl_seconds=policy.cache_ttl_seconds,
        protected_turns=protected,
        carried=tl._carried,
    )
    for index, hidden in found:
        blocks[index] = hidden
        tl._by_id[hidden.id] = hidden
    if found:
        tl._bump_structure()
    return len(found)


def _summarizer_name(tl: Timeline) -> str:
    if tl.summarizer is None:
        return "inventory"
    return str(getattr(tl.summarizer, "name", type(tl.summarizer).__name__))


def _apply(
    tl: Timeline, prep: _Prep, pending: _Pending, results: Sequence[SummaryResult]
) -> CompactionStats:
    plan = pending.plan
    outputs = list(results)
    if pending.main_text is not None:
        outputs.insert(0, pending.main_text)
    main = outputs[0]
    prefix = outputs[1] if len(outputs) > 1 else None
    error = main.error or (prefix.error if prefix is not None else None)
    seq = tl._state.block_seq + 1
    sid = tl.id_factory("block", seq)
    while sid in tl._by_id:
        seq += 1
        sid = tl.id_factory("block", seq)
    cut_block = tl._blocks[plan.cut]
    ts = tl.clock().isoformat(timespec="milliseconds").replace("+00:00", "Z")
    summary = _summary_block(tl, pending, main, prefix, error, sid, ts)
    replaced = _replaced_tokens(tl, plan.cut)
    cost = tl._memo.uncached(summary)
    if cost >= replaced:
        # a summary at least as big as what it replaces would grow the prompt: skip it,
        # changing nothing, and do not plan it again until something is appended
        tl._skipped_at_seq = tl._state.block_seq
        stats = attrs.evolve(
            pending.stats,
            tokens_after=pending.stats.tokens_before,
            compacted_block_count=pending.stats.original_block_count,
            summarizer_error=error,
            skipped=(
                f"the summary ({cost} tokens) would not be smaller than the {replaced} "
                "tokens it replaces"
            ),
        )
        _log.compaction_ended(tl.conversation_id, stats)
        if tl.on_after_compaction is not None:
            tl.on_after_compaction(stats)
        return stats
    tl._blocks.insert(plan.cut, summary)
    tl._memo.remember(summary, cost)
    tl._by_id[sid] = summary
    tl._new_ids.append(sid)
    history = _plan_history(tl, pending.digest, cut_block, seq, ts)
    if history is not None:
        seq = history[0]
        tl._blocks.insert(plan.cut + 1, history[1])
        tl._by_id[history[1].id] = history[1]
        tl._new_ids.append(history[1].id)
    tl._summary_index = plan.cut
    tl._summary_count += 1
    version = tl._state.structure_version + 1
    tl._state = msgspec.structs.replace(
        tl._state, block_seq=seq, compacted_at_seq=seq, structure_version=version
    )
    stream = tl._stream
    spliced = tl.incremental and history is None and stream.version == version - 1
    if spliced and stream.splice_summary(tl._blocks, plan.cut):
        stream.version = version
    else:
        _sync_stream(tl)
    stats = attrs.evolve(
        pending.stats,
        tokens_after=_raw(tl, prep) + _overhead(tl),
        compacted_block_count=len(tl._stream.blocks) + len(prep.tail),
        summary_block_count=pending.stats.summary_block_count + 1,
        summarizer_error=error,
        summary_path=summary.path,
    )
    _log.compaction_ended(tl.conversation_id, stats)
    if tl.on_after_compaction is not None:
        tl.on_after_compaction(stats)
    return stats


def _replaced_tokens(tl: Timeline, cut: int) -> int:
    """Visible tokens a summary inserted at ``cut`` replaces: the previous summary and
    every unpinned visible block before the cut (pinned ones stay visible)."""
    stream = tl._stream
    stream.resolve()
    pinned = tl._carried  # pinned blocks, the carried plan and follow-ups stay visible
    return sum(
        stream.costs[pos]
        for pos, index in enumerate(stream.source_index)
        if index < cut and stream.blocks[pos].id not in pinned
    )


def _summary_block(
    tl: Timeline,
    pending: _Pending,
    main: SummaryResult,
    prefix: SummaryResult | None,
    error: str | None,
    sid: str,
    ts: str,
) -> Block:
    plan = pending.plan
    cut_block = tl._blocks[plan.cut]
    mid_turn = pending.stats.mid_turn
    text, state = summary_content(pending.reminder, main, prefix, pending.digest, mid_turn)
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
            STATE_KEY: state,
        },
    )


FORCED_RENDER_RATIO: Final = 0.75
"""Each forced render, with nothing appended since the last render, is at most this
share of it (providers count 10-30% more tokens than cl100k, so a smaller step could
overflow again)."""


def _render_key(tl: Timeline, prep: _Prep) -> tuple[int, ...]:
    state = tl._state
    return (state.block_seq, state.structure_version, prep.system_tokens, sum(prep.tail_costs))


def _forced_target(tl: Timeline, prep: _Prep) -> int | None:
    """The most a forced render may keep, in the library's own count (before the usage
    calibration, a constant it cannot shrink): 3/4 of the last render when nothing was
    appended since, else 3/4 of what an unforced render would send now."""
    budget = tl.policy.budget if tl.policy.enabled else None
    if budget is None:
        return None
    last = tl._last_render
    if last is not None and last[0] == _render_key(tl, prep):
        reference = last[1]()
    else:
        tl._stream.resolve()
        reference = _raw(tl, prep)
    return int(min(budget, reference) * FORCED_RENDER_RATIO)


PLAN_LINE_CHARS = 300


def _plan_history(
    tl: Timeline, digest: CompactionDigest, cut_block: Block, seq: int, ts: str
) -> tuple[int, Block] | None:
    """The ``react.plan.history`` block folding every compacted plan but the newest (which
    stays carried after the summary), with its block sequence number; None without any."""
    earlier = [p for p in digest.plans if p.block_id != tl._plan_id]
    if not earlier:
        return None
    lines = ["Earlier plans, oldest first (read a path for the full plan):"]
    for p in earlier:
        flat = " / ".join(line.strip() for line in p.text.splitlines() if line.strip())
        if len(flat) > PLAN_LINE_CHARS:
            flat = f"{flat[: PLAN_LINE_CHARS - 3]}..."
        lines.append(f"- {p.path} (turn {p.turn_id}): {flat}")
    seq += 1
    bid = tl.id_factory("block", seq)
    while bid in tl._by_id:
        seq += 1
        bid = tl.id_factory("block", seq)
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


def _finish(
    tl: Timeline,
    prep: _Prep,
    *,
    force: bool,
    stats: CompactionStats | None,
    target: int | None = None,
) -> RenderedContext:
    stream = tl._stream
    memo = tl._memo
    overhead = _overhead(tl)
    tail_tokens = sum(prep.tail_costs)
    total = prep.system_tokens + stream.tokens + tail_tokens + overhead
    budget = tl.policy.budget if tl.policy.enabled else None
    truncated: list[str] = []
    if budget is not None and stream.pending and (force or total > budget):
        limit = budget - prep.system_tokens - tail_tokens - overhead
        stream.resolve(None if force else lambda: stream.tokens <= limit)
        total = prep.system_tokens + stream.tokens + tail_tokens + overhead
    # the stream's own lists when there is no tail (only read from here on)
    blocks = stream.blocks + prep.tail if prep.tail else stream.blocks
    costs = stream.costs + prep.tail_costs if prep.tail else stream.costs
    if budget is not None:
        pinned = tl._carried
        pinned_total = stream.pinned_tokens
        if prep.system_tokens + pinned_total > budget:
            raise PinnedOverBudgetError(
                f"system prompt ({prep.system_tokens}) and pinned blocks ({pinned_total}) need "
                f"{prep.system_tokens + pinned_total} tokens but the budget is {budget}",
                budget=budget,
                required=prep.system_tokens + pinned_total,
                conversation_id=tl.conversation_id,
            )
        limit = budget if target is None else min(budget, target + overhead)
        if total > limit:
            blocks = list(blocks)
            costs = list(costs)
            removed, truncated = truncate_to_fit(
                blocks, costs, total - limit, lambda b: _text_cost(memo, b), tuple(pinned)
            )
            total -= removed
            if total > budget:
                raise BudgetError(
                    f"the prompt needs {total} tokens after compaction and truncation but the "
                    f"budget is {budget}",
                    budget=budget,
                    required=total,
                    conversation_id=tl.conversation_id,
                )
            if total > limit:
                raise BudgetError(
                    f"a forced render must keep at most {limit} tokens (3/4 of the last "
                    f"render, plus the usage calibration) but cannot go below {total}: only "
                    "the system prompt, pinned blocks, tool calls and blocks already "
                    "truncated to the minimum are left",
                    budget=budget,
                    required=total,
                    conversation_id=tl.conversation_id,
                )
    stable = stream.blocks if blocks is stream.blocks else blocks[: len(stream.blocks)]
    points, cache_state = plan_checkpoints(
        stable,
        has_system=bool(prep.system),
        version=tl._state.structure_version,
        state=tl._state.cache,
        anchor=stream.anchor,
        stream_positions=stream.positions,
    )
    tl._state = msgspec.structs.replace(
        tl._state, cache=cache_state, system_tokens=prep.system_tokens
    )
    pending = [(stream.costs[pos], stream.blocks[pos]) for pos in stream.pending]
    known = total - sum(bound for bound, _ in pending)

    def count_tokens() -> int:
        return known + sum(memo.block(b) for _, b in pending)

    tl._last_raw_estimate = lambda: count_tokens() - overhead
    tl._last_render = (_render_key(tl, prep), tl._last_raw_estimate)
    shown = tuple(blocks)
    shown_costs = tuple(costs)  # the stream's lists change with the next append
    pending_at = {pos for pos in stream.pending if shown[pos] is stream.blocks[pos]}

    def block_tokens() -> tuple[int, ...]:
        return tuple(
            memo.block(b) if pos in pending_at else shown_costs[pos] for pos, b in enumerate(shown)
        )

    return RenderedContext(
        system=prep.system,
        blocks=shown,
        cache_points=points,
        count_tokens=count_tokens,
        budget=budget,
        stable_count=len(stable),
        compaction=stats,
        truncated_paths=tuple(truncated),
        system_cached=bool(prep.system),
        system_tokens=prep.system_tokens,
        count_block_tokens=block_tokens,
        payloads=tl.payload_cache if tl.incremental else None,
    )


def _conclude(
    tl: Timeline, prep: _Prep, pending: _Pending, results: Sequence[SummaryResult]
) -> CompactionStats:
    """Apply the summaries, or (``on_summary_failure="skip"``) compact nothing when one
    failed: the stats say so and the timeline is unchanged."""
    error = next((r.error for r in results if r.error is not None), None)
    if error is None or tl.policy.on_summary_failure == "fallback":
        return _apply(tl, prep, pending, results)
    # no retry before something new is appended: a failing model is not called per render
    tl._state = msgspec.structs.replace(tl._state, compacted_at_seq=tl._state.block_seq)
    stats = attrs.evolve(
        pending.stats,
        tokens_after=pending.stats.tokens_before,
        compacted_blocks=0,
        compacted_block_count=pending.stats.original_block_count,
        summarizer_error=error,
        skipped=f"summary failed ({error}); nothing compacted (on_summary_failure='skip')",
    )
    if tl.on_after_compaction is not None:
        tl.on_after_compaction(stats)
    return stats


def _run_sync(tl: Timeline, prep: _Prep, pending: _Pending) -> CompactionStats:
    timeout = tl.policy.summary_timeout_seconds
    fallback = tl.policy.on_summary_failure == "fallback"
    results = [
        summarize_sync(tl.summarizer, r, timeout, fallback=fallback) for r in pending.requests
    ]
    return _conclude(tl, prep, pending, results)


def render(tl: Timeline, system: str, *, force: bool, tail: Sequence[Block]) -> RenderedContext:
    prep = _prepare(tl, system, tail)
    target = _forced_target(tl, prep) if force else None
    pending = _plan(tl, prep, force=force)
    stats = pending if not isinstance(pending, _Pending) else _run_sync(tl, prep, pending)
    return _finish(tl, prep, force=force, stats=stats, target=target)


async def _run_async(tl: Timeline, prep: _Prep, pending: _Pending) -> CompactionStats:
    timeout = tl.policy.summary_timeout_seconds
    fallback = tl.policy.on_summary_failure == "fallback"
    results = [
        await summarize_async(tl.summarizer, r, timeout, fallback=fallback)
        for r in pending.requests
    ]
    return _conclude(tl, prep, pending, results)


async def arender(
    tl: Timeline, system: str, *, force: bool, tail: Sequence[Block]
) -> RenderedContext:
    prep = _prepare(tl, system, tail)
    target = _forced_target(tl, prep) if force else None
    pending = _plan(tl, prep, force=force)
    stats = pending if not isinstance(pending, _Pending) else await _run_async(tl, prep, pending)
    return _finish(tl, prep, force=force, stats=stats, target=target)


def compact(
    tl: Timeline, system: str, *, force: bool, keep_recent_tokens: int | None
) -> CompactionStats | None:
    prep = _prepare(tl, system, ())
    pending = _plan(
        tl, prep, force=force, reason="manual" if force else None, keep_tokens=keep_recent_tokens
    )
    return pending if not isinstance(pending, _Pending) else _run_sync(tl, prep, pending)


async def acompact(
    tl: Timeline, system: str, *, force: bool, keep_recent_tokens: int | None
) -> CompactionStats | None:
    prep = _prepare(tl, system, ())
    pending = _plan(
        tl, prep, force=force, reason="manual" if force else None, keep_tokens=keep_recent_tokens
    )
    return pending if not isinstance(pending, _Pending) else await _run_async(tl, prep, pending)
