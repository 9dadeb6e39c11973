"""OpenAI payloads: Chat Completions messages and Responses API input items.

Each plan message maps to its items through a pure function (:func:`chat_items`,
:func:`responses_items`), so a caller can build and reuse them one at a time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from timeline._formats._parts import sendable
from timeline._formats._plan import Message, Part, b64, plan_messages, result_items
from timeline._model import (
    AUDIO_FORMATS,
    Block,
    file_extension,
    media_ref,
    native_item,
    native_provider,
    provider_call_id,
    provider_tool_name,
    reasoning_item,
    sent_type,
)

__all__ = [
    "chat_items",
    "prompt_cache_key_for",
    "chat_system",
    "responses_items",
    "responses_system",
    "to_openai",
    "to_openai_responses",
]


def prompt_cache_key_for(conversation_id: str) -> str:
    """A stable ``prompt_cache_key`` for one conversation: OpenAI routes requests with the
    same key and prefix to the same cache. A digest, not the id itself (which may name a
    user)."""
    return "bt-" + hashlib.sha256(conversation_id.encode()).hexdigest()[:32]


def _data_url(b: Block) -> str:
    ref = media_ref(b)
    if ref is not None and ref.url is not None:
        return ref.url
    return f"data:{sent_type(b)};base64,{b64(b.data or b'')}"


def _own(b: Block, provider: str) -> dict[str, Any] | None:
    """The item of ``provider`` that ``b`` keeps exactly, if any (a Responses item as its
    request schema takes it: :func:`_request_item`)."""
    if native_provider(b) != provider:
        return None
    item = native_item(b)
    return _request_item(item) if provider == "responses" and item is not None else item


_OUTPUT_ONLY: Final = frozenset({"created_by"})
_OUTPUT_ONLY_OF: Final[Mapping[str, frozenset[str]]] = {
    "custom_tool_call": frozenset({"status"}),
    "custom_tool_call_output": frozenset({"status"}),
}


def _request_item(item: dict[str, Any] | None) -> dict[str, Any]:
    """A Responses item as received, but what the input schema refuses: the fields only
    an output item has (``created_by``, a custom tool call's ``status``) and a null
    ``status`` (recorded output items carry one; the input takes a status or none)."""
    if item is None:
        return {}
    drop = _OUTPUT_ONLY | _OUTPUT_ONLY_OF.get(str(item.get("type")), frozenset())
    if any(k in drop for k in item) or ("status" in item and item["status"] is None):
        return {k: v for k, v in item.items() if k not in drop and (k, v) != ("status", None)}
    return item


def _result_text(part: Part) -> str:
    """A Chat tool message's text (never blank: media only goes in the next message)."""
    text = "\n".join(item for item in result_items(part, "chat") if isinstance(item, str))
    return text if text.strip() else MEDIA_RESULT_TEXT


def _result_images(part: Part) -> list[Block]:
    return [item for item in result_items(part, "chat") if not isinstance(item, str)]


MEDIA_RESULT_TEXT = "[the tool returned media only: it follows in the next user message]"


def _filename(b: Block) -> str:
    """The attachment's name; an unnamed one is ``attachment`` with the extension of its
    type (the Responses API reads a file by its extension)."""
    return str(b.meta.get("name") or f"attachment{file_extension(sent_type(b))}")


# -- Chat Completions ---------------------------------------------------------------


def _chat_file(b: Block) -> dict[str, Any]:
    ref = media_ref(b)
    if ref is not None and ref.file_id is not None:
        return {"type": "file", "file": {"file_id": ref.file_id}}
    return {"type": "file", "file": {"filename": _filename(b), "file_data": _data_url(b)}}


def _chat_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        detail = b.meta.get("detail")
        image = {"url": _data_url(b), **({"detail": detail} if detail else {})}
        return {"type": "image_url", "image_url": image}
    if part.kind == "document":
        return _chat_file(b)
    if part.kind == "audio":
        audio = {"data": b64(b.data or b""), "format": AUDIO_FORMATS[sent_type(b)]}
        return {"type": "input_audio", "input_audio": audio}
    if part.kind == "provider":
        return native_item(b) or {}
    return {"type": "text", "text": part.text}


def _chat_call(b: Block) -> dict[str, Any]:
    call_id = provider_call_id(b.call_id or "")
    own = _own(b, "chat")
    if own is not None:  # a custom tool's call, or fields the model does not keep
        own["id"] = call_id
        return own
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": provider_tool_name(b.tool_id or ""), "arguments": b.text or "{}"},
    }


def _chat_assistant(message: Message) -> dict[str, Any]:
    texts: list[str] = []
    audio: dict[str, Any] | None = None
    for p in message.parts:
        if p.kind == "text":
            texts.append(p.text)
        elif p.kind == "provider":  # an audio reply: the id of the audio OpenAI keeps
            if audio is None and p.block.meta.get("kind") == "audio":
                audio = native_item(p.block) or {}
            else:  # one audio a message: any other is named in the text
                texts.append(p.block.text)
    calls = [_chat_call(p.block) for p in message.parts if p.kind == "tool_call"]
    item: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if audio is not None:
        item["audio"] = audio
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
    for message in plan_messages(blocks, "chat"):
        out += chat_items(message)
    return out


# -- Responses ----------------------------------------------------------------------


def _input_image(b: Block) -> dict[str, Any]:
    ref = media_ref(b)
    if ref is not None and ref.file_id is not None:
        return {"type": "input_image", "file_id": ref.file_id, "detail": _detail(b)}
    return {"type": "input_image", "image_url": _data_url(b), "detail": _detail(b)}


def _detail(b: Block) -> str:
    detail = b.meta.get("detail")
    return detail if detail in ("low", "high", "auto", "original") else "auto"


def _input_file(b: Block) -> dict[str, Any]:
    ref = media_ref(b)
    if ref is not None and ref.file_id is not None:
        return {"type": "input_file", "file_id": ref.file_id}
    if ref is not None and ref.url is not None:
        return {"type": "input_file", "file_url": ref.url}
    return {"type": "input_file", "filename": _filename(b), "file_data": _data_url(b)}


def _responses_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        return _input_image(b)
    if part.kind in ("document", "file"):
        return _input_file(b)
    return {"type": "input_text", "text": part.text}


def _output_item(item: str | Block) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "input_text", "text": item}
    own = _own(item, "responses")
    if own is not None:
        return own
    if sendable(item, "responses", "result") == "image":
        return _input_image(item)
    return _input_file(item)


def _responses_output(part: Part) -> str | list[dict[str, Any]]:
    items = result_items(part, "responses")
    if all(isinstance(item, str) for item in items):
        return "\n".join(str(item) for item in items)
    return [_output_item(item) for item in items]


def _assistant_text(texts: list[str]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": "\n\n".join(texts)}


def _function_call(b: Block) -> dict[str, Any]:
    call_id = provider_call_id(b.call_id or "")
    own = _own(b, "responses")
    if own is not None:  # fields the model does not keep (a namespace), sent back as received
        own["call_id"] = call_id
        return own
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": provider_tool_name(b.tool_id or ""),
        "arguments": b.text or "{}",
    }


def _assistant_item(p: Part) -> dict[str, Any] | None:
    """The item of an assistant part that stands alone (None: plain text, merged)."""
    if p.kind == "reasoning":
        return _request_item(reasoning_item(p.block))
    if p.kind == "provider":
        return _request_item(native_item(p.block))
    if p.kind == "tool_call":
        return _function_call(p.block)
    own = _own(p.block, "responses")
    if own is not None and own.get("type") == "message":  # a message with annotations
        return own
    return None


def responses_items(message: Message) -> list[dict[str, Any]]:
    """The Responses ``input`` items for one plan message: assistant text as an easy
    input message (string content), its own items (reasoning, server tool calls, a
    message with annotations) and ``function_call`` items in place; on the user side
    ``function_call_output`` items (images a tool returned included), then the user's
    content as one message, its own items (a computer call's output...) in place."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    rest: list[dict[str, Any]] = []
    for p in message.parts:
        if message.role == "assistant":
            item = _assistant_item(p)
            if item is None:
                texts.append(p.text)
                continue
            if texts:
                out.append(_assistant_text(texts))
                texts = []
            out.append(item)
        elif p.kind == "tool_result":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": provider_call_id(p.block.call_id or ""),
                    "output": _responses_output(p),
                }
            )
        elif p.kind == "provider":
            if rest:
                out.append({"type": "message", "role": "user", "content": rest})
                rest = []
            out.append(_request_item(native_item(p.block)))
        else:
            rest.append(_responses_part(p))
    if texts:
        out.append(_assistant_text(texts))
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
