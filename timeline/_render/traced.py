"""What the ``timeline._render`` and ``timeline._compaction`` spans say (see
:mod:`timeline._model.tracing`): counts, tiers and ids, never block text."""

from __future__ import annotations

from timeline._compaction import CompactionStats
from timeline._model import tracing
from timeline._render.context import RenderedContext
from timeline._render.settings import Settings

__all__ = ["compacted", "render_attributes"]


def render_attributes(settings: Settings, view: RenderedContext) -> tracing.Attributes:
    """The rendered prompt's figures: its tokens and blocks, the budget, the cache
    checkpoints, and whether it compacted or truncated."""
    stats = view.compaction
    return {
        "conversation_id": settings.conversation_id,
        "tokens": view.tokens,
        "budget": view.budget if view.budget is not None else -1,
        "blocks": len(view.blocks),
        "cache.checkpoints": len(view.cache_points),
        "compacted": stats is not None and stats.skipped is None,
        "truncated_blocks": len(view.truncated_paths),
    }


def compacted(settings: Settings, stats: CompactionStats | None, start_ns: int) -> None:
    """A ``timeline._compaction`` span from ``start_ns`` to now, when one ran."""
    if stats is None:
        return
    attributes: tracing.Attributes = {
        "conversation_id": settings.conversation_id,
        "reason": stats.reason,
        "tier": stats.tier,
        "tokens_before": stats.tokens_before,
        "tokens_after": stats.tokens_after if stats.tokens_after is not None else -1,
        "blocks_summarized": stats.compacted_blocks,
        "blocks_cleared": stats.cleared_blocks,
        "tokens_cleared": stats.cleared_tokens,
        "prepared": stats.prepared,
        "summarizer": stats.summarizer,
        "summarizer_failed": stats.summarizer_error is not None,
        "skipped": stats.skipped is not None,
    }
    tracing.emit("timeline.compaction", attributes, start_ns)
