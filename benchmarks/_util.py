"""Timing helpers: medians and percentiles of repeated runs, side by side in one process."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"
