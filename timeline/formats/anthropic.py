"""Anthropic Messages API payload: ``{system, messages}`` with native tool blocks.

Each message is a pure function of its plan parts and the checkpoint set
(:func:`anthropic_message`), so a caller can build and reuse them one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any

import msgspec

from timeline.formats._plan import Message, Part, b64, plan_messages, result_items
from timeline.model.block import Block
from timeline.model.names import provider_call_id, provider_tool_name
from timeline.model.reasoning import reasoning_item

__all__ = ["anthropic_message", "anthropic_payload", "mark_checkpoints", "to_anthropic"]

_CACHE = {"type": "ephemeral"}


def _image(b: Block) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": b.mime, "data": b64(b.data or b"")},
    }


def _result_content(part: Part) -> str | list[dict[str, Any]]:
    items = result_items(part)
    if all(isinstance(item, str) for item in items):
        return "\n".join(str(item) for item in items)
    return [
        {"type": "text", "text": item} if isinstance(item, str) else _image(item) for item in items
    ]


def _part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "tool_call":
        return {
            "type": "tool_use",
            "id": provider_call_id(b.call_id or ""),
            "name": provider_tool_name(b.tool_id or ""),
            "input": msgspec.json.decode(b.text) if b.text else {},
        }
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
    if part.kind == "image":
        return _image(b)
    if part.kind == "document":
        return {
            "type": "document",
            "source": {"type": "base64", "media_type": b.mime, "data": b64(b.data or b"")},
        }
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
        if part.kind != "reasoning" and part.at(points):  # thinking takes no cache_control
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
