"""The public surface: exactly the names meant to be public, and a cheap import."""

from __future__ import annotations

import subprocess
import sys

import index_store
import timeline

PUBLIC_NAMES = frozenset(
    {
        "AsyncCacheWarmSummarizer",
        "AsyncIndexStore",
        "AsyncLLMSummarizer",
        "AsyncSummarizerError",
        "AsyncSummarizer",
        "Block",
        "BlockTypeSpec",
        "BudgetError",
        "CacheWarmSummarizer",
        "CheckpointInfo",
        "ClearingPolicy",
        "CodecError",
        "CompactionDigest",
        "CompactionPolicy",
        "CompactionPreview",
        "CompactionStats",
        "ConflictError",
        "ContextOverflowError",
        "CorruptRecordError",
        "DriverError",
        "DuplicateBlockIdError",
        "Embedder",
        "EmptyPromptError",
        "HeuristicCounter",
        "IndexStore",
        "InvalidBlockError",
        "InvalidConversationIdError",
        "InventorySummarizer",
        "LLMSummarizer",
        "LastRender",
        "NativeCompaction",
        "NoBudgetWarning",
        "NotFoundError",
        "OrphanToolResultError",
        "PinnedOverBudgetError",
        "PolicyError",
        "RecallPolicy",
        "RenderedContext",
        "SearchHit",
        "SlidingWindowSummarizer",
        "StoreError",
        "StoreUnavailableError",
        "Summarizer",
        "SummaryRequest",
        "TiktokenCounter",
        "Timeline",
        "TimelineError",
        "TimelineSnapshot",
        "TimelineState",
        "TokenCounter",
        "TokenizerUnavailableError",
        "ToolNameError",
        "ToolSpec",
        "TruncateSummarizer",
        "UnknownPathError",
        "blocks",
        "context_window_for",
        "decode_block",
        "encode_block",
        "is_context_overflow",
        "is_usage_overflow",
        "provider_call_id",
        "provider_tool_name",
        "register_block_type",
        "sequential_ids",
        "tool_specs",
        "warm_up",
    }
)
"""The contract names of DESIGN §10 (and the third round's additions)."""


def test_timeline_all_is_the_public_surface() -> None:
    """timeline.__all__ lists the contract names of DESIGN §10 and nothing private."""
    assert set(timeline.__all__) == PUBLIC_NAMES
    assert sorted(timeline.__all__) == list(timeline.__all__)
    for name in timeline.__all__:
        assert hasattr(timeline, name)


def test_index_store_all_is_the_public_surface() -> None:
    """index_store exports open() and the backends."""
    expected = [
        "CheckpointInfo",
        "IndexStore",
        "MemoryStore",
        "PostgresStore",
        "SearchHit",
        "SqliteStore",
        "open",
    ]
    assert expected == index_store.__all__
    assert index_store.PostgresStore.__name__ == "PostgresStore"


def test_every_error_derives_from_timeline_error() -> None:
    """Every exported exception class is a TimelineError."""
    errors = [getattr(timeline, n) for n in timeline.__all__ if n.endswith("Error")]
    assert errors
    assert all(issubclass(e, timeline.TimelineError) for e in errors)


def test_import_loads_no_tokenizer_and_no_driver() -> None:
    """Importing both packages loads neither tiktoken nor psycopg and opens no file."""
    code = (
        "import sys, timeline, index_store; "
        "print(sorted(m for m in ('tiktoken', 'psycopg') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
