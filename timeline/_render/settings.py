"""What the render pipeline reads from the timeline besides its state: the policy, the
summarizer, the hooks, the clock and the id factory (``Timeline`` has all of them)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import attrs

from timeline._compaction import AsyncSummarizer, CompactionPolicy, CompactionStats, Summarizer

__all__ = ["Adjusted", "Clock", "Hook", "IdFactory", "Settings", "timestamp"]

Clock = Callable[[], datetime]
IdFactory = Callable[[str, int], str]
"""``(kind, seq) -> id`` where kind is ``"block"`` or ``"turn"`` and seq counts from 1."""
Hook = Callable[[CompactionStats], object]


class Settings(Protocol):
    """The timeline's configuration as the render pipeline sees it (read-only)."""

    @property
    def conversation_id(self) -> str: ...
    @property
    def policy(self) -> CompactionPolicy: ...
    @property
    def summarizer(self) -> Summarizer | AsyncSummarizer | None: ...
    @property
    def on_before_compaction(self) -> Hook | None: ...
    @property
    def on_after_compaction(self) -> Hook | None: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def id_factory(self) -> IdFactory: ...


@attrs.frozen
class Adjusted:
    """``base`` with another policy (a compaction with a focus of its own) and, when
    ``quiet``, no hooks (a dry run: nothing happens, nothing is announced)."""

    base: Settings
    policy: CompactionPolicy
    quiet: bool = False

    @property
    def conversation_id(self) -> str:
        return self.base.conversation_id

    @property
    def summarizer(self) -> Summarizer | AsyncSummarizer | None:
        return self.base.summarizer

    @property
    def on_before_compaction(self) -> Hook | None:
        return None if self.quiet else self.base.on_before_compaction

    @property
    def on_after_compaction(self) -> Hook | None:
        return None if self.quiet else self.base.on_after_compaction

    @property
    def clock(self) -> Clock:
        return self.base.clock

    @property
    def id_factory(self) -> IdFactory:
        return self.base.id_factory


def timestamp(clock: Clock) -> str:
    """``clock()`` as stored in ``Block.ts``: ISO-8601 UTC with milliseconds and ``Z``.

    The text is interned (:func:`sys.intern`): blocks appended within one millisecond
    share one string instead of holding a copy each (an import of many small messages:
    73 bytes a block). Only the string's identity is shared, through Python's own table
    of interned strings (which drops a string no block holds any more); its value is
    always the clock's, and no state of this module remembers it."""
    return sys.intern(clock().isoformat(timespec="milliseconds").replace("+00:00", "Z"))
