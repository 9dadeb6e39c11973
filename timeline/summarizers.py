"""Summarizers (public path; they live in :mod:`timeline.compaction.summarizers`)."""

from timeline.compaction.summarizers import (
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

__all__ = [
    "AsyncCacheWarmSummarizer",
    "AsyncLLMSummarizer",
    "AsyncSummarizer",
    "CacheWarmSummarizer",
    "InventorySummarizer",
    "LLMSummarizer",
    "SlidingWindowSummarizer",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "TruncateSummarizer",
]
