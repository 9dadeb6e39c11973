"""Model replies as blocks: what a reply adds to a timeline, for loops of your own.

``ModelReply.from_anthropic`` / ``from_openai_chat`` / ``from_openai_responses`` build
the reply from an SDK response (see ``docs/providers.md``).
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from timeline.formats._reply import ToolCallRequest, Usage
from timeline.formats.anthropic_reply import reply_from_anthropic
from timeline.formats.openai_reply import reply_from_chat, reply_from_responses
from timeline.model import constructors as B
from timeline.model.block import Block

__all__ = ["ModelReply", "ToolCallRequest", "Usage", "content_blocks", "reply_blocks"]


@attrs.frozen
class ModelReply:
    """What a model call returned. ``reasoning`` holds the provider's thinking/reasoning
    blocks (appended before the text and calls). ``content``, when set (the SDK
    converters set it), holds every block of the reply but the tool calls, in the order
    the provider sent them: thinking, each text (its citations kept), server tool use and
    results, MCP, compaction, anything not modelled (kept exactly); it is what a reply
    adds before its calls. Build one from an SDK response with :meth:`from_anthropic`,
    :meth:`from_openai_chat` or :meth:`from_openai_responses`."""

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: Usage | None = None
    finish_reason: str = "stop"
    reasoning: tuple[Block, ...] = ()
    content: tuple[Block, ...] = ()

    @classmethod
    def from_anthropic(cls, message: Any) -> ModelReply:
        """From an ``anthropic`` ``Message`` (or its dict form)."""
        return reply_from_anthropic(message, cls)

    @classmethod
    def from_openai_chat(cls, completion: Any) -> ModelReply:
        """From an ``openai`` ``ChatCompletion`` (or its dict form)."""
        return reply_from_chat(completion, cls)

    @classmethod
    def from_openai_responses(cls, response: Any) -> ModelReply:
        """From an ``openai`` Responses ``Response`` (or its dict form)."""
        return reply_from_responses(response, cls)


def content_blocks(reply: ModelReply) -> list[Block]:
    """What a reply adds before its tool calls: its ``content`` when set, else its
    thinking/reasoning and its text."""
    if reply.content:
        return list(reply.content)
    out = list(reply.reasoning)
    if reply.text.strip():
        out.append(B.assistant_completion(reply.text))
    return out


def reply_blocks(reply: ModelReply) -> list[Block]:
    """The blocks a reply adds to a timeline, in order: its content
    (:func:`content_blocks`), then the tool calls (params that are not a JSON object are
    kept as ``{"_raw": text}``)."""
    out = content_blocks(reply)
    for call in reply.tool_calls:
        params: Any = call.params
        if isinstance(params, str):
            try:
                params = json.loads(params or "{}")
            except ValueError:
                params = {"_raw": call.params}
        if not isinstance(params, dict):
            params = {"_raw": call.params}
        out.append(B.tool_call(call.name, params, call_id=call.call_id))
    return out
