"""Anthropic ``Message`` responses in: text, ``tool_use`` calls, thinking blocks (kept
exactly, to send back with the calls), usage and stop reason, as a ``ModelReply``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from timeline.formats._reply import ToolCallRequest, Usage, as_dict, get_int
from timeline.model.block import Block
from timeline.model.errors import InvalidBlockError
from timeline.model.reasoning import anthropic_thinking

__all__ = ["reply_from_anthropic"]

R = TypeVar("R")


def reply_from_anthropic(message: Any, make: Callable[..., R]) -> R:
    """A ``ModelReply`` for an ``anthropic.types.Message`` (or its dict form).

    Text blocks are joined with blank lines; ``thinking``/``redacted_thinking`` become
    reasoning blocks; prompt tokens include cache reads and writes. Content types the
    timeline has no block for (server tool results, citations...) raise
    :class:`~timeline.model.errors.InvalidBlockError` rather than vanish."""
    data = as_dict(message, "Message")
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    reasoning: list[Block] = []
    for i, part in enumerate(data.get("content") or []):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                ToolCallRequest(str(part["name"]), dict(part.get("input") or {}), str(part["id"]))
            )
        elif kind in ("thinking", "redacted_thinking"):
            reasoning.append(anthropic_thinking(part))
        else:
            raise InvalidBlockError(f"content[{i}]: no block type for Anthropic {kind!r} content")
    usage = data.get("usage")
    return make(
        text="\n\n".join(t for t in texts if t),
        tool_calls=tuple(calls),
        usage=Usage(
            get_int(
                usage,
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
            ),
            get_int(usage, "output_tokens"),
        ),
        finish_reason=str(data.get("stop_reason") or "stop"),
        reasoning=tuple(reasoning),
    )
