"""The summarizer plug point: a request, the sync and async protocols, shared helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import attrs

from timeline.compaction.digest import CompactionDigest
from timeline.compaction.truncation import cut_at_word
from timeline.model.block import Block
from timeline.model.block_types import block_type

__all__ = [
    "AsyncSummarizer",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "block_line",
    "estimate_tokens",
]

SummaryKind = Literal["history", "turn_prefix"]


@attrs.frozen
class SummaryRequest:
    """What to summarize.

    ``kind`` is ``"history"`` (everything before the cut, merged with
    ``previous_summary``) or ``"turn_prefix"`` (the start of a turn the cut splits).
    ``digest`` is the cumulative digest of this compaction; ``max_tokens`` the size the
    summary should stay under; ``focus`` optional instructions on what to keep.
    """

    kind: SummaryKind
    blocks: tuple[Block, ...]
    previous_summary: str = ""
    digest: CompactionDigest = attrs.field(factory=CompactionDigest)
    max_tokens: int = 2000
    focus: str | None = None
    user_prompt_cap_chars: int = 600


@runtime_checkable
class Summarizer(Protocol):
    """Turns a :class:`SummaryRequest` into summary text."""

    def summarize(self, request: SummaryRequest) -> str: ...


@runtime_checkable
class AsyncSummarizer(Protocol):
    """The async form, used by :meth:`Timeline.arender`."""

    async def asummarize(self, request: SummaryRequest) -> str: ...


def estimate_tokens(text: str) -> int:
    """chars/4: summarizers size their own output without tokenizer work."""
    return (len(text) + 3) // 4


def block_line(block: Block, cap: int = 400) -> str:
    """One block as a transcript line: ``[Author]: text`` (tool calls with their name)."""
    spec = block_type(block.type)
    text = block.text.strip()
    if len(text) > cap:
        kept = cut_at_word(text, cap)
        text = f"{kept} [... {len(text) - len(kept)} more chars]"
    if spec.render == "tool_call":
        text = f"{block.tool_id}({text})"
    elif spec.render == "tool_result":
        text = f"{block.tool_id or 'tool'} -> {text}"
    elif spec.render == "attachment":
        text = f"attachment {block.meta.get('name', block.path)} ({block.mime}) {text}"
    author = (block.author or spec.default_author or "system").capitalize()
    return f"[{author}]: {text}"


def non_header(blocks: Sequence[Block]) -> list[Block]:
    """The blocks that carry content (turn headers and thinking/reasoning dropped: those
    are the provider's own, never summarized)."""
    return [b for b in blocks if block_type(b.type).render not in ("header", "reasoning")]
