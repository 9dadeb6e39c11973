"""What the ported pydantic-ai tests need: the one construction they change
(``make_history``), and the comparison helpers of pydantic-ai's own test suite, which
compare by value exactly as its lightweight ``snapshot`` stub (``tests/_inline_snapshot.py``)
and its dirty-equals re-exports (``tests/conftest.py``) do."""

from __future__ import annotations

from typing import Any

from dirty_equals import IsDatetime, IsInstance, IsStr
from dirty_equals import IsNow as _IsNow

from timeline import CompactionPolicy
from timeline.integrations.pydantic_ai import TimelineHistory

__all__ = ["IsDatetime", "IsInstance", "IsNow", "IsStr", "make_history", "snapshot"]

POLICY = CompactionPolicy(max_tokens=100_000)
"""A budget the tests' small conversations never reach: the processor must then change
nothing, which is what these tests expect of an identity processor."""

_count = 0


def make_history() -> TimelineHistory:
    """A ``TimelineHistory`` on a fresh in-memory store (one conversation per agent)."""
    global _count
    _count += 1
    return TimelineHistory(f"ported-{_count}", "memory://", POLICY)


def snapshot(value: Any) -> Any:
    """pydantic-ai's ``snapshot`` stub without ``--inline-snapshot``: the value itself."""
    return value


def IsNow(*args: Any, **kwargs: Any) -> Any:
    """pydantic-ai's ``IsNow``: dirty-equals' with a 10 s delta (its conftest's)."""
    kwargs.setdefault("delta", 10)
    return _IsNow(*args, **kwargs)
