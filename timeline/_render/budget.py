"""The end of a render: the budget ladder (exact counts, truncation, the forced-render
target), cache checkpoints, and the :class:`RenderedContext` handed to the caller."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from timeline._cache import plan_checkpoints
from timeline._compaction import CompactionStats, truncate_to_fit
from timeline._model import Block, BudgetError, CacheState, LastRender, PinnedOverBudgetError
from timeline._render.context import RenderedContext
from timeline._render.prepare import Prep, overhead, raw_tokens
from timeline._render.settings import Settings
from timeline._state import Ledger, VisibleStream

__all__ = ["FORCED_RENDER_RATIO", "finish", "forced_target"]

FORCED_RENDER_RATIO: Final = 0.75
"""Each forced render, with nothing appended since the last render, is at most this
share of it (providers count 10-30% more tokens than cl100k, so a smaller step could
overflow again)."""


def _render_key(ledger: Ledger, prep: Prep) -> tuple[int, ...]:
    state = ledger.state
    return (state.block_seq, state.structure_version, prep.fixed_tokens, sum(prep.tail_costs))


def _budget(settings: Settings) -> int | None:
    return settings.policy.budget if settings.policy.enabled else None


def forced_target(ledger: Ledger, settings: Settings, prep: Prep) -> int | None:
    """The most a forced render may keep, in the library's own count (before the usage
    calibration, a constant it cannot shrink): 3/4 of the last render when nothing was
    appended since, else 3/4 of what an unforced render would send now."""
    budget = _budget(settings)
    if budget is None:
        return None
    notes = ledger.notes
    if notes.raw_estimate is not None and notes.render_key == _render_key(ledger, prep):
        reference = notes.raw_estimate()
    else:
        stream = ledger.refresh_stream()
        stream.resolve()
        reference = raw_tokens(stream, prep)
    return int(min(budget, reference) * FORCED_RENDER_RATIO)


def _fit(
    ledger: Ledger,
    settings: Settings,
    blocks: list[Block],
    costs: list[int],
    total: int,
    limits: tuple[int, int],
) -> tuple[int, list[str]]:
    """Truncate the largest blocks no cut could shrink until ``total`` is at most
    ``limit`` (render-only copies: the timeline keeps them whole); the new total and the
    truncated paths. ``limits`` is (budget, limit). Raises :class:`BudgetError` when that
    is not enough."""
    budget, limit = limits
    memo = ledger.memo
    removed, truncated = truncate_to_fit(
        blocks, costs, total - limit, memo.rendered, tuple(ledger.carried)
    )
    total -= removed
    if total > budget:
        raise BudgetError(
            f"the prompt needs {total} tokens after compaction and truncation but the "
            f"budget is {budget}",
            budget=budget,
            required=total,
            conversation_id=settings.conversation_id,
        )
    if total > limit:
        raise BudgetError(
            f"a forced render must keep at most {limit} tokens (3/4 of the last "
            f"render, plus the usage calibration) but cannot go below {total}: only "
            "the system prompt, pinned blocks, tool calls and blocks already "
            "truncated to the minimum are left",
            budget=budget,
            required=total,
            conversation_id=settings.conversation_id,
        )
    return total, truncated


def _check_pinned(settings: Settings, prep: Prep, stream: VisibleStream, budget: int) -> None:
    need = prep.fixed_tokens + stream.pinned_tokens
    if need > budget:
        tools = f", tool definitions ({prep.tools_tokens})" if prep.tools else ""
        raise PinnedOverBudgetError(
            f"system prompt ({prep.system_tokens}), framing ({prep.framing_tokens}){tools} "
            f"and pinned blocks ({stream.pinned_tokens}) need {need} tokens but the budget "
            f"is {budget}",
            budget=budget,
            required=need,
            parts=("system prompt", "tool definitions", "pinned blocks")
            if prep.tools
            else ("system prompt", "pinned blocks"),
            conversation_id=settings.conversation_id,
        )


def finish(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    *,
    force: bool,
    stats: CompactionStats | None,
    target: int | None = None,
) -> RenderedContext:
    """Fit the stream and the tail in the budget (``target``: a forced render's cap),
    place the checkpoints, and return the rendered context."""
    stream = ledger.refresh_stream()
    calibration = overhead(ledger)
    total = raw_tokens(stream, prep) + calibration
    budget = _budget(settings)
    if budget is not None and stream.pending and (force or total > budget):
        limit = budget - prep.fixed_tokens - sum(prep.tail_costs) - calibration
        stream.resolve(None if force else lambda: stream.tokens <= limit)
        total = raw_tokens(stream, prep) + calibration
    # the stream's own lists when there is no tail (only read from here on)
    blocks = stream.blocks + prep.tail if prep.tail else stream.blocks
    costs = stream.costs + prep.tail_costs if prep.tail else stream.costs
    truncated: list[str] = []
    if budget is not None:
        _check_pinned(settings, prep, stream, budget)
        limit = budget if target is None else min(budget, target + calibration)
        if total > limit:  # every bound is resolved here (see above)
            blocks, costs = list(blocks), list(costs)
            total, truncated = _fit(ledger, settings, blocks, costs, total, (budget, limit))
    stable = stream.blocks if blocks is stream.blocks else blocks[: len(stream.blocks)]
    points, cache_state = _checkpoints(ledger, prep, stream, stable)
    trigger = _record(ledger, settings, prep, cache_state, budget)
    shown = tuple(blocks)
    count_tokens, block_tokens = _deferred_counts(ledger, prep, stream, shown, tuple(costs), total)
    view = RenderedContext(
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
        framing_tokens=prep.framing_tokens,
        tools=prep.tools,
        tools_tokens=prep.tools_tokens,
        count_block_tokens=block_tokens,
        compaction_trigger=trigger,
        conversation_id=settings.conversation_id,
        native=None if settings.policy.native is None else settings.policy.native_params,
        recalled=prep.recalled,
    )
    return _noted(ledger, prep, view)


def _noted(ledger: Ledger, prep: Prep, view: RenderedContext) -> RenderedContext:
    """``view``, noted for what comes next: its size before the usage calibration (for
    ``record_usage`` and the next forced render, counted when asked) and what it shows
    (the cache figures of its usage are read against it)."""
    calibration = overhead(ledger)
    ledger.note_render(_render_key(ledger, prep), lambda: view.tokens - calibration, view)
    return view


def _checkpoints(
    ledger: Ledger, prep: Prep, stream: VisibleStream, stable: Sequence[Block]
) -> tuple[tuple[int, ...], CacheState]:
    """The cache checkpoints of the stable stream (the system prompt's and the last
    tool's breakpoints leave room for the rest) and the state for the next render."""
    return plan_checkpoints(
        stable,
        has_system=bool(prep.system),
        version=ledger.state.structure_version,
        state=ledger.state.cache,
        anchor=stream.anchor,
        stream_positions=stream.positions,
        has_tools=bool(prep.tools),
    )


def _record(
    ledger: Ledger, settings: Settings, prep: Prep, cache: CacheState, budget: int | None
) -> int | None:
    """Keep what this render leaves for the next one and for tools reading the store:
    the cache checkpoints, the system prompt and tools and their cost, the budget and the
    compaction trigger (returned, in tokens; None without a budget)."""
    ratio = settings.policy.trigger_ratio if budget is not None else None
    last = LastRender(
        system=str(prep.system),  # plain text: a str subclass would not encode
        fixed_tokens=prep.fixed_tokens,
        budget=budget,
        trigger_ratio=ratio,
        tools=prep.tools,
    )
    ledger.rendered(cache, last)
    return int(ratio * budget) if ratio is not None and budget is not None else None


def _deferred_counts(
    ledger: Ledger,
    prep: Prep,
    stream: VisibleStream,
    shown: tuple[Block, ...],
    shown_costs: tuple[int, ...],
    total: int,
) -> tuple[Callable[[], int], Callable[[], tuple[int, ...]]]:
    """The functions behind ``RenderedContext.tokens`` and ``block_tokens``: exact counts
    of blocks still at an upper bound wait until someone asks (no pass over them now:
    without a budget they are most of the stream)."""
    memo = ledger.memo
    pending = stream.pending.copy()
    known = total - stream.pending_total

    def count_tokens() -> int:
        return known + sum(memo.block(shown[pos]) for pos in pending)

    def block_tokens() -> tuple[int, ...]:
        exact = set(pending)
        return tuple(
            memo.block(b) if pos in exact else shown_costs[pos] for pos, b in enumerate(shown)
        )

    return count_tokens, block_tokens
