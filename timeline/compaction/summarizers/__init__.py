"""Summarizers: deterministic inventory (default), sliding window, and LLM-backed (a
transcript prompt, or the conversation's own cached prompt plus an instruction)."""

from timeline.compaction.summarizers.base import (
    AsyncSummarizer,
    Summarizer,
    SummaryKind,
    SummaryRequest,
)
from timeline.compaction.summarizers.cache_warm import (
    AsyncCacheWarmSummarizer,
    CacheWarmSummarizer,
)
from timeline.compaction.summarizers.inventory import InventorySummarizer
from timeline.compaction.summarizers.llm import AsyncLLMSummarizer, LLMSummarizer
from timeline.compaction.summarizers.sliding import SlidingWindowSummarizer
from timeline.compaction.summarizers.truncate import TruncateSummarizer

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
