"""Prompt-cache checkpoints: where a render puts its ``cache_control`` breakpoints
(:mod:`~timeline.cache.checkpoints`) and a simulation of the provider's cache for the
benchmarks (:mod:`~timeline.cache.simulate`)."""

from timeline.cache.checkpoints import (
    LOOKBACK,
    MAX_BREAKPOINTS,
    CacheState,
    kind_positions,
    plan_checkpoints,
    positions,
)

__all__ = [
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "CacheState",
    "kind_positions",
    "plan_checkpoints",
    "positions",
]
