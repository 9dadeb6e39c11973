"""OpenAI payloads: Chat Completions messages and Responses API input items.

Each plan message maps to its items through a pure function (:func:`chat_items`,
:func:`responses_items`), so a caller can build and reuse them one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from timeline.formats._plan import Message, Part, b64, plan_messages, result_items
from timeline.model.block import Block
from timeline.model.names import provider_call_id, provider_tool_name
from timeline.model.reasoning import reasoning_item

__all__ = [
    "chat_items",
    "chat_system",
    "responses_items",
    "responses_system",
    "to_openai",
    "to_openai_responses",
]


def _data_url(b: Block) -> str:
    return f"data:{b.mime};base64,{b64(b.data or b'')}"


def _result_text(part: Part) -> str:
    return "\n".join(item for item in result_items(part) if isinstance(item, str))


def _result_images(part: Part) -> list[Block]:
    return [item for item in result_items(part) if not isinstance(item, str)]


def _filename(b: Block) -> str:
    return str(b.meta.get("name") or "attachment.pdf")


# -- Chat Completions ---------------------------------------------------------------


def _chat_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        return {"type": "image_url", "image_url": {"url": _data_url(b)}}
    if part.kind == "document":
        return {"type": "file", "file": {"filename": _filename(b), "file_data": _data_url(b)}}
    return {"type": "text", "text": part.text}


def _chat_assistant(message: Message) -> dict[str, Any]:
    texts = [p.text for p in message.parts if p.kind == "text"]
    calls = [
        {
            "id": provider_call_id(p.block.call_id or ""),
            "type": "function",
            "function": {
                "name": provider_tool_name(p.block.tool_id or ""),
                "arguments": p.block.text or "{}",
            },
        }
        for p in message.parts
        if p.kind == "tool_call"
    ]
    item: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        item["tool_calls"] = calls
    return item


def chat_items(message: Message) -> list[dict[str, Any]]:
    """The Chat Completions messages for one plan message: an assistant message, or the
    ``tool`` messages answering the previous calls then a user message. Chat's tool
    messages hold text only, so images a tool returned follow in that user message."""
    if message.role == "assistant":
        return [_chat_assistant(message)]
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for p in message.parts:
        if p.kind == "tool_result":
            call_id = provider_call_id(p.block.call_id or "")
            out.append({"role": "tool", "tool_call_id": call_id, "content": _result_text(p)})
            for img in _result_images(p):
                images.append({"type": "text", "text": f"[image returned by call {call_id}]"})
                images.append({"type": "image_url", "image_url": {"url": _data_url(img)}})
    rest = images + [_chat_part(p) for p in message.parts if p.kind != "tool_result"]
    if rest:
        out.append({"role": "user", "content": rest})
    return out


def chat_system(system: str) -> list[dict[str, Any]]:
    """The system message Chat Completions messages start with (none for a blank one)."""
    return [{"role": "system", "content": system}] if system.strip() else []


def to_openai(system: str, blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Chat Completions ``messages``: assistant ``tool_calls`` then one ``tool`` message per
    call, in call order."""
    out = chat_system(system)
    for message in plan_messages(blocks):
        out += chat_items(message)
    return out


# -- Responses ----------------------------------------------------------------------


def _responses_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        return {"type": "input_image", "image_url": _data_url(b), "detail": "auto"}
    if part.kind == "document":
        return {"type": "input_file", "filename": _filename(b), "file_data": _data_url(b)}
    return {"type": "input_text", "text": part.text}


def _responses_output(part: Part) -> str | list[dict[str, Any]]:
    items = result_items(part)
    if all(isinstance(item, str) for item in items):
        return "\n".join(str(item) for item in items)
    return [
        {"type": "input_text", "text": item}
        if isinstance(item, str)
        else {"type": "input_image", "image_url": _data_url(item), "detail": "auto"}
        for item in items
    ]


def _assistant_text(texts: list[str]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": "\n\n".join(texts)}


def responses_items(message: Message) -> list[dict[str, Any]]:
    """The Responses ``input`` items for one plan message: assistant text as an easy
    input message (string content), ``function_call`` items, ``function_call_output``
    items (images a tool returned included), then a user message."""
    out: list[dict[str, Any]] = []
    if message.role == "assistant":
        texts: list[str] = []
        for p in message.parts:
            if p.kind == "reasoning":
                if texts:
                    out.append(_assistant_text(texts))
                    texts = []
                out.append(reasoning_item(p.block) or {})
            elif p.kind == "tool_call":
                if texts:
                    out.append(_assistant_text(texts))
                    texts = []
                out.append(
                    {
                        "type": "function_call",
                        "call_id": provider_call_id(p.block.call_id or ""),
                        "name": provider_tool_name(p.block.tool_id or ""),
                        "arguments": p.block.text or "{}",
                    }
                )
            else:
                texts.append(p.text)
        if texts:
            out.append(_assistant_text(texts))
        return out
    for p in message.parts:
        if p.kind == "tool_result":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": provider_call_id(p.block.call_id or ""),
                    "output": _responses_output(p),
                }
            )
    rest = [_responses_part(p) for p in message.parts if p.kind != "tool_result"]
    if rest:
        out.append({"type": "message", "role": "user", "content": rest})
    return out


def responses_system(system: str) -> list[dict[str, Any]]:
    """The system message Responses input starts with (none for a blank one)."""
    if not system.strip():
        return []
    return [
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": system}]}
    ]


def to_openai_responses(system: str, blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Responses API ``input`` items: messages, ``function_call`` and
    ``function_call_output`` items."""
    out = responses_system(system)
    for message in plan_messages(blocks, "responses"):
        out += responses_items(message)
    return out
