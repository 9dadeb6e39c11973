"""timeline._core."""

from __future__ import annotations

from timeline._core.persist import (
    afetch,
    fetch,
)
from timeline._core.timeline import (
    Timeline,
    sequential_ids,
)

__all__ = [
    "Timeline",
    "afetch",
    "fetch",
    "sequential_ids",
]
