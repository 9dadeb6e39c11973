"""What a timeline persists, and the store protocol it needs.

``timeline`` defines the protocol (as httpx defines its transport) and ``index_store``
ships the backends. ``Timeline.persist`` commits, atomically: the blocks new since the
last persist to the turn log (summaries excluded), new summaries to the summary index,
and the live window (pinned blocks, then the latest summary onward) with the state a
loaded timeline needs to render byte-identically.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from timeline._model.block import Block
from timeline._model.tools import ToolSpec

__all__ = [
    "CacheBreak",
    "CacheState",
    "AsyncIndexStore",
    "CheckpointInfo",
    "Embedder",
    "IndexStore",
    "SearchHit",
    "TimelineSnapshot",
    "LastRender",
    "TimelineState",
    "UsageRecord",
]


class CacheState(msgspec.Struct, frozen=True):
    """What the next render needs from this one: where its tail breakpoint was."""

    tail_id: str | None = None
    tail_index: int = -1
    version: int = -1


class UsageRecord(msgspec.Struct, frozen=True):
    """Provider-reported prompt tokens against our raw estimate of the same render, and
    the provider's cache figures for it (None: not reported)."""

    prompt_tokens: int
    raw_estimate: int
    structure_version: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


class CacheBreak(msgspec.Struct, frozen=True, kw_only=True):
    """A request that read less from the provider's prompt cache than the request before
    it left there: its figures and the likely cause.

    ``cause`` is ``"prefix_changed"`` (the prompt differs from the previous one before
    the cached part ends: ``block_index`` and ``path`` name the first block that
    differs, ``compaction`` says a compaction or clearing pass of the library changed it),
    ``"ttl_expired"`` (longer than the cache's lifetime since the previous request),
    ``"below_minimum"`` (the previous prefix was under the provider's minimum cacheable
    length, so never written) or ``"unknown"`` (nothing the timeline can see changed:
    the tools, the model, the request's cache settings, or the provider's routing).
    ``detail`` says it in a sentence; token figures are the provider's."""

    ts: str
    cause: str
    detail: str
    expected_tokens: int
    """What the previous request left cached (its last checkpoint's prefix)."""
    read_tokens: int
    written_tokens: int | None = None
    block_index: int | None = None
    path: str | None = None
    compaction: bool = False


class LastRender(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the last render was run with: what a tool reading the store (``timeline
    inspect``, the CLI rendering a stored conversation) needs to show the conversation
    as it was run, and the fixed cost a pin is checked against between renders (fields at
    their defaults are not written: the window row stays small)."""

    system: str | None = None
    """The system prompt (None: never rendered)."""
    fixed_tokens: int = 0
    """What the system prompt, the prompt's framing and the tools cost."""
    budget: int | None = None
    """The prompt budget (None: it had none, so nothing compacted)."""
    trigger_ratio: float | None = None
    """The policy's compaction trigger, as a share of ``budget``."""
    tools: tuple[ToolSpec, ...] = ()
    """The tool definitions (what the CLI renders a stored conversation with, like
    ``system``)."""


_LEGACY_LAST_RENDER: dict[str, str] = {
    "_old_system_tokens": "fixed_tokens",
    "_old_budget": "budget",
    "_old_trigger_ratio": "trigger_ratio",
    "_old_system": "system",
    "_old_tools": "tools",
}
"""The loose fields a state kept its last render's figures in before
:class:`LastRender` (attribute -> :class:`LastRender` field)."""


class TimelineState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything besides the blocks that a loaded timeline must continue from."""

    block_seq: int = 0
    turn_seq: int = 0
    current_turn_id: str = ""
    pinned: list[str] = []
    structure_version: int = 0
    compacted_at_seq: int = -1
    cache: CacheState = CacheState()
    usage: UsageRecord | None = None
    last_render: LastRender = LastRender()
    """What the last render was run with (its system prompt, tools, budget)."""
    cleared: dict[str, str] = {}
    """Blocks the clearing tier shows as a placeholder, by id (``""``: left out); the
    blocks themselves are unchanged."""
    cache_breaks: list[CacheBreak] = []
    """The latest cache breaks ``record_usage`` found (the most recent last)."""
    policy: dict[str, Any] | None = None
    """The compaction policy of the timeline that persisted this window, as the mapping
    ``CompactionPolicy.from_mapping`` reads (None in memory, and in windows written
    before policies were kept). ``Timeline.load`` without ``policy=`` uses it."""
    _old_system_tokens: int | msgspec.UnsetType = msgspec.field(
        default=msgspec.UNSET, name="system_tokens"
    )
    _old_budget: int | msgspec.UnsetType | None = msgspec.field(
        default=msgspec.UNSET, name="budget"
    )
    _old_trigger_ratio: float | msgspec.UnsetType | None = msgspec.field(
        default=msgspec.UNSET, name="trigger_ratio"
    )
    _old_system: str | msgspec.UnsetType | None = msgspec.field(
        default=msgspec.UNSET, name="system"
    )
    _old_tools: tuple[ToolSpec, ...] | msgspec.UnsetType = msgspec.field(
        default=msgspec.UNSET, name="tools"
    )
    # A state stored before LastRender kept these at the top level: read only, folded
    # into ``last_render`` when decoded, never written (an unset field is not encoded).

    def __post_init__(self) -> None:
        old = {
            new: value
            for attr, new in _LEGACY_LAST_RENDER.items()
            if (value := getattr(self, attr)) is not msgspec.UNSET
        }
        if old:
            last = msgspec.structs.replace(self.last_render, **old)
            msgspec.structs.force_setattr(self, "last_render", last)
            for attr in _LEGACY_LAST_RENDER:
                msgspec.structs.force_setattr(self, attr, msgspec.UNSET)


class TimelineSnapshot(msgspec.Struct, frozen=True):
    """A whole timeline (or its persisted window): blocks in order plus state."""

    conversation_id: str
    blocks: list[Block]
    state: TimelineState


class SearchHit(msgspec.Struct, frozen=True):
    """One ``search`` result: the stored block, where it lives, and why it matched.

    A tool call and its result are one hit (whichever ranks higher), the other attached:
    a hit on a result carries its ``call`` (tool name and arguments), a hit on a call its
    ``result`` (the latest, when it has one)."""

    block: Block
    path: str
    turn_id: str
    snippet: str
    """The part of the block's text where the query's terms are densest, each matched
    word in ``[brackets]`` (the text's start when only its call matched)."""
    score: float
    """BM25 over the conversation's turn log: higher is better; comparable within one
    search only."""
    kind: str = "log"
    """``log`` (the turn log) or ``summary`` (the latest summary, ranked after the log)."""
    call: Block | None = None
    """On a hit on a tool result: its call."""
    result: Block | None = None
    """On a hit on a tool call: its result."""


class CheckpointInfo(msgspec.Struct, frozen=True):
    checkpoint_id: str
    created_at: str
    block_count: int


# mutmut adds its trampolines to a class as members, and a Protocol would then require
# them of every store: protocols are not mutated (docs/testing.md)
@runtime_checkable
class IndexStore(Protocol):  # pragma: no mutate block
    """What ``Timeline.persist``/``load`` and the memory tools need from a store."""

    def commit(
        self,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int:
        """Atomically append ``log``, index ``summaries``, replace the window; returns the
        new version. Raises ``ConflictError`` when the stored version is not
        ``expected_version`` (nothing written)."""
        ...

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        """The version and live window, or None for an unknown conversation."""
        ...

    def get_block(self, conversation_id: str, block_id: str) -> Block: ...

    def read(self, conversation_id: str, path: str) -> list[Block]:
        """Every stored block at ``path`` (turn log and summaries), in order."""
        ...

    def turn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]: ...

    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]: ...


@runtime_checkable
class Embedder(Protocol):  # pragma: no mutate block
    """An embedding model, for stores that rank by meaning as well as by words
    (``index_store.open(url, embedder=...)``): one vector per text, in order, all of one
    length. A ``name`` attribute, when it has one, tells its vectors from another
    model's."""

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


@runtime_checkable
class AsyncIndexStore(IndexStore, Protocol):  # pragma: no mutate block
    """A store that also offers the async API (every shipped backend does):
    ``Timeline.apersist``/``aload`` await it instead of using a worker thread."""

    async def acommit(
        self,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int: ...

    async def aload_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None: ...

    async def aget_block(self, conversation_id: str, block_id: str) -> Block: ...

    async def aread(self, conversation_id: str, path: str) -> list[Block]: ...

    async def aturn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]: ...

    async def asearch(
        self, conversation_id: str, query: str, limit: int = 10
    ) -> list[SearchHit]: ...
