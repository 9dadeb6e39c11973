"""Summarizers: deterministic inventory (default), sliding window, and LLM-backed."""

from timeline.summarizers.base import AsyncSummarizer, Summarizer, SummaryKind, SummaryRequest
from timeline.summarizers.inventory import InventorySummarizer
from timeline.summarizers.llm import AsyncLLMSummarizer, LLMSummarizer
from timeline.summarizers.sliding import SlidingWindowSummarizer
from timeline.summarizers.truncate import TruncateSummarizer

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
