"""OpenAI responses in: a Chat Completions ``ChatCompletion`` or a Responses ``Response``
as a ``ModelReply`` (text, function calls, audio replies, reasoning and every item the
library does not model kept exactly, usage, finish reason)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from timeline._formats._reply import ToolCallRequest, Usage, as_dict, read_usage
from timeline._model import (
    Block,
    InvalidBlockError,
    chat_audio_reply,
    openai_compaction,
    openai_reasoning,
    provider_block,
    with_native,
)
from timeline._model import constructors as B

__all__ = ["reply_from_chat", "reply_from_responses"]

R = TypeVar("R")


def _chat_call(call: Mapping[str, Any]) -> ToolCallRequest:
    kind = call.get("type", "function")
    body = call.get(str(kind)) or {}
    if kind == "function":
        return ToolCallRequest(str(body["name"]), str(body.get("arguments") or ""), call["id"])
    params = {k: v for k, v in body.items() if k != "name"}  # a custom tool's input
    return ToolCallRequest(str(body.get("name") or kind), params, call["id"])


def reply_from_chat(completion: Any, make: Callable[..., R]) -> R:
    """A ``ModelReply`` for an ``openai.types.chat.ChatCompletion`` (its first choice).
    A refusal is kept as the text; an audio reply becomes a Chat-only block holding its
    id (what a later request sends back) with its transcript as text."""
    data = as_dict(completion, "ChatCompletion")
    choices = data.get("choices") or []
    if not choices:
        raise InvalidBlockError("the ChatCompletion has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = tuple(_chat_call(call) for call in message.get("tool_calls") or [])
    text = str(message.get("content") or message.get("refusal") or "")
    content: list[Block] = [B.assistant_completion(text)] if text else []
    audio = message.get("audio")
    if isinstance(audio, Mapping) and isinstance(audio.get("id"), str):
        content.append(chat_audio_reply(audio))
    usage = data.get("usage")
    return make(
        text=text,
        tool_calls=calls,
        usage=read_usage(usage) if isinstance(usage, Mapping) else Usage(),
        finish_reason=str(choice.get("finish_reason") or "stop"),
        content=tuple(content),
    )


def _message(item: Mapping[str, Any]) -> Block:
    texts = [
        str(part.get("text") or part.get("refusal") or "")
        for part in item.get("content") or []
        if isinstance(part, Mapping)
    ]
    block = B.assistant_completion("".join(texts))
    annotated = any(
        isinstance(p, Mapping) and (p.get("annotations") or p.get("logprobs"))
        for p in item.get("content") or []
    )
    return with_native(block, "responses", dict(item)) if annotated else block


def _item(item: Mapping[str, Any], i: int) -> Block:
    """The block for one output item that is not a function call."""
    kind = item.get("type")
    try:
        if kind == "message":
            return _message(item)
        if kind == "reasoning":
            return openai_reasoning(item)
        if kind == "compaction":
            return openai_compaction(item)
        return provider_block("responses", item)
    except InvalidBlockError as exc:
        raise InvalidBlockError(f"output[{i}]: {exc}") from exc


def reply_from_responses(response: Any, make: Callable[..., R]) -> R:
    """A ``ModelReply`` for an ``openai.types.responses.Response``.

    ``content`` holds every output item but the function calls, in order: messages as
    text (kept exactly when their text carries annotations), ``reasoning`` items,
    compaction items and every other item (web search, file search, code interpreter,
    image generation, computer, MCP, shell, custom tool calls...) kept exactly; request
    ``include=["reasoning.encrypted_content"]`` for what a stateless request needs. The
    finish reason is the ``incomplete_details.reason`` of an incomplete response, else
    ``"tool_calls"`` or ``"stop"``."""
    data = as_dict(response, "Response")
    content: list[Block] = []
    calls: list[ToolCallRequest] = []
    for i, item in enumerate(data.get("output") or []):
        if not isinstance(item, Mapping):
            raise InvalidBlockError(f"output[{i}]: expected an object")
        if item.get("type") == "function_call":
            calls.append(
                ToolCallRequest(
                    str(item["name"]), str(item.get("arguments") or ""), item["call_id"]
                )
            )
        else:
            content.append(_item(item, i))
    usage = data.get("usage")
    if data.get("status") == "incomplete":
        finish = str((data.get("incomplete_details") or {}).get("reason") or "incomplete")
    else:
        finish = "tool_calls" if calls else "stop"
    return make(
        text="".join(b.text for b in content if b.type == "assistant.completion"),
        tool_calls=tuple(calls),
        usage=read_usage(usage) if isinstance(usage, Mapping) else Usage(),
        finish_reason=finish,
        reasoning=tuple(b for b in content if b.type == "assistant.reasoning"),
        content=tuple(b for b in content if b.text or b.type != "assistant.completion"),
    )
