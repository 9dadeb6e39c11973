"""Summarizers (public path; they live in :mod:`timeline._compaction.summarizers`)."""

from timeline._compaction import (
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
