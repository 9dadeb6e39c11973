"""The summary requests of one compaction: the cumulative digest, the history and
turn-prefix requests, the previous summary they extend and the Active Work Reminder."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from timeline._compaction.digest import (
    PLAN,
    PLAN_HISTORY,
    CompactionDigest,
    build_digest,
    digest_from_meta,
)
from timeline._compaction.policy import CompactionPolicy
from timeline._compaction.stats import CutPlan
from timeline._compaction.summarizers.base import SummaryRequest, SummaryResult, estimate_tokens
from timeline._compaction.summary_state import previous_summary
from timeline._compaction.summary_text import active_work_reminder
from timeline._model import Block

__all__ = ["SummaryPlan", "requests_for"]


def _summarized(seq: Sequence[Block]) -> tuple[Block, ...]:
    """What a summarizer reads: plans are carried and folded, never summarized."""
    return tuple(b for b in seq if b.type not in (PLAN, PLAN_HISTORY))


@attrs.frozen
class SummaryPlan:
    """What one compaction asks of the summarizer, and what the library adds itself.

    ``previous`` is the summary being extended (read from the previous summary block's
    state, see :func:`~timeline._compaction.summary_state.previous_summary`). ``history``
    is None for a mid-turn compaction with nothing before the turn: then ``previous``
    stands in for it, as it was. The summarizer's size budget leaves room for the
    ``reminder`` and the tagged notes."""

    digest: CompactionDigest
    history: SummaryRequest | None
    prefix: SummaryRequest | None
    previous: SummaryResult
    reminder: str

    @property
    def previous_text(self) -> str:
        """The text of the summary being extended (``""``: none)."""
        return self.previous.text


def requests_for(
    plan: CutPlan,
    previous: Block | None,
    policy: CompactionPolicy,
    cut_block: Block | None = None,
    count: Callable[[str], int] | None = None,
) -> SummaryPlan:
    """The cumulative digest, the summary requests and the Active Work Reminder. The
    summarizers get what the summary cap leaves after the parts the library adds (by
    ``count``, the timeline's token count; chars/4 without one)."""
    prev_digest = digest_from_meta(previous.meta) if previous is not None else None
    digest = build_digest(
        plan.compacted,
        prev_digest,
        tool_classification=policy.tool_classification,
        user_prompt_cap_chars=policy.user_prompt_cap_chars,
        max_user_requests=policy.max_user_requests,
    )
    reminder = active_work_reminder(plan.compacted, cut_block, digest)
    size = count or estimate_tokens
    notes = "\n".join(digest.tagged_notes)
    added = size(reminder) + (size(notes) + 8 if notes else 0)
    if plan.prefix:
        added += 16  # the split-turn heading or the mid-turn markers
    budget = max(48, policy.summary_budget() - added - 4)
    split = max(32, budget * 2 // 3)  # the history's share beside a turn prefix
    carried = previous_summary(previous)
    history_blocks = _summarized(plan.history)
    history = None
    if history_blocks or not plan.mid_turn:
        history = SummaryRequest(
            kind="history",
            blocks=history_blocks,
            previous_summary=carried.text,
            previous_sections=carried.sections,
            digest=digest,
            max_tokens=budget if not plan.prefix else split,
            focus=policy.focus_instructions,
            user_prompt_cap_chars=policy.user_prompt_cap_chars,
        )
    prefix = None
    if plan.prefix:
        prefix = SummaryRequest(
            kind="turn_prefix",
            blocks=_summarized(plan.prefix),
            digest=digest,
            max_tokens=max(16, budget - split),
            focus=policy.focus_instructions,
            user_prompt_cap_chars=policy.user_prompt_cap_chars,
        )
    return SummaryPlan(digest, history, prefix, carried, reminder)
