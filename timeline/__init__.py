"""block-timeline: an LLM conversation as a timeline of typed blocks.

Import is cheap: no tokenizer is loaded and nothing is opened until used.
"""

from timeline import blocks
from timeline.compaction import CompactionPreview, CompactionStats
from timeline.compaction.clearing import ClearingPolicy
from timeline.compaction.digest import CompactionDigest
from timeline.compaction.policy import CompactionPolicy, NoBudgetWarning, context_window_for
from timeline.compaction.provider_compaction import NativeCompaction
from timeline.compaction.recall import RecallPolicy
from timeline.compaction.summarizers import (
    AsyncCacheWarmSummarizer,
    AsyncLLMSummarizer,
    AsyncSummarizer,
    CacheWarmSummarizer,
    InventorySummarizer,
    LLMSummarizer,
    SlidingWindowSummarizer,
    Summarizer,
    SummaryRequest,
    TruncateSummarizer,
)
from timeline.core.timeline import Timeline, sequential_ids
from timeline.driver.overflow import is_context_overflow, is_usage_overflow
from timeline.model.block import Block
from timeline.model.block_types import BlockTypeSpec, register_block_type
from timeline.model.codec import decode_block, encode_block
from timeline.model.errors import (
    AsyncSummarizerError,
    BudgetError,
    CodecError,
    ConflictError,
    ContextOverflowError,
    CorruptRecordError,
    DriverError,
    DuplicateBlockIdError,
    EmptyPromptError,
    InvalidBlockError,
    InvalidConversationIdError,
    NotFoundError,
    OrphanToolResultError,
    PinnedOverBudgetError,
    PolicyError,
    StoreError,
    StoreUnavailableError,
    TimelineError,
    TokenizerUnavailableError,
    ToolNameError,
    UnknownPathError,
)
from timeline.model.names import provider_call_id, provider_tool_name
from timeline.model.persistence import (
    AsyncIndexStore,
    CheckpointInfo,
    Embedder,
    IndexStore,
    LastRender,
    SearchHit,
    TimelineSnapshot,
    TimelineState,
)
from timeline.model.tools import ToolSpec, tool_specs
from timeline.render.context import RenderedContext
from timeline.tokens import HeuristicCounter, TiktokenCounter, TokenCounter, warm_up

__all__ = [
    "AsyncCacheWarmSummarizer",
    "AsyncIndexStore",
    "AsyncLLMSummarizer",
    "AsyncSummarizer",
    "AsyncSummarizerError",
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
]
