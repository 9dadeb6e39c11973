"""Summarizers (public path; they live in :mod:`timeline.compaction.summarizers`)."""

from timeline.compaction.summarizers import (
    AsyncLLMSummarizer,
    AsyncSummarizer,
    InventorySummarizer,
    LLMSummarizer,
    SlidingWindowSummarizer,
    Summarizer,
    SummaryKind,
    SummaryRequest,
    TruncateSummarizer,
)

__all__ = [
    "AsyncLLMSummarizer",
    "AsyncSummarizer",
    "InventorySummarizer",
    "LLMSummarizer",
    "SlidingWindowSummarizer",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "TruncateSummarizer",
]
