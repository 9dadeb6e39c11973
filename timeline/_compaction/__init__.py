"""Compaction: choose the cut, build the summary requests, run summarizers safely.

The cut keeps recent context and never separates a tool call from its results; the
summary replaces what is before it. The modules:

* :mod:`~timeline._compaction.stats`: what a compaction did (:class:`CompactionStats`) and
  where it cuts (:class:`CutPlan`);
* :mod:`~timeline._compaction.clearing`: the clearing tier run before a summary (what is
  eligible and the placeholder each block shows);
* :mod:`~timeline._compaction.cuts`: valid cuts and the cut planner;
* :mod:`~timeline._compaction.requests`: the digest and the summary requests of a cut;
* :mod:`~timeline._compaction.run`: running a summarizer with its timeout and fallback;
* :mod:`~timeline._compaction.digest`, :mod:`~timeline._compaction.summary_text` and
  :mod:`~timeline._compaction.summarizers`: what a summary holds and says.
"""

from __future__ import annotations

from timeline._compaction.clearing import (
    ClearingPolicy,
    clearing_candidates,
)
from timeline._compaction.cuts import (
    cut_boundary,
    plan_at,
    plan_cut,
    valid_cuts,
)
from timeline._compaction.digest import (
    CompactionDigest,
    digest_meta,
)
from timeline._compaction.offload import (
    offload_preview,
)
from timeline._compaction.policy import (
    NO_BUDGET,
    CompactionPolicy,
    NoBudgetWarning,
    context_window_for,
    policy_type,
)
from timeline._compaction.provider_compaction import (
    NativeCompaction,
    provider_compaction_cut,
)
from timeline._compaction.pruning import (
    prune_expired,
    pruned_replacement,
    recent_turns,
)
from timeline._compaction.recall import (
    RecallPolicy,
)
from timeline._compaction.recall_rank import (
    rank_candidates,
)
from timeline._compaction.recall_text import (
    INTRO,
    entry_text,
    recalled_blocks,
)
from timeline._compaction.requests import (
    SummaryPlan,
    requests_for,
)
from timeline._compaction.run import (
    summarize_async,
    summarize_sync,
)
from timeline._compaction.stats import (
    CompactionPreview,
    CompactionReason,
    CompactionStats,
    CompactionTier,
    CutPlan,
)
from timeline._compaction.stored_policy import (
    budget_policy,
    policy_mapping,
    stored_policy,
)
from timeline._compaction.summarizers import (
    AsyncCacheWarmSummarizer,
    AsyncLLMSummarizer,
    AsyncSummarizer,
    CacheWarmSummarizer,
    InventorySummarizer,
    LLMSummarizer,
    SlidingWindowSummarizer,
    Summarizer,
    SummaryKind,
    SummaryRequest,
    TruncateSummarizer,
)
from timeline._compaction.summarizers.base import (
    SummaryResult,
)
from timeline._compaction.summarizers.llm import EmptySummaryError
from timeline._compaction.summary_state import (
    STATE_KEY,
    summary_content,
)
from timeline._compaction.summary_text import (
    SPLIT_TURN_HEADING,
)
from timeline._compaction.truncation import (
    cut_at_word,
    truncate_to_fit,
)

__all__ = [
    "EmptySummaryError",
    "AsyncCacheWarmSummarizer",
    "AsyncLLMSummarizer",
    "AsyncSummarizer",
    "CacheWarmSummarizer",
    "ClearingPolicy",
    "CompactionDigest",
    "CompactionPolicy",
    "CompactionPreview",
    "CompactionReason",
    "CompactionStats",
    "CompactionTier",
    "CutPlan",
    "INTRO",
    "InventorySummarizer",
    "LLMSummarizer",
    "NO_BUDGET",
    "NativeCompaction",
    "NoBudgetWarning",
    "RecallPolicy",
    "SPLIT_TURN_HEADING",
    "STATE_KEY",
    "SlidingWindowSummarizer",
    "Summarizer",
    "SummaryKind",
    "SummaryPlan",
    "SummaryRequest",
    "SummaryResult",
    "TruncateSummarizer",
    "budget_policy",
    "clearing_candidates",
    "context_window_for",
    "cut_at_word",
    "cut_boundary",
    "digest_meta",
    "entry_text",
    "offload_preview",
    "plan_at",
    "plan_cut",
    "policy_mapping",
    "policy_type",
    "provider_compaction_cut",
    "prune_expired",
    "pruned_replacement",
    "rank_candidates",
    "recalled_blocks",
    "recent_turns",
    "requests_for",
    "stored_policy",
    "summarize_async",
    "summarize_sync",
    "summary_content",
    "truncate_to_fit",
    "valid_cuts",
]
