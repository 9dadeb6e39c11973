"""Prompt-cache checkpoints: where a render puts its ``cache_control`` breakpoints
(:mod:`~timeline._cache.checkpoints`) and a simulation of the provider's cache for the
benchmarks (:mod:`~timeline._cache.simulate`)."""

from __future__ import annotations

from timeline._cache.breaks import (
    Sent,
    SentRequest,
    find_break,
    min_cacheable_tokens,
)
from timeline._cache.checkpoints import (
    LOOKBACK,
    MAX_BREAKPOINTS,
    CacheState,
    kind_positions,
    plan_checkpoints,
    positions,
)

__all__ = [
    "CacheState",
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "Sent",
    "SentRequest",
    "find_break",
    "kind_positions",
    "min_cacheable_tokens",
    "plan_checkpoints",
    "positions",
]
