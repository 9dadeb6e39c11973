"""OpenAI responses in: a Chat Completions ``ChatCompletion`` or a Responses ``Response``
as a ``ModelReply`` (text, function calls, reasoning items kept exactly, usage, finish
reason)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from timeline.formats._reply import ToolCallRequest, Usage, as_dict, get_int
from timeline.model.block import Block
from timeline.model.errors import InvalidBlockError
from timeline.model.reasoning import openai_reasoning

__all__ = ["reply_from_chat", "reply_from_responses"]

R = TypeVar("R")


def reply_from_chat(completion: Any, make: Callable[..., R]) -> R:
    """A ``ModelReply`` for an ``openai.types.chat.ChatCompletion`` (its first choice).
    A refusal is kept as the text."""
    data = as_dict(completion, "ChatCompletion")
    choices = data.get("choices") or []
    if not choices:
        raise InvalidBlockError("the ChatCompletion has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = tuple(
        ToolCallRequest(
            str(call["function"]["name"]), str(call["function"].get("arguments") or ""), call["id"]
        )
        for call in message.get("tool_calls") or []
        if call.get("type", "function") == "function"
    )
    usage = data.get("usage")
    return make(
        text=str(message.get("content") or message.get("refusal") or ""),
        tool_calls=calls,
        usage=Usage(get_int(usage, "prompt_tokens"), get_int(usage, "completion_tokens")),
        finish_reason=str(choice.get("finish_reason") or "stop"),
    )


def reply_from_responses(response: Any, make: Callable[..., R]) -> R:
    """A ``ModelReply`` for an ``openai.types.responses.Response``.

    ``message`` items give the text (``output_text`` and ``refusal`` parts),
    ``function_call`` items the calls, ``reasoning`` items reasoning blocks (request
    ``include=["reasoning.encrypted_content"]`` to get what a stateless request needs).
    The finish reason is the ``incomplete_details.reason`` of an incomplete response,
    else ``"tool_calls"`` or ``"stop"``. Other item types raise
    :class:`~timeline.model.errors.InvalidBlockError` rather than vanish."""
    data = as_dict(response, "Response")
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    reasoning: list[Block] = []
    for i, item in enumerate(data.get("output") or []):
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                texts.append(str(part.get("text") or part.get("refusal") or ""))
        elif kind == "function_call":
            calls.append(
                ToolCallRequest(
                    str(item["name"]), str(item.get("arguments") or ""), item["call_id"]
                )
            )
        elif kind == "reasoning":
            reasoning.append(openai_reasoning(item))
        else:
            raise InvalidBlockError(f"output[{i}]: no block type for Responses {kind!r} items")
    usage = data.get("usage")
    if data.get("status") == "incomplete":
        finish = str((data.get("incomplete_details") or {}).get("reason") or "incomplete")
    else:
        finish = "tool_calls" if calls else "stop"
    return make(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(get_int(usage, "input_tokens"), get_int(usage, "output_tokens")),
        finish_reason=finish,
        reasoning=tuple(reasoning),
    )
