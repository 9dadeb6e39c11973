"""Summarizers: deterministic inventory (default), sliding window, and LLM-backed (a
transcript prompt, or the conversation's own cached prompt plus an instruction)."""

from timeline._compaction.summarizers.base import (
    AsyncSummarizer,
    Summarizer,
    SummaryKind,
    SummaryRequest,
)
from timeline._compaction.summarizers.cache_warm import (
    AsyncCacheWarmSummarizer,
    CacheWarmSummarizer,
)
from timeline._compaction.summarizers.inventory import InventorySummarizer
from timeline._compaction.summarizers.llm import AsyncLLMSummarizer, LLMSummarizer
from timeline._compaction.summarizers.sliding import SlidingWindowSummarizer
from timeline._compaction.summarizers.truncate import TruncateSummarizer

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
