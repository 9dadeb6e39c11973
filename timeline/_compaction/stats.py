"""What a compaction did and where it cuts: :class:`CompactionStats` and :class:`CutPlan`."""

from __future__ import annotations

import warnings
from typing import Any, Literal

import attrs

from timeline._model import Block

__all__ = [
    "CompactionPreview",
    "CompactionReason",
    "CompactionStats",
    "CompactionTier",
    "CutPlan",
]


CompactionReason = Literal["tokens", "blocks", "forced", "manual", "native"]
CompactionTier = Literal["clear", "summarize", "provider"]
"""Which tier ran: ``clear`` (tool results cleared, no summary), ``summarize`` (a
summary, after clearing when ``cleared_blocks`` says so), ``provider`` (the provider
compacted: its compaction block became the summary)."""


@attrs.frozen
class CompactionStats:
    """What one compaction did (passed to the hooks and returned on ``view.compaction``).

    ``tokens_after`` is None in the ``on_before_compaction`` call.
    ``compacted_blocks`` is how many blocks the summary replaced;
    ``original_block_count`` / ``visible_block_count`` are the visible blocks before and
    after (``compacted_block_count`` is a deprecated alias of the latter).
    """

    reason: CompactionReason
    tokens_before: int
    tokens_after: int | None
    compacted_blocks: int
    summary_block_count: int
    split_turn: bool
    split_turn_id: str | None
    covered_turn_ids: tuple[str, ...]
    original_block_count: int
    visible_block_count: int | None
    """Visible blocks after the compaction, the summary included (None in the
    ``on_before_compaction`` call)."""
    summarizer: str
    summarizer_error: str | None = None
    summary_path: str | None = None
    pruned_blocks: int = 0
    """Tool results hidden by cache-TTL pruning before (or instead of) the summary."""
    skipped: str | None = None
    """Why no summary was inserted although a summary was due (None when one was, or
    when the clear tier was enough): the summarizer failed under
    ``on_summary_failure="skip"``, TTL pruning was enough, or the summary would not have
    made the prompt smaller (then the timeline is unchanged and ``tokens_after ==
    tokens_before``)."""
    mid_turn: int | None = None
    """n of ``[MID-TURN COMPACTION n]`` when the current turn itself was compacted."""
    tier: CompactionTier = "summarize"
    """The tier that ran (see :data:`CompactionTier`)."""
    cleared_blocks: int = 0
    """Blocks the clearing tier cleared in this compaction (tool results, inputs,
    thinking)."""
    cleared_tokens: int = 0
    """Prompt tokens that clearing freed."""
    prepared: bool = False
    """The summary was made ahead of the trigger, off the agent's path
    (``CompactionPolicy(prepare_at=...)``), and applied as it was."""

    @property
    def compacted_block_count(self) -> int | None:
        """Deprecated alias of :attr:`visible_block_count` (it never counted the
        compacted blocks: that is :attr:`compacted_blocks`)."""
        warnings.warn(
            "CompactionStats.compacted_block_count is deprecated: use visible_block_count "
            "(compacted_blocks counts the blocks the summary replaced)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.visible_block_count

    def as_dict(self) -> dict[str, object]:
        """Plain data for logs and events."""
        return attrs.asdict(self)

    @classmethod
    def opening(
        cls,
        reason: CompactionReason,
        tokens_before: int,
        *,
        summary_block_count: int,
        original_block_count: int,
        summarizer: str,
        **more: Any,
    ) -> CompactionStats:
        """The stats of a compaction before anything is summarized: nothing compacted,
        no split turn, nothing covered yet (``more``: the optional fields)."""
        return cls(
            reason=reason,
            tokens_before=tokens_before,
            tokens_after=more.pop("tokens_after", None),
            compacted_blocks=0,
            summary_block_count=summary_block_count,
            split_turn=False,
            split_turn_id=None,
            covered_turn_ids=(),
            original_block_count=original_block_count,
            visible_block_count=more.pop("visible_block_count", None),
            summarizer=summarizer,
            **more,
        )


@attrs.frozen(kw_only=True)
class CompactionPreview:
    """What a compaction would do now (``Timeline.compact(dry_run=True)``), computed on
    a copy: the timeline is unchanged, no hook fires, nothing is logged or summarized.

    ``tier`` is the tier that would run (None: nothing would happen, ``note`` says why).
    A summary's cut is ``cut_path`` (the first block kept verbatim); ``summarized_*``
    is what the summary would replace (the previous summary included), ``kept_*`` what
    stays visible after it. ``tokens_after`` counts the summary at the size the planner
    reserves for it (``summary_tokens``), so the real prompt is usually smaller."""

    tier: CompactionTier | None
    reason: CompactionReason | None
    tokens_before: int
    tokens_after: int
    budget: int | None
    trigger: int | None
    cut_path: str | None = None
    cut_block_id: str | None = None
    summarized_blocks: int = 0
    summarized_tokens: int = 0
    kept_blocks: int = 0
    kept_tokens: int = 0
    summary_tokens: int = 0
    cleared_blocks: int = 0
    cleared_tokens: int = 0
    pruned_blocks: int = 0
    split_turn_id: str | None = None
    prepared: bool = False
    """A summary prepared ahead of the trigger would be applied (no summarizer call)."""
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        """Plain data (``timeline compact --dry-run --json``)."""
        return attrs.asdict(self)


@attrs.frozen
class CutPlan:
    """Where to cut and what the summaries cover."""

    cut: int
    history: tuple[Block, ...]
    prefix: tuple[Block, ...]
    split_turn_id: str | None
    compacted: tuple[Block, ...]
    kept_tokens: int
    mid_turn: bool = False
    """The cut falls inside the running turn: its prefix becomes a mid-turn checkpoint."""
    released: tuple[str, ...] = ()
    """Carried follow-ups before the cut that stay carried no more: they did not fit in
    their share of what the compaction keeps verbatim (the summary covers them)."""
