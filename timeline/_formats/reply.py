"""Model replies as blocks: what a reply adds to a timeline, for loops of your own.

``ModelReply.from_anthropic`` / ``from_openai_chat`` / ``from_openai_responses`` build
the reply from an SDK response (see ``docs/providers.md``).
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from timeline._formats._reply import ToolCallRequest, Usage, read_usage
from timeline._formats.anthropic_reply import reply_from_anthropic
from timeline._formats.openai_reply import reply_from_chat, reply_from_responses
from timeline._model import Block, InvalidBlockError, check_json, no_json_constant
from timeline._model import constructors as B

__all__ = [
    "RAW_PARAMS",
    "ModelReply",
    "ToolCallRequest",
    "Usage",
    "call_params",
    "content_blocks",
    "read_usage",
    "reply_blocks",
]

RAW_PARAMS = "_raw"
"""The key under which a call's arguments that are not a JSON object are kept whole."""


def call_params(arguments: Any) -> tuple[dict[str, Any], bool]:
    """A tool call's params from the arguments a provider sent (a JSON text, or the
    decoded value), and whether they were a JSON object. Models do write broken JSON (a
    cut-off object, a list, ``NaN``, nesting too deep): such arguments are kept whole as
    ``{"_raw": arguments}``, never dropped, and the call is still a call (its result can
    say the arguments were bad). ``None`` and ``""`` are no arguments: ``{}``."""
    params: Any = arguments
    if arguments is None or arguments == "":
        return {}, True
    if isinstance(arguments, str):
        try:
            params = json.loads(arguments, parse_constant=no_json_constant)
        except (ValueError, RecursionError):
            return {RAW_PARAMS: arguments}, False
    if not isinstance(params, dict):
        return {RAW_PARAMS: arguments}, False
    try:  # an escaped lone surrogate, an integer past 64 bits: a block cannot hold them
        check_json(params, "params")
    except InvalidBlockError:
        return {RAW_PARAMS: arguments}, False
    return params, True


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
    kept as ``{"_raw": text}``: :func:`call_params`)."""
    out = content_blocks(reply)
    for call in reply.tool_calls:
        params, _ = call_params(call.params)
        out.append(B.tool_call(call.name, params, call_id=call.call_id))
    return out
