"""Prompt-cache checkpoint placement.

Anthropic allows four ``cache_control`` breakpoints per request (the system prompt
included) and, at each breakpoint, looks for a cached prefix ending at most 20 content
positions earlier (a run of consecutive tool_use or tool_result blocks counts as one).
So each render places, on stable blocks only:

1. the last stable block: writes the whole prefix for the next request;
2. the previous request's last breakpoint when it is still there unchanged but more than
   ``LOOKBACK`` positions back: reads what that request wrote;
3. the end of the latest summary and the pinned blocks after it: a prefix that stays
   stable until the next compaction.

The planner remembers (and the store persists) the previous tail so a loaded timeline
places the same checkpoints as the one that was persisted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from timeline._model import Block, CacheState, block_type

__all__ = [
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "CacheState",
    "kind_positions",
    "plan_checkpoints",
    "positions",
]

MAX_BREAKPOINTS: Final = 4
LOOKBACK: Final = 20


def positions(blocks: Sequence[Block]) -> list[int]:
    """Anthropic content positions: consecutive tool calls (or results) share one."""
    return kind_positions([block_type(b.type).render for b in blocks])[0]


def kind_positions(
    kinds: Sequence[str], pos: int = -1, prev: str = ""
) -> tuple[list[int], int, str]:
    """:func:`positions` from the blocks' render kinds, continuing from ``pos`` (the last
    position) and ``prev`` (the last non-header kind); also returns those two after the
    last kind, for a stream that keeps growing."""
    out: list[int] = []
    for kind in kinds:
        if kind == "header":
            out.append(pos if pos > 0 else 0)
            continue
        if not (kind == prev and (kind == "tool_call" or kind == "tool_result")):
            pos += 1
        prev = kind
        out.append(pos)
    return out, pos, prev


def _end_of_run(blocks: Sequence[Block], i: int, limit: int) -> int:
    while i + 1 <= limit and blocks[i + 1].path == blocks[i].path:
        i += 1
    return i


def _last_content(blocks: Sequence[Block], i: int) -> int:
    while i >= 0 and block_type(blocks[i].type).render == "header":
        i -= 1
    return i


def plan_checkpoints(
    stable: Sequence[Block],
    *,
    has_system: bool,
    version: int,
    state: CacheState,
    anchor: int | None,
    stream_positions: Sequence[int] | None = None,
    has_tools: bool = False,
) -> tuple[tuple[int, ...], CacheState]:
    """Breakpoint indices into ``stable`` and the state for the next render; the system
    prompt's and the last tool's breakpoints (``has_system``, ``has_tools``) count
    against the limit."""
    last = _last_content(stable, len(stable) - 1)
    if last < 0:
        return (), CacheState(version=version)
    room = MAX_BREAKPOINTS - (1 if has_system else 0) - (1 if has_tools else 0)
    points = [last]
    pos = stream_positions if stream_positions is not None else positions(stable)
    prev = state.tail_index
    if (
        state.version == version
        and state.tail_id is not None
        and 0 <= prev < last
        and stable[prev].id == state.tail_id
        and pos[last] - pos[prev] >= LOOKBACK
    ):
        points.append(prev)
    if anchor is not None and len(points) < room:
        a = _last_content(stable, _end_of_run(stable, anchor, last))
        if a >= 0 and a not in points and pos[last] - pos[a] > 0:
            points.append(a)
    return tuple(sorted(points[:room])), CacheState(stable[last].id, last, version)
