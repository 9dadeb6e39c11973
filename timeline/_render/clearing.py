"""The clearing tier in a render: what a clearing pass would free, and the pass itself
(through :meth:`Ledger.clear_content`), run by :mod:`.sanitize` when a compaction is due.

The pass is all or nothing: every eligible block at once, and only when the blocks whose
placeholder is smaller than what they show free at least ``clear_at_least_tokens`` (a
forced render, the provider's "too long", takes any gain). So the provider's cache is
invalidated once per pass, for a gain worth it, never a little at every request.
"""

from __future__ import annotations

import attrs

from timeline._compaction import CompactionStats, clearing_candidates
from timeline._model import log as _log
from timeline._render.prepare import Prep, overhead, raw_tokens
from timeline._render.settings import Settings
from timeline._state import Ledger, cleared_form, rendered_form

__all__ = ["Cleared", "apply_clearing", "clear_tier", "cleared_stats"]


@attrs.frozen
class Cleared:
    """A clearing pass that ran: how many blocks it cleared and the tokens it expected to
    free (by each block's own cost; the render measures the prompt after it)."""

    blocks: int
    tokens: int


def apply_clearing(ledger: Ledger, settings: Settings, *, force: bool) -> Cleared | None:
    """Clear every eligible block when that frees enough (see the module docstring);
    None when the policy has no clearing tier or the pass would not pay."""
    policy = settings.policy
    clearing = policy.clearing
    if clearing is None:
        return None
    found = clearing_candidates(
        ledger.blocks,
        ledger.summary_index + 1,
        clearing,
        carried=ledger.carried,
        current_turn=ledger.state.current_turn_id,
        cleared=ledger.state.cleared,
        classification=policy.tool_classification,
    )
    if not found:
        return None
    stream = ledger.refresh_stream()
    stream.resolve()
    position = {index: pos for pos, index in enumerate(stream.source_index)}
    chosen: dict[str, str] = {}
    freed = 0
    for c in found:
        pos = position.get(c.index)
        if pos is None:
            continue  # not shown (a hidden block's repeat)
        shown = rendered_form(cleared_form(c.block, c.text), set())
        gain = stream.costs[pos] - (0 if shown is None else stream.cost(shown))
        if gain > 0:
            chosen[c.block.id] = c.text
            freed += gain
    least = clearing.least_tokens(policy.budget or 0)
    if not chosen or (not force and freed < least):
        return None
    ledger.clear_content(chosen)
    return Cleared(len(chosen), freed)


def cleared_stats(
    ledger: Ledger,
    settings: Settings,
    prep: Prep,
    stats: CompactionStats,
) -> CompactionStats:
    """The clear tier was enough (or no cut could follow it): announce it and report it
    to both hooks, as a compaction."""
    _log.compaction_started(settings.conversation_id, stats)
    if settings.on_before_compaction is not None:
        settings.on_before_compaction(stats)
    stream = ledger.refresh_stream()
    count = len(stream.blocks) + len(prep.tail)
    done = attrs.evolve(
        stats,
        tokens_after=raw_tokens(stream, prep) + overhead(ledger),
        visible_block_count=count,
        tier="clear",
    )
    _log.compaction_ended(settings.conversation_id, done)
    if settings.on_after_compaction is not None:
        settings.on_after_compaction(done)
    return done


def clear_tier(ledger: Ledger, settings: Settings, prep: Prep, force: bool) -> tuple[int, int, int]:
    """Run the clearing tier: (blocks cleared, tokens freed as measured, tokens after)."""
    stream = ledger.refresh_stream()
    stream.resolve()
    before = raw_tokens(stream, prep) + overhead(ledger)
    cleared: Cleared | None = apply_clearing(ledger, settings, force=force)
    if cleared is None:
        return 0, 0, before
    stream = ledger.refresh_stream()
    stream.resolve()
    after = raw_tokens(stream, prep) + overhead(ledger)
    return cleared.blocks, before - after, after
