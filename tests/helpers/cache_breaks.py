"""A simulated provider cache and the conversation steps the cache-break tests replay."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from timeline import CompactionPolicy, Timeline, blocks
from timeline._model.persistence import CacheBreak
from timeline._render.context import RenderedContext

SYSTEM = "You are a careful assistant. " * 200  # over the 1,024-token minimum alone


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def cached_prefix(view: RenderedContext) -> int:
    """What a request leaves cached: the system prompt and the blocks up to its last
    checkpoint (our count)."""
    end = view.cache_points[-1] + 1 if view.cache_points else 0
    return view.system_tokens + sum(view.block_tokens[:end])


class Provider:
    """A model stand-in that reports Anthropic usage: it reads what the previous request
    left cached when ``honest``, and writes the rest up to the last checkpoint."""

    def __init__(self) -> None:
        self.previous: RenderedContext | None = None
        self.read = 0

    def usage(self, view: RenderedContext, read: int | None = None) -> dict[str, int]:
        if read is None:
            read = cached_prefix(self.previous) if self.previous is not None else 0
        self.previous, self.read = view, read
        written = max(0, cached_prefix(view) - read)
        return {
            "input_tokens": view.tokens - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "output_tokens": 20,
        }


def conversation(**kw: Any) -> tuple[Timeline, list[CacheBreak], Clock]:
    found: list[CacheBreak] = []
    clock = Clock()
    tl = Timeline(
        "c",
        policy=CompactionPolicy(max_tokens=kw.pop("max_tokens", 20_000)),
        on_cache_break=found.append,
        clock=clock,
        **kw,
    )
    return tl, found, clock


def step(tl: Timeline, i: int, system: str = SYSTEM) -> RenderedContext:
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"Question {i}: " + "what about the parser? " * 10))
    view = tl.render(system)
    tl.append(blocks.assistant_completion(f"Answer {i}: " + "it reads tokens. " * 10))
    return view
