"""Cache breaks: a request that read less from the provider's prompt cache than the
request before it left there, and the likely cause.

The previous request left its prefix cached up to its last checkpoint (Anthropic: the
``cache_control`` breakpoints; OpenAI, which caches every prompt on its own: its whole
stable prefix). The next request should read that much back when it repeats that
prefix within the cache's lifetime. When the provider reports reading clearly less
(:data:`TOLERANCE`), the break is explained by the first of:

1. the prompt changed before that point: the first block that differs (a compaction's
   summary, a clearing pass's placeholders, a hidden block, an edit), the system
   prompt or the tool definitions (which come first in the cached prefix);
2. the previous prefix was under the provider's minimum cacheable length, so it was
   never written (:func:`min_cacheable_tokens`);
3. longer than the cache's lifetime passed between the two requests;
4. nothing the timeline can see: the model, the request's cache settings or the
   provider's routing changed (or tools the timeline was not given).

Token figures are the provider's: ours are scaled by the provider's count of the whole
prompt against ours.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Final, Protocol

import attrs
import msgspec

from timeline._model import CONV_RANGE_SUMMARY, Block, CacheBreak, ToolSpec

__all__ = ["TOLERANCE", "Sent", "SentRequest", "find_break", "min_cacheable_tokens"]

TOLERANCE: Final = 0.1
"""A read more than this share short of the expected one (and by at least
:data:`TOLERANCE_TOKENS`) is a break: token counts differ between tokenizers."""
TOLERANCE_TOKENS: Final = 128
"""OpenAI caches in steps of 128 tokens."""

_MINIMUMS: Final = (
    ("claude-opus-4-5", 4_096),
    ("claude-opus-4-6", 4_096),
    ("claude-haiku-4-5", 4_096),
    ("claude-sonnet-4-6", 2_048),
    ("claude-3-5-haiku", 2_048),
    ("claude-3-haiku", 2_048),
)


def min_cacheable_tokens(model: str | None) -> int:
    """The provider's minimum cacheable prompt length for ``model`` (1,024 tokens, the
    usual one, when unknown)."""
    name = (model or "").rsplit("/", 1)[-1].lower()
    for prefix, tokens in _MINIMUMS:
        if name.startswith(prefix):
            return tokens
    return 1_024


class SentRequest(Protocol):
    """What a rendered request showed (:class:`~timeline._render.context.RenderedContext`
    has all of it)."""

    @property
    def system(self) -> str: ...
    @property
    def system_cached(self) -> bool: ...
    @property
    def system_tokens(self) -> int: ...
    @property
    def framing_tokens(self) -> int: ...
    @property
    def tools(self) -> tuple[ToolSpec, ...]: ...
    @property
    def tools_tokens(self) -> int: ...
    @property
    def blocks(self) -> tuple[Block, ...]: ...
    @property
    def block_tokens(self) -> tuple[int, ...]: ...
    @property
    def cache_points(self) -> tuple[int, ...]: ...
    @property
    def stable_count(self) -> int: ...


@attrs.frozen(eq=False)
class Sent:
    """A request whose usage was recorded, and when (seconds on the timeline's clock)."""

    request: SentRequest
    at: float


def _cached_prefix(request: SentRequest, breakpoints: bool) -> tuple[int, int]:
    """How far ``request`` left the cache filled: (the number of leading blocks, their
    tokens with the tool definitions, the system prompt and the framing). With ``breakpoints`` up to
    its last checkpoint,
    else (OpenAI) its whole stable prefix."""
    costs = request.block_tokens
    if breakpoints:
        points = request.cache_points
        if points:
            end = points[-1] + 1
        elif request.system and request.system_cached:
            end = 0
        else:
            return 0, 0
    else:
        end = request.stable_count
    fixed = request.tools_tokens + request.system_tokens + request.framing_tokens
    return end, fixed + sum(costs[:end])


def _first_difference(previous: SentRequest, current: SentRequest, end: int) -> int | None:
    """The first of the ``end`` leading blocks of ``previous`` that ``current`` does not
    repeat (-2: the tool definitions differ, -1: the system prompt; None: all repeated)."""
    if previous.tools != current.tools:
        return -2
    if previous.system != current.system:
        return -1
    now = current.blocks[: current.stable_count]
    for i, block in enumerate(previous.blocks[:end]):
        if i >= len(now):
            return i
        other = now[i]
        if other is not block and other != block:
            return i
    return None


def _changed(
    current: SentRequest, at: int, cleared: Container[str]
) -> tuple[str, str | None, bool]:
    """What changed at block ``at`` of ``current``: a sentence, its path, and whether a
    compaction (a summary or a clearing pass of the library: a block in ``cleared``)
    did it."""
    if at < 0:
        what = "the tool definitions" if at == -2 else "the system prompt"
        return f"{what} changed", None, False
    blocks = current.blocks[: current.stable_count]
    if at >= len(blocks):
        return f"the prompt ends before block {at}", None, False
    block = blocks[at]
    if block.type == CONV_RANGE_SUMMARY:
        return f"a compaction inserted its summary at block {at}", block.path, True
    if block.id in cleared:
        return f"block {at} ({block.path}) was cleared to a placeholder", block.path, True
    if block.hidden:
        return f"block {at} ({block.path}) was hidden", block.path, False
    return f"block {at} ({block.path}) differs from the previous request's", block.path, False


def _cause(expected: int, elapsed: float, ttl_seconds: float, min_tokens: int) -> tuple[str, str]:
    """Why an unchanged prefix was not read back: the cause and a sentence."""
    if expected < min_tokens:
        cause = "below_minimum"
        detail = (
            f"the previous prompt's cached prefix ({expected:,} tokens) is under the "
            f"provider's minimum of {min_tokens:,}, so it was never written"
        )
    elif elapsed > ttl_seconds:
        cause = "ttl_expired"
        detail = (
            f"{elapsed:,.0f} s passed since the previous request, more than the cache's "
            f"lifetime of {ttl_seconds:,.0f} s"
        )
    else:
        cause = "unknown"
        detail = (
            "the prefix was unchanged and within the cache's lifetime: the tools, the "
            "model, the request's cache settings or the provider's routing may have changed"
        )
    return cause, detail


def find_break(
    previous: Sent,
    current: Sent,
    *,
    read: int,
    written: int | None,
    scale: float,
    ttl_seconds: float,
    min_tokens: int,
    ts: str,
    cleared: Container[str] = frozenset(),
) -> CacheBreak | None:
    """The cache break of ``current`` after ``previous``, or None when the provider read
    about what ``previous`` left cached. ``read``/``written`` are the provider's cache
    figures for ``current`` (``written`` None: the provider caches on its own, OpenAI);
    ``scale`` converts our token counts to the provider's; ``cleared``: the ids of the
    blocks the library's clearing (or offload) shows by a placeholder."""
    breakpoints = written is not None
    end, tokens = _cached_prefix(previous.request, breakpoints)
    expected = round(tokens * scale)
    if expected <= 0 or read >= expected - max(TOLERANCE * expected, TOLERANCE_TOKENS):
        return None
    found = CacheBreak(
        ts=ts,
        cause="unknown",
        detail="",
        expected_tokens=expected,
        read_tokens=read,
        written_tokens=written,
    )
    at = _first_difference(previous.request, current.request, end)
    if at is not None:
        detail, path, compaction = _changed(current.request, at, cleared)
        return msgspec.structs.replace(
            found,
            cause="prefix_changed",
            detail=f"the prefix changed: {detail}",
            block_index=None if at < 0 else at,
            path=path,
            compaction=compaction,
        )
    cause, detail = _cause(expected, current.at - previous.at, ttl_seconds, min_tokens)
    return msgspec.structs.replace(found, cause=cause, detail=detail)
