"""What a render leaves for the next calls of the same timeline (not persisted)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from timeline._cache import Sent, SentRequest

__all__ = ["RenderNotes"]


@attrs.frozen
class RenderNotes:
    """What a render leaves for the next calls (not persisted)."""

    raw_estimate: Callable[[], int] | None = None
    """Our count of the last render before calibration (``record_usage`` compares)."""
    render_key: tuple[int, ...] | None = None
    """What the last render was made of: a forced render with the same key beats its
    size (``raw_estimate``)."""
    skipped_at_seq: int = -1
    """``block_seq`` when a compaction was last skipped (not smaller): not retried until
    something is appended."""
    warned_no_budget: bool = False
    sent: SentRequest | None = None
    """The last render, as sent (``record_usage`` reads its cache figures against it)."""
    cached: Sent | None = None
    """The last render whose cache figures were recorded, and when."""
