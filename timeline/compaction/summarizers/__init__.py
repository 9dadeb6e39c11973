"""Summarizers: deterministic inventory (default), sliding window, and LLM-backed."""

from timeline.compaction.summarizers.base import (
    AsyncSummarizer,
    Summarizer,
    SummaryKind,
    SummaryRequest,
)
from timeline.compaction.summarizers.inventory import InventorySummarizer
from timeline.compaction.summarizers.llm import AsyncLLMSummarizer, LLMSummarizer
from timeline.compaction.summarizers.sliding import SlidingWindowSummarizer
from timeline.compaction.summarizers.truncate import TruncateSummarizer

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
