"""The summarizer plug point: a request, the sync and async protocols, shared helpers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, Literal, Protocol, runtime_checkable

import attrs

from timeline._compaction.digest import CompactionDigest
from timeline._compaction.sections import SummarySections
from timeline._compaction.summarizers._sentences import clip_lines
from timeline._compaction.truncation import cut_at_word
from timeline._model import Block, block_type, tool_output

__all__ = [
    "AsyncSummarizer",
    "SectionedSummarizer",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "block_line",
    "estimate_tokens",
    "within",
]

SummaryKind = Literal["history", "turn_prefix"]


@attrs.frozen
class SummaryRequest:
    """What to summarize.

    ``kind`` is ``"history"`` (everything before the cut, merged with
    ``previous_summary``) or ``"turn_prefix"`` (the start of a turn the cut splits).
    ``digest`` is the cumulative digest of this compaction; ``max_tokens`` the size the
    summary should stay under; ``focus`` optional instructions on what to keep.

    ``previous_summary`` is the text the previous summarizer wrote, as it wrote it (prose
    or headings; the library's own parts around it left out). ``previous_sections`` are
    the previous summary's sections as data when the inventory summarizer wrote it (None:
    ``previous_summary`` is text only, to be carried, never parsed).

    ``system`` and ``context`` are the prompt as the model last saw it: the system prompt
    and the visible blocks in their rendered form (the previous summary first), before
    this compaction changed anything. A summarizer that sends them back with one final
    instruction (:class:`~timeline._compaction.summarizers.cache_warm.CacheWarmSummarizer`)
    is served mostly from the provider's prompt cache.

    ``count_tokens`` is the timeline's own count of a text, as the summary block will be
    counted (None: size by chars/4); the inventory summarizer stays within ``max_tokens``
    by it.
    """

    kind: SummaryKind
    blocks: tuple[Block, ...]
    previous_summary: str = ""
    digest: CompactionDigest = attrs.field(factory=CompactionDigest)
    max_tokens: int = 2000
    focus: str | None = None
    user_prompt_cap_chars: int = 600
    previous_sections: SummarySections | None = None
    system: str = ""
    context: tuple[Block, ...] = ()
    count_tokens: Callable[[str], int] | None = attrs.field(default=None, eq=False)


@attrs.frozen
class SummaryResult:
    """A summarizer's text and, when it has them, its sections as data (what the next
    summary carries); ``error`` says why the fallback wrote it, when it did."""

    text: str
    sections: SummarySections | None = None
    error: str | None = None


@runtime_checkable
class Summarizer(Protocol):
    """Turns a :class:`SummaryRequest` into summary text."""

    def summarize(self, request: SummaryRequest) -> str: ...


@runtime_checkable
class SectionedSummarizer(Protocol):
    """A summarizer that also returns its sections as data (the inventory summarizer): the
    library stores them and hands them to the next summary as ``previous_sections``."""

    def summarize_sections(self, request: SummaryRequest) -> SummaryResult: ...


@runtime_checkable
class AsyncSummarizer(Protocol):
    """The async form, used by :meth:`Timeline.arender`."""

    async def asummarize(self, request: SummaryRequest) -> str: ...


def estimate_tokens(text: str) -> int:
    """chars/4: summarizers size their own output without tokenizer work."""
    return (len(text) + 3) // 4


_REFITS: Final = 3


def within(request: SummaryRequest, fit: Callable[[int], SummaryResult]) -> SummaryResult:
    """``fit(size in characters)`` within ``request.max_tokens``: at chars/4, then, when
    the request carries the timeline's token count, refitted smaller while that count is
    over (text dense in tokens, such as paths and numbers, runs under 4 characters a
    token); as a last resort whole lines go from the end."""
    limit = request.max_tokens
    chars = limit * 4
    result = fit(chars)
    count = request.count_tokens
    if count is None:
        return result
    for _ in range(_REFITS):
        used = count(result.text)
        if used <= limit:
            return result
        chars = min(chars - 1, len(result.text) * limit // used)
        if chars <= 0:
            break
        result = fit(chars)
    text = result.text
    while text and count(text) > limit:
        text = clip_lines(text, len(text) * 9 // 10)
    return SummaryResult(text, result.sections, result.error)


_LABEL_UNSAFE: Final = re.compile(r"[^\w .-]+")
CONTINUATION: Final = "  "
"""What every line of a block after its first starts with in a transcript."""


def block_line(block: Block, cap: int = 400) -> str:
    """One block as a transcript entry: ``[Author]: text`` (tool calls with their name).

    Only the entry's first line starts with a role label: every further line of the
    content (any line break ``str.splitlines`` knows) is indented by
    :data:`CONTINUATION`, and the author is reduced to word characters, so no block can
    write a line that reads as another author's message. What a tool produced reads as
    ``[Tool]``, an opaque provider item too (a server tool's result, a shell's output):
    never as the user's or the assistant's words."""
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
    author = "tool" if tool_output(block) else block.author or spec.default_author or "system"
    author = _LABEL_UNSAFE.sub("_", author)
    first, *rest = text.splitlines() or [""]
    lines = [f"[{author.capitalize()}]: {first}"]
    lines += [f"{CONTINUATION}{line}" if line else "" for line in rest]
    return "\n".join(lines)


def non_header(blocks: Sequence[Block]) -> list[Block]:
    """The blocks that carry content (turn headers and thinking/reasoning dropped: those
    are the provider's own, never summarized)."""
    return [b for b in blocks if block_type(b.type).render not in ("header", "reasoning")]
