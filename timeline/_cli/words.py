"""The CLI's words for counts and for a conversation's compaction policy."""

from __future__ import annotations

from timeline._compaction import NO_BUDGET, CompactionPolicy

__all__ = ["compaction_status", "plural"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns``, ``1,024 blocks`` (``many`` for irregular plurals)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def compaction_status(policy: CompactionPolicy) -> str:
    """One line on whether and when ``policy`` compacts (``inspect``'s ``compaction``)."""
    budget = policy.budget
    if budget is None:
        return NO_BUDGET
    if not policy.enabled:
        return f"compaction disabled (budget {budget:,} tokens)"
    trigger = int(policy.trigger_ratio * budget)
    return f"budget {budget:,} tokens, compaction at {trigger:,}"
