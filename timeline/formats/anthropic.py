"""Anthropic Messages API payload: ``{system, messages}`` with native tool blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from timeline.block import Block
from timeline.formats._plan import MISSING_RESULT_TEXT, Part, b64, part_text, plan_messages

__all__ = ["to_anthropic"]

_CACHE = {"type": "ephemeral"}


def _result_content(part: Part) -> str | list[dict[str, Any]]:
    if part.index < 0:
        return MISSING_RESULT_TEXT
    blocks = part.results
    if all(b.data is None or not b.mime.startswith("image/") for b in blocks):
        return "\n".join(b.text for b in blocks)
    content: list[dict[str, Any]] = []
    for b in blocks:
        if b.text:
            content.append({"type": "text", "text": b.text})
        if b.data is not None and b.mime.startswith("image/"):
            content.append(_image(b))
    return content


def _image(b: Block) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": b.mime, "data": b64(b.data or b"")},
    }


def _part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "tool_call":
        return {
            "type": "tool_use",
            "id": b.call_id,
            "name": b.tool_id,
            "input": msgspec.json.decode(b.text) if b.text else {},
        }
    if part.kind == "tool_result":
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": b.call_id,
            "content": _result_content(part),
        }
        if part.index < 0 or any(r.meta.get("is_error") for r in part.results):
            out["is_error"] = True
        return out
    if part.kind == "image":
        return _image(b)
    if part.kind == "document":
        return {
            "type": "document",
            "source": {"type": "base64", "media_type": b.mime, "data": b64(b.data or b"")},
        }
    return {"type": "text", "text": part_text(b)}


def to_anthropic(
    system: str, blocks: Sequence[Block], cache_points: Sequence[int], system_cached: bool
) -> dict[str, Any]:
    """``{"system": [...], "messages": [...]}`` with ``cache_control`` on checkpoints."""
    points = set(cache_points)
    messages = []
    for message in plan_messages(blocks):
        content = []
        for part in message.parts:
            item = _part(part)
            if part.at(points):
                item["cache_control"] = dict(_CACHE)
            content.append(item)
        messages.append({"role": message.role, "content": content})
    payload: dict[str, Any] = {"messages": messages}
    if system:
        sys_block: dict[str, Any] = {"type": "text", "text": system}
        if system_cached:
            sys_block["cache_control"] = dict(_CACHE)
        payload = {"system": [sys_block], "messages": messages}
    return payload
