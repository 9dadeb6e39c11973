"""The rendered context: what one model call sees, and its provider payloads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, overload

import attrs

from timeline._compaction import CompactionStats
from timeline._formats import (
    CacheTTLs,
    anthropic_tools,
    cache_control,
    chat_tools,
    prompt_cache_key_for,
    responses_tools,
    to_anthropic,
    to_document,
    to_openai,
    to_openai_responses,
    to_text,
    tools_ttl,
)
from timeline._model import Block, PolicyError, ToolSpec

__all__ = ["RenderedContext", "draw_pages_with"]

_PAGE: list[Callable[..., str]] = []
"""The HTML page's drawing function. The page (``timeline._html``) sits above the render
pipeline and registers itself when ``timeline`` is imported, so the pipeline never
imports it."""


def draw_pages_with(draw: Callable[..., str]) -> None:
    """Make ``draw(view, title=...)`` the function behind :meth:`RenderedContext.to_html`."""
    _PAGE[:] = [draw]


@attrs.frozen
class RenderedContext:
    """The result of :meth:`Timeline.render`.

    ``blocks`` are the visible blocks (latest summary first when there is one, pinned
    blocks right after it, then the stream, then the volatile tail); ``cache_points``
    index ``blocks`` and never fall on the tail; ``tokens`` estimates the whole prompt.
    """

    system: str
    blocks: tuple[Block, ...]
    cache_points: tuple[int, ...]
    count_tokens: Callable[[], int] = attrs.field(repr=False, eq=False)
    """Computes :attr:`tokens` (exact counting is deferred until someone asks)."""
    budget: int | None
    stable_count: int
    compaction: CompactionStats | None = None
    truncated_paths: tuple[str, ...] = ()
    system_cached: bool = True
    system_tokens: int = 0
    """Tokens of the system prompt alone (0 when it is empty)."""
    framing_tokens: int = 0
    """Tokens of the prompt's framing, whatever its system prompt and blocks (the
    message a payload opening on the assistant side gets), with the synthetic results of
    calls still waiting for theirs."""
    tools: tuple[ToolSpec, ...] = ()
    """The tool definitions this request sends (every payload method includes them)."""
    tools_tokens: int = 0
    """Tokens of the tool definitions, the provider's tool-use instructions included."""
    tools_cached: bool = True
    """The last tool carries a cache checkpoint in :meth:`to_anthropic`."""
    count_block_tokens: Callable[[], tuple[int, ...]] | None = attrs.field(
        default=None, repr=False, eq=False
    )
    """Computes :attr:`block_tokens`."""
    compaction_trigger: int | None = None
    """Prompt tokens at which the policy compacts (None without a budget)."""
    conversation_id: str = ""
    """The conversation rendered (its :attr:`prompt_cache_key` derives from it)."""
    native: Callable[[], dict[str, Any]] | None = attrs.field(default=None, repr=False, eq=False)
    """Builds :attr:`native_params` (None: the policy has no native compaction)."""
    recalled: tuple[Block, ...] = ()
    """The archived blocks recall brought back for this render (shown, whole or by their
    matching lines, in the ``conv.recalled`` block that opens the tail); empty without
    recall or when nothing matched."""
    _tokens: list[int] = attrs.field(factory=list, init=False, repr=False, eq=False)
    _block_tokens: list[tuple[int, ...]] = attrs.field(
        factory=list, init=False, repr=False, eq=False
    )

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens: system + framing + tools + blocks (as the longest
        layout shows them, labels included), calibrated by the last usage report. Never below any
        payload's :func:`~timeline._tokens.payload.payload_tokens`; within budget whenever
        the policy has one."""
        if not self._tokens:
            self._tokens.append(self.count_tokens())
        return self._tokens[0]

    @property
    def block_tokens(self) -> tuple[int, ...]:
        """Prompt tokens of each of :attr:`blocks` as rendered (truncated copies at their
        truncated size). ``system_tokens + framing_tokens + tools_tokens +
        sum(block_tokens)`` plus the calibration from the last usage report is
        :attr:`tokens`."""
        if not self._block_tokens:
            fn = self.count_block_tokens
            self._block_tokens.append(fn() if fn is not None else (0,) * len(self.blocks))
        return self._block_tokens[0]

    @property
    def tail(self) -> tuple[Block, ...]:
        """The volatile blocks passed for this render only."""
        return self.blocks[self.stable_count :]

    @property
    def prompt_cache_key(self) -> str:
        """OpenAI's ``prompt_cache_key`` for this conversation: stable across its requests
        (and processes), so they are routed to the same cache; a digest of the
        conversation id, never the id itself."""
        return prompt_cache_key_for(self.conversation_id)

    @property
    def native_params(self) -> dict[str, Any]:
        """The request's keyword arguments that ask the provider to compact, under the
        policy's ``native`` mode (``{}`` without one): Anthropic ``{"betas": [...],
        "context_management": {...}}``, Responses ``{"context_management": [...]}``
        (a new dict at every call)."""
        return {} if self.native is None else self.native()

    def to_anthropic(self, *, cache_ttl: CacheTTLs = None) -> dict[str, Any]:
        """Messages API ``{tools?, system, messages}`` with ``cache_control`` on
        checkpoints, and on the last tool when the request has tools (Anthropic caches
        tools, system and messages as one prefix, tools first).

        ``cache_ttl``: ``"5m"`` or ``"1h"`` on every breakpoint, or per role
        (``{"tools": "1h", "system": "1h", "messages": "1h", "tail": "5m"}``: ``"tail"``
        is the last breakpoint, which moves at every request); None sends no ``ttl`` (the
        provider's 5 minutes). A breakpoint never gets a shorter TTL than a later one
        (Anthropic's rule for mixed TTLs).

        Built from the blocks at every call, and the caller's own: every dict and list in
        it is new, so changing it changes no other payload."""
        payload = to_anthropic(
            self.system, self.blocks, self.cache_points, self.system_cached, cache_ttl
        )
        return self._with_tools(payload, cache_ttl)

    def _with_tools(self, payload: dict[str, Any], cache_ttl: CacheTTLs) -> dict[str, Any]:
        """An Anthropic ``payload`` with this request's tools first (none: as it is)."""
        if not self.tools:
            return payload
        cached = self.system_cached and bool(self.system.strip())
        ttl = tools_ttl(cache_ttl, self.cache_points, cached)
        mark = cache_control(ttl) if self.tools_cached else None
        return {"tools": anthropic_tools(self.tools, mark), **payload}

    @overload
    def to_openai(self) -> list[dict[str, Any]] | dict[str, Any]: ...
    @overload
    def to_openai(self, *, prompt_cache_key: str | Literal[True]) -> dict[str, Any]: ...
    def to_openai(
        self, *, prompt_cache_key: str | bool | None = None
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """Chat Completions ``messages`` (the caller's own: every dict and list new).

        When the request has more than its messages, the request's keyword arguments
        instead: ``{"messages": [...], "tools": [...]}`` when the render had tools, with
        ``"prompt_cache_key"`` when asked (a key, or True for this conversation's stable
        :attr:`prompt_cache_key`)."""
        messages = to_openai(self.system, self.blocks)
        key = self._cache_key(prompt_cache_key)
        if key is None and not self.tools:
            return messages
        request: dict[str, Any] = {"messages": messages}
        if self.tools:
            request["tools"] = chat_tools(self.tools)
        if key is not None:
            request["prompt_cache_key"] = key
        return request

    @overload
    def to_openai_responses(self) -> list[dict[str, Any]] | dict[str, Any]: ...
    @overload
    def to_openai_responses(self, *, prompt_cache_key: str | Literal[True]) -> dict[str, Any]: ...
    def to_openai_responses(
        self, *, prompt_cache_key: str | bool | None = None
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """Responses API ``input`` items (the caller's own: every dict and list new).

        As :meth:`to_openai`, the request's keyword arguments when it has more than its
        input: ``{"input": [...], "tools": [...], "prompt_cache_key": ...}``."""
        items = to_openai_responses(self.system, self.blocks)
        key = self._cache_key(prompt_cache_key)
        if key is None and not self.tools:
            return items
        request: dict[str, Any] = {"input": items}
        if self.tools:
            request["tools"] = responses_tools(self.tools)
        if key is not None:
            request["prompt_cache_key"] = key
        return request

    def _cache_key(self, asked: str | bool | None) -> str | None:
        if asked is None or asked is False:
            return None
        if asked is True:
            return self.prompt_cache_key
        if not isinstance(asked, str) or not asked.strip():
            raise PolicyError(f"prompt_cache_key: must be a non-empty str or True, got {asked!r}")
        return asked

    def to_text(self) -> str:
        """The document rendering as one string (the text of the prompt; tool definitions
        are the provider payloads' business)."""
        return to_text(self.system, self.blocks)

    def to_html(self, title: str = "") -> str:
        """One self-contained static HTML page of this prompt (for notebooks and files):
        blocks grouped by turn, coloured by type and sized by tokens."""
        (draw,) = _PAGE
        return draw(self, title=title)

    def to_document(self) -> dict[str, Any]:
        """The document layout: the whole stream as one user message of parts, as an
        Anthropic request (its tools as :meth:`to_anthropic` sends them)."""
        payload = to_document(self.system, self.blocks, self.cache_points, self.system_cached)
        return self._with_tools(payload, None)
