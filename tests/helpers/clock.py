"""A deterministic clock and a token counter that counts its work."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from timeline import HeuristicCounter


class FixedClock:
    """Ticks one second per call from 2026-01-01T00:00:00Z."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class CountingCounter:
    """Wraps a counter and counts calls and characters (tokenizer work)."""

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner or HeuristicCounter()
        self.calls = 0
        self.chars = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return int(self.inner.count(text))
