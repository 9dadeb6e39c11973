"""Anthropic ``Message`` responses in: text (with its citations), ``tool_use`` calls,
thinking blocks, server tool use and results, MCP, compaction and any content type the
library does not model (kept exactly), usage and stop reason, as a ``ModelReply``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from timeline._formats._reply import ToolCallRequest, Usage, as_dict, read_usage
from timeline._model import (
    Block,
    InvalidBlockError,
    anthropic_compaction,
    anthropic_thinking,
    provider_block,
    reasoning_provider,
    with_native,
)
from timeline._model import constructors as B

__all__ = ["reply_from_anthropic"]

R = TypeVar("R")
_USER_SIDE: Final = frozenset({"container_upload"})


def _text(part: Mapping[str, Any]) -> Block:
    block = B.assistant_completion(str(part.get("text", "")))
    if part.get("citations"):  # the cited text goes back with its citations
        block = with_native(block, "anthropic", dict(part))
    return block


def _content(part: Mapping[str, Any], i: int) -> Block:
    """The block for one content part that is not a tool call."""
    kind = part.get("type")
    try:
        if kind == "text":
            return _text(part)
        if kind in ("thinking", "redacted_thinking"):
            return anthropic_thinking(part)
        if kind == "compaction":
            return anthropic_compaction(part)
        return provider_block("anthropic", part, side="user" if kind in _USER_SIDE else "assistant")
    except InvalidBlockError as exc:
        raise InvalidBlockError(f"content[{i}]: {exc}") from exc


def reply_from_anthropic(message: Any, make: Callable[..., R]) -> R:
    """A ``ModelReply`` for an ``anthropic.types.Message`` (or a beta ``BetaMessage``, or
    their dict form).

    ``content`` holds every block but the tool calls in the order Anthropic sent them
    (thinking, each text block, server tool use and its result, MCP, compaction...);
    ``text`` joins the text blocks with blank lines; ``reasoning`` holds the thinking
    blocks; prompt tokens include cache reads and writes."""
    data = as_dict(message, "Message")
    content: list[Block] = []
    calls: list[ToolCallRequest] = []
    for i, part in enumerate(data.get("content") or []):
        if not isinstance(part, Mapping):
            raise InvalidBlockError(f"content[{i}]: expected an object")
        if part.get("type") == "tool_use":
            calls.append(
                ToolCallRequest(str(part["name"]), dict(part.get("input") or {}), str(part["id"]))
            )
        else:
            content.append(_content(part, i))
    usage = data.get("usage")
    texts = [b.text for b in content if b.type == "assistant.completion" and b.text]
    return make(
        text="\n\n".join(texts),
        tool_calls=tuple(calls),
        usage=read_usage(usage) if isinstance(usage, Mapping) else Usage(),
        finish_reason=str(data.get("stop_reason") or "stop"),
        reasoning=tuple(b for b in content if reasoning_provider(b) is not None),
        content=tuple(content),
    )
