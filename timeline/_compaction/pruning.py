"""Cache-TTL pruning: hide tool results older than the prompt cache's TTL.

A provider's prompt cache expires after its TTL; past it, an old tool result costs full
price on every call. Before compacting, such results (outside the protected recent turns
and the blocks kept visible after the summary) are hidden behind a one-line replacement
that names their path, so ``read_path`` (or ``store.read``) brings them back. When that
alone brings the prompt under the trigger, no summary is made.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from datetime import datetime, timedelta

import msgspec

from timeline._model import REACT_TOOL_RESULT, Block

__all__ = ["prune_expired", "pruned_replacement", "recent_turns"]


def pruned_replacement(block: Block) -> str:
    """The text a pruned tool result renders as."""
    return f"[pruned: {block.tool_id or 'tool'} result {block.path} — read_path to restore]"


def _ts(block: Block) -> datetime | None:
    try:
        return datetime.fromisoformat(block.ts)
    except ValueError:
        return None


def prune_expired(
    blocks: Sequence[Block],
    start: int,
    *,
    now: datetime,
    ttl_seconds: float,
    protected_turns: Set[str],
    carried: Set[str],
) -> list[tuple[int, Block]]:
    """``(index, hidden copy)`` for each tool result in ``blocks[start:]`` older than the
    TTL at ``now``, outside ``protected_turns`` and ``carried``, not hidden already."""
    cutoff = now - timedelta(seconds=ttl_seconds)
    out: list[tuple[int, Block]] = []
    for i in range(start, len(blocks)):
        b = blocks[i]
        if (
            b.type != REACT_TOOL_RESULT
            or b.hidden
            or b.turn_id in protected_turns
            or b.id in carried
        ):
            continue
        ts = _ts(b)
        if ts is None or ts.tzinfo is None or ts >= cutoff:
            continue
        out.append(
            (i, msgspec.structs.replace(b, hidden=True, replacement_text=pruned_replacement(b)))
        )
    return out


def recent_turns(blocks: Sequence[Block], start: int, turns: int, current: str) -> set[str]:
    """The ids of the last ``turns`` turns in ``blocks[start:]`` and the running turn."""
    seen: list[str] = []
    for i in range(len(blocks) - 1, start - 1, -1):
        tid = blocks[i].turn_id
        if tid not in seen:
            if len(seen) >= turns:
                break
            seen.append(tid)
    return {*seen, current}
