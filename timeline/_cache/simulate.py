"""Simulate Anthropic's prompt cache over a sequence of requests.

A prefix is cached when an earlier request put a breakpoint at its end; a request reads
the longest cached prefix ending within ``LOOKBACK`` positions before one of its own
breakpoints (a run of consecutive tool_use or tool_result blocks is one position). Used
by the benchmarks and tests to measure checkpoint placement against the best any prefix
cache could serve (the prefix shared with the previous request).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Protocol

import attrs

from timeline._cache.checkpoints import LOOKBACK, positions
from timeline._model import Block

__all__ = ["CacheOutcome", "Position", "request_positions", "simulate"]


class Request(Protocol):
    """What a rendered request shows (``RenderedContext`` has these)."""

    @property
    def system(self) -> str: ...
    @property
    def system_cached(self) -> bool: ...
    @property
    def blocks(self) -> tuple[Block, ...]: ...
    @property
    def cache_points(self) -> tuple[int, ...]: ...


@attrs.frozen
class Position:
    """One cache position: a digest of the prefix up to it, its tokens, a breakpoint flag."""

    prefix: str
    tokens: int
    breakpoint: bool


@attrs.frozen
class CacheOutcome:
    tokens: int
    cached: int
    """Tokens read from the cache."""
    reusable: int
    """Tokens of the leading positions identical to the previous request (the upper
    bound for any prefix cache)."""
    written: int
    """Tokens written to the cache (beyond what was read)."""


def request_positions(
    view: Request, cost: Callable[[Block], int], system_tokens: int
) -> list[Position]:
    """The positions of one rendered request, system prompt first."""
    h = hashlib.sha256()
    out: list[Position] = []
    if view.system:
        h.update(view.system.encode())
        out.append(Position(h.hexdigest(), system_tokens, view.system_cached))
    points = set(view.cache_points)
    pos = positions(view.blocks)
    for i, b in enumerate(view.blocks):
        h.update(b"\x00" + b.id.encode() + b"\x00" + b.text.encode())
        tokens = cost(b)
        same = out and len(out) > (1 if view.system else 0) and i and pos[i] == pos[i - 1]
        if same:
            last = out[-1]
            out[-1] = Position(h.hexdigest(), last.tokens + tokens, last.breakpoint or i in points)
        else:
            out.append(Position(h.hexdigest(), tokens, i in points))
    return out


def simulate(requests: Sequence[Sequence[Position]]) -> list[CacheOutcome]:
    """Cache reads and writes for each request, in order."""
    cache: set[str] = set()
    outcomes: list[CacheOutcome] = []
    previous: list[str] = []
    for req in requests:
        cumulative = []
        total = 0
        for p in req:
            total += p.tokens
            cumulative.append(total)
        cached = 0
        for i, p in enumerate(req):
            if not p.breakpoint:
                continue
            for j in range(i, max(-1, i - LOOKBACK), -1):
                if req[j].prefix in cache:
                    cached = max(cached, cumulative[j])
                    break
        reusable = 0
        for j, p in enumerate(req):
            if j < len(previous) and previous[j] == p.prefix:
                reusable = cumulative[j]
            else:
                break
        written = 0
        for i, p in enumerate(req):
            if p.breakpoint and p.prefix not in cache:
                cache.add(p.prefix)
                written = max(written, cumulative[i] - cached)
        outcomes.append(CacheOutcome(total, cached, reusable, written))
        previous = [p.prefix for p in req]
    return outcomes
