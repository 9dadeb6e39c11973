"""Anthropic Messages API payload: ``{system, messages}`` with native tool blocks.

Each message is a pure function of its plan parts and the checkpoint set
(:func:`anthropic_message`), so a caller can build and reuse them one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any, Final

import msgspec

from timeline.formats._parts import sendable
from timeline.formats._plan import Message, Part, b64, plan_messages, result_items
from timeline.model.block import Block
from timeline.model.media import media_ref
from timeline.model.names import provider_call_id, provider_tool_name
from timeline.model.native import native_item, native_provider
from timeline.model.reasoning import reasoning_item

__all__ = [
    "anthropic_message",
    "anthropic_payload",
    "anthropic_source",
    "mark_checkpoints",
    "to_anthropic",
]

_CACHE = {"type": "ephemeral"}
_CACHEABLE: Final = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "compaction",
    }
)
"""Content block types that take ``cache_control`` (thinking blocks do not; an unknown
type is left unmarked rather than risk a rejected request)."""


def anthropic_source(b: Block) -> dict[str, Any]:
    """The ``source`` of an image or document block: its bytes, URL or file id."""
    ref = media_ref(b)
    if ref is None:
        return {"type": "base64", "media_type": b.mime, "data": b64(b.data or b"")}
    if ref.url is not None:
        return {"type": "url", "url": ref.url}
    return {"type": "file", "file_id": ref.file_id}


def _image(b: Block) -> dict[str, Any]:
    return {"type": "image", "source": anthropic_source(b)}


def _document(b: Block) -> dict[str, Any]:
    return {"type": "document", "source": anthropic_source(b)}


def _own(b: Block) -> dict[str, Any] | None:
    """The Anthropic content block ``b`` keeps exactly, if any."""
    return native_item(b) if native_provider(b) == "anthropic" else None


def _result_item(item: str | Block) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    own = _own(item)
    if own is not None:
        return own
    return _image(item) if sendable(item, "anthropic", "result") == "image" else _document(item)


def _result_content(part: Part) -> str | list[dict[str, Any]]:
    items = result_items(part, "anthropic")
    if all(isinstance(item, str) for item in items):
        return "\n".join(str(item) for item in items)
    return [_result_item(item) for item in items]


def _tool_use(b: Block) -> dict[str, Any]:
    own = _own(b)
    call_id = provider_call_id(b.call_id or "")
    if own is not None:  # fields the model does not keep (a caller), sent back as received
        own["id"] = call_id
        return own
    return {
        "type": "tool_use",
        "id": call_id,
        "name": provider_tool_name(b.tool_id or ""),
        "input": msgspec.json.decode(b.text) if b.text else {},
    }


def _part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "tool_call":
        return _tool_use(b)
    if part.kind == "tool_result":
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": provider_call_id(b.call_id or ""),
            "content": _result_content(part),
        }
        if part.index < 0 or any(r.meta.get("is_error") for r in part.results):
            out["is_error"] = True
        return out
    if part.kind == "reasoning":
        return reasoning_item(b) or {}
    if part.kind == "provider":
        return native_item(b) or {}
    if part.kind == "image":
        return _image(b)
    if part.kind == "document":
        return _document(b)
    own = _own(b)
    if own is not None and own.get("type") == "text":  # a text with citations
        if own.get("text") != part.text:
            own["text"] = part.text  # the final text, its trailing whitespace removed
        return own
    return {"type": "text", "text": part.text}


def anthropic_message(message: Message, points: Set[int]) -> dict[str, Any]:
    """One message of the payload; parts on a checkpoint carry ``cache_control``."""
    item = {"role": message.role, "content": [_part(part) for part in message.parts]}
    if points:
        mark_checkpoints(item, message, points)
    return item


def mark_checkpoints(item: dict[str, Any], message: Message, points: Set[int]) -> None:
    """Add ``cache_control`` to the content parts of ``item`` (``message`` built, one
    content part per plan part) that fall on a checkpoint in ``points``."""
    for part, content in zip(message.parts, item["content"], strict=True):
        if content.get("type") in _CACHEABLE and part.at(points):  # thinking takes none
            content["cache_control"] = dict(_CACHE)


def to_anthropic(
    system: str, blocks: Sequence[Block], cache_points: Sequence[int], system_cached: bool
) -> dict[str, Any]:
    """``{"system": [...], "messages": [...]}`` with ``cache_control`` on checkpoints."""
    points = set(cache_points)
    messages = [anthropic_message(m, points) for m in plan_messages(blocks, "anthropic")]
    return anthropic_payload(system, messages, system_cached)


def anthropic_payload(
    system: str, messages: list[dict[str, Any]], system_cached: bool
) -> dict[str, Any]:
    """The payload around built ``messages``: the system prompt (cached or not) first."""
    if not system.strip():
        return {"messages": messages}
    sys_block: dict[str, Any] = {"type": "text", "text": system}
    if system_cached:
        sys_block["cache_control"] = dict(_CACHE)
    return {"system": [sys_block], "messages": messages}
