"""Deciding a compaction: whether one is due, then the cheapest tier that works (cache-TTL
pruning, clearing, then a cut and its summary requests; :mod:`.summary` applies them)."""

from __future__ import annotations

import warnings

import attrs

from timeline._compaction import (
    NO_BUDGET,
    CompactionDigest,
    CompactionReason,
    CompactionStats,
    CutPlan,
    NoBudgetWarning,
    SummaryRequest,
    SummaryResult,
    plan_cut,
    prune_expired,
    recent_turns,
    requests_for,
    summarize_sync,
)
from timeline._model import Block, BudgetError, PolicyError
from timeline._model import log as _log
from timeline._render.clearing import clear_tier, cleared_stats
from timeline._render.prepare import Prep, cut_costs, overhead, raw_tokens, summary_cost
from timeline._render.prepared import Job, adopt
from timeline._render.provider_compaction import provider_compaction_plan
from timeline._render.settings import Settings
from timeline._state import Ledger

__all__ = ["Pending", "plan_ahead", "plan_compaction", "summarizer_name"]


@attrs.frozen
class Pending:
    """A compaction decided and announced (``on_before_compaction`` fired), waiting for
    its summaries."""

    plan: CutPlan
    previous: Block | None
    digest: CompactionDigest
    requests: tuple[SummaryRequest, ...]
    stats: CompactionStats
    main_text: SummaryResult | None = None
    """The history summary when no history request is made (``requests`` is then only
    the turn-prefix request)."""
    reminder: str = ""
    by_provider: bool = False
    """The provider compacted: the summary is recorded whatever its size."""
    job: Job | None = None
    """The summaries, prepared ahead of the trigger (None: the summarizer makes them)."""


def summarizer_name(settings: Settings) -> str:
    if settings.summarizer is None:
        return "inventory"
    return str(getattr(settings.summarizer, "name", type(settings.summarizer).__name__))


def _budget(settings: Settings, prep: Prep, keep_tokens: int | None) -> int:
    budget = settings.policy.budget
    if budget is None:
        if keep_tokens is None:
            raise PolicyError(
                "compaction needs a budget: set max_tokens or context_window, or pass "
                "keep_recent_tokens"
            )
        budget = prep.fixed_tokens + 2 * keep_tokens
    if prep.fixed_tokens > budget:
        raise BudgetError(
            f"the {_fixed_what(prep)} alone need {prep.fixed_tokens} tokens but the "
            f"budget is {budget}; shorten the {'tools or the ' if prep.tools else ''}"
            "system prompt or raise the budget",
            budget=budget,
            required=prep.fixed_tokens,
            parts=("system prompt", "tool definitions") if prep.tools else ("system prompt",),
            conversation_id=settings.conversation_id,
        )
    return budget


def _fixed_what(prep: Prep) -> str:
    """What the fixed part of the prompt is, in words and tokens."""
    tools = f", tool definitions ({prep.tools_tokens})" if prep.tools else ""
    framing = f"the prompt's framing ({prep.framing_tokens})"
    return f"system prompt ({prep.system_tokens}){tools} and {framing}"


def _warn_no_budget(ledger: Ledger, settings: Settings) -> None:
    policy = settings.policy
    if policy.budget is None and policy.enabled and not ledger.notes.warned_no_budget:
        ledger.note_warned()
        warnings.warn(
            f"{NO_BUDGET} for conversation {settings.conversation_id!r}: set max_tokens, "
            "context_window or a known model name",
            NoBudgetWarning,
            stacklevel=5,
        )


def _over_blocks(ledger: Ledger, settings: Settings) -> bool:
    limit = settings.policy.max_blocks
    return limit is not None and len(ledger.refresh_stream().blocks) > limit


def _reason(
    ledger: Ledger, settings: Settings, prep: Prep, budget: int, force: bool
) -> tuple[CompactionReason | None, int]:
    """Why this render compacts (None: it does not) and the estimate before it. Upper
    bounds are counted exactly only when a decision needs it, all at once."""
    stream = ledger.refresh_stream()
    # native mode: the provider compacts at the trigger; the library only past the budget
    ratio = 1.0 if settings.policy.native is not None else settings.policy.trigger_ratio
    trigger = ratio * budget
    est = raw_tokens(stream, prep) + overhead(ledger)
    over_blocks = _over_blocks(ledger, settings)
    if stream.pending and (force or over_blocks or est > trigger):
        stream.resolve()
        est = raw_tokens(stream, prep) + overhead(ledger)
    reason: CompactionReason
    if force:
        reason = "forced"
    elif est > trigger:
        reason = "tokens"
    elif over_blocks:
        reason = "blocks"
    else:
        return None, est
    seq = ledger.state.block_seq
    if not force and seq in (ledger.state.compacted_at_seq, ledger.notes.skipped_at_seq):
        return None, est  # nothing appended since the last compaction: never thrash
    return reason, est


def _prune_ttl(ledger: Ledger, settings: Settings) -> int:
    """Hide the tool results past the cache TTL (see :mod:`timeline._compaction.pruning`)."""
    policy = settings.policy
    if policy.cache_ttl_seconds is None:
        return 0
    blocks = ledger.blocks
    start = ledger.summary_index + 1
    current = ledger.state.current_turn_id
    found = prune_expired(
        blocks,
        start,
        now=settings.clock(),
        ttl_seconds=policy.cache_ttl_seconds,
        protected_turns=recent_turns(blocks, start, policy.keep_recent_turns, current),
        carried=ledger.carried,
    )
    ledger.replace(dict(found))
    return len(found)


def _pruned_enough(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    reason: CompactionReason,
    est: int,
    trigger: float,
    pruned: int,
) -> CompactionStats | None:
    """The stats of a TTL pruning that brought the prompt under the trigger on its own."""
    stream = ledger.refresh_stream()
    stream.resolve()
    after = raw_tokens(stream, prep) + overhead(ledger)
    if reason not in ("tokens", "blocks") or after > trigger or _over_blocks(ledger, settings):
        return None
    count = len(stream.blocks) + len(prep.tail)
    return CompactionStats.opening(
        reason,
        est,
        tokens_after=after,
        summary_block_count=ledger.summary_count,
        original_block_count=count,
        visible_block_count=count,
        summarizer=summarizer_name(settings),
        pruned_blocks=pruned,
        skipped="cache-TTL pruning brought the prompt under the trigger; no summary",
        tier="clear",
    )


def _keep_target(settings: Settings, prep: Prep, budget: int, keep_tokens: int | None) -> float:
    """What a summary would leave: the system prompt, the tools and ``keep_ratio`` of the
    rest (a manual compaction's ``keep_tokens`` when given)."""
    if keep_tokens is not None:
        return prep.fixed_tokens + keep_tokens
    return prep.fixed_tokens + settings.policy.keep_ratio * (budget - prep.fixed_tokens)


def _cut(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    budget: int,
    force: bool,
    keep_tokens: int | None,
    room: int = 0,
) -> CutPlan | None:
    blocks = ledger.blocks
    start = ledger.summary_index + 1
    costs, fixed = cut_costs(ledger, prep)
    policy = settings.policy
    return plan_cut(
        blocks,
        start,
        costs,
        ledger.carried,
        policy,
        budget=budget,
        base_tokens=prep.fixed_tokens,
        fixed_tokens=fixed,
        summary_reserve=policy.summary_reserve(budget, summary_cost(ledger)),
        force=force,
        keep_tokens=keep_tokens,
        current_turn=ledger.state.current_turn_id,
        pinned=ledger.pinned,
        room=room,
        follow_ups=_follow_ups(ledger),
    )


def _follow_ups(ledger: Ledger) -> dict[str, int]:
    """The carried follow-ups a compaction may stop carrying (not pinned ones), oldest
    first, with their rendered costs."""
    pinned, plan = ledger.pinned, ledger.plan_id
    ids = dict.fromkeys(i for i in ledger.carried if i not in pinned and i != plan)
    if not ids:
        return {}
    stream = ledger.refresh_stream()
    cost = {b.id: c for b, c in zip(stream.blocks, stream.costs, strict=True) if b.id in ids}
    return {i: cost[i] for i in ids if i in cost}


def plan_ahead(ledger: Ledger, settings: Settings, prep: Prep, room: int) -> CutPlan | None:
    """The cut the compaction at the trigger is expected to make, planned now: as if the
    ``room`` tokens left before the trigger had been appended (None: nothing to cut)."""
    budget = settings.policy.budget
    if budget is None:
        return None
    return _cut(ledger, settings, prep, budget, False, None, room)


def _announce(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    plan: CutPlan,
    stats: CompactionStats,
    context: tuple[Block, ...],
    job: Job | None = None,
) -> Pending:
    """The summary requests for ``plan``; fires ``on_before_compaction``. ``job``: the
    summary prepared for ``plan`` ahead of the trigger (its results are the summaries)."""
    blocks = ledger.blocks
    index = ledger.summary_index
    previous = blocks[index] if index >= 0 else None
    count = ledger.memo.summary_text
    asked = requests_for(plan, previous, settings.policy, blocks[plan.cut], count)
    mid_turn = None
    if plan.mid_turn:
        mid_turn = 1
        if previous is not None and previous.meta.get("split_turn_id") == plan.split_turn_id:
            mid_turn += int(previous.meta.get("mid_turn") or 0)
    covered = list(previous.meta.get("covered_turn_ids", ())) if previous is not None else []
    covered += [b.turn_id for b in plan.compacted]
    stats = attrs.evolve(
        stats,
        compacted_blocks=len(plan.compacted),
        split_turn=plan.split_turn_id is not None,
        split_turn_id=plan.split_turn_id,
        covered_turn_ids=tuple(dict.fromkeys(covered)),
        mid_turn=mid_turn,
        prepared=job is not None,
    )
    _log.compaction_started(settings.conversation_id, stats)
    if settings.on_before_compaction is not None:
        settings.on_before_compaction(stats)
    requests = tuple(
        attrs.evolve(r, system=prep.system, context=context, count_tokens=count)
        for r in (asked.history, asked.prefix)
        if r is not None
    )
    main_text = asked.previous if asked.history is None else None
    return Pending(
        plan, previous, asked.digest, requests, stats, main_text, asked.reminder, job=job
    )


def plan_compaction(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    *,
    force: bool,
    manual: bool = False,
    keep_tokens: int | None = None,
    asynchronous: bool = False,
) -> Pending | CompactionStats | None:
    """What to compact (announced, waiting for summaries), or the stats of a TTL pruning
    that was enough on its own, or None (no compaction). ``asynchronous``: on the async
    path (a summary prepared by a task can be awaited)."""
    policy = settings.policy
    recorded = _provider_compaction(ledger, settings, prep)
    if recorded is not None:
        return recorded
    if not manual and not policy.active:
        _warn_no_budget(ledger, settings)
        return None
    budget = _budget(settings, prep, keep_tokens)
    if manual:
        stream = ledger.refresh_stream()
        stream.resolve()
        reason: CompactionReason = "manual"
        est = raw_tokens(stream, prep) + overhead(ledger)
    else:
        due, est = _reason(ledger, settings, prep, budget, force)
        if due is None:
            return None
        reason = due
    stream = ledger.refresh_stream()
    stream.resolve()
    context = tuple(stream.blocks)
    pruned = _prune_ttl(ledger, settings)
    if pruned:
        done = _pruned_enough(
            ledger, settings, prep, reason, est, policy.trigger_ratio * budget, pruned
        )
        if done is not None:
            return done
    at = _At(reason, est, budget, pruned, force, keep_tokens, context, asynchronous)
    return _tiers(ledger, settings, prep, at)


def _provider_compaction(ledger: Ledger, settings: Settings, prep: Prep) -> Pending | None:
    """A provider compaction to record: announced, its summary the deterministic
    inventory of what it compacted (no model call: the provider has summarized)."""
    found = provider_compaction_plan(ledger, settings, prep)
    if found is None:
        return None
    plan, stats = found
    stream = ledger.refresh_stream()
    pending = _announce(ledger, settings, prep, plan, stats, tuple(stream.blocks))
    results = [summarize_sync(None, r, None) for r in pending.requests]
    main = pending.main_text if pending.main_text is not None else results[0]
    return attrs.evolve(pending, requests=(), main_text=main, by_provider=True)


@attrs.frozen
class _At:
    """Where a compaction decision stands once it is due and TTL pruning has run."""

    reason: CompactionReason
    est: int
    budget: int
    pruned: int
    force: bool
    keep_tokens: int | None
    context: tuple[Block, ...]
    asynchronous: bool = False


def _tiers(
    ledger: Ledger, settings: Settings, prep: Prep, at: _At
) -> Pending | CompactionStats | None:
    """The clearing tier, then a summary unless clearing brought the prompt under the
    keep target (a forced render always summarizes too; forced and manual compactions
    clear whatever they can, without ``clear_at_least_tokens``)."""
    reason = at.reason
    original = len(ledger.refresh_stream().blocks) + len(prep.tail)
    cleared, freed, after = clear_tier(ledger, settings, prep, at.force or reason == "manual")
    stats = CompactionStats.opening(
        reason,
        at.est,
        summary_block_count=ledger.summary_count,
        original_block_count=original,
        summarizer=summarizer_name(settings),
        pruned_blocks=at.pruned,
        cleared_blocks=cleared,
        cleared_tokens=freed,
    )
    target = _keep_target(settings, prep, at.budget, at.keep_tokens)
    enough = after <= target and not _over_blocks(ledger, settings)
    if cleared and reason != "forced" and enough:
        return cleared_stats(ledger, settings, prep, stats)  # no summary needed
    plan = _cut(ledger, settings, prep, at.budget, at.force, at.keep_tokens)
    if plan is None:
        if cleared:
            return cleared_stats(ledger, settings, prep, stats)
        _log.compaction_skipped(settings.conversation_id, reason, at.est)
        return None
    policy = settings.policy  # a prepared summary leaves the prompt at most halfway up
    limit = (policy.trigger_ratio * at.budget + target) / 2 - policy.summary_reserve(at.budget)
    plan, job = adopt(ledger, settings, prep, plan, reason, limit, at.asynchronous)
    return _announce(ledger, settings, prep, plan, stats, at.context, job)
