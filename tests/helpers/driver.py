"""A driver on a scripted model."""

from __future__ import annotations

from typing import Any

from timeline import CompactionPolicy, Timeline


def make(budget: int = 16_000, **policy: Any) -> Timeline:
    return Timeline("d", policy=CompactionPolicy(max_tokens=budget, **policy))
