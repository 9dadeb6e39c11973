"""The document rendering: ``[TURN id]``, ``[USER MESSAGE]``... as text or one message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from timeline._formats._parts import sendable
from timeline._formats.anthropic import anthropic_source
from timeline._model import (
    Block,
    EmptyPromptError,
    block_type,
    media_kind,
    media_ref,
    native_provider,
)

__all__ = ["block_text", "to_document", "to_text"]


def block_text(b: Block) -> str:
    """One block in the document layout."""
    spec = block_type(b.type)
    if spec.render == "header":
        return f"[TURN {b.turn_id}]"
    if spec.render == "tool_call":
        return f"[TOOL CALL {b.tool_id} call_id={b.call_id}]\n{b.text}"
    if spec.render == "tool_result":
        err = " error" if b.meta.get("is_error") else ""
        return f"[TOOL RESULT {b.tool_id or ''} call_id={b.call_id}{err}]\n{b.text}"
    if spec.render == "attachment":
        return _attachment(b, b.meta.get("name", b.path))
    return f"{spec.label}\n{b.text}" if spec.label else b.text


def _attachment(b: Block, name: object) -> str:
    ref = media_ref(b)
    if ref is not None:
        return f"[USER ATTACHMENT {name} ({ref.media} at {ref.label})]\n{b.text}".rstrip()
    if b.data is not None and native_provider(b) is None:
        if media_kind(b) not in ("image", "document"):
            note = (
                f"[USER ATTACHMENT {name} ({b.mime}, {len(b.data)} bytes) not sent: "
                "the provider does not accept this type]"
            )
            return f"{note}\n{b.text}" if b.text.strip() else note
        if not b.text.strip():
            return f"[USER ATTACHMENT {name} ({b.mime}, {len(b.data)} bytes)]"
    return f"[USER ATTACHMENT {name}]\n{b.text}"


def to_text(system: str, blocks: Sequence[Block]) -> str:
    """The whole prompt as one string (system first)."""
    parts = [f"[SYSTEM]\n{system}"] if system.strip() else []
    parts += [block_text(b) for b in blocks if block_type(b.type).render != "reasoning"]
    return "\n\n".join(parts)


def to_document(
    system: str, blocks: Sequence[Block], cache_points: Sequence[int], system_cached: bool
) -> dict[str, Any]:
    """The document layout: the stream as ONE user message of parts (Anthropic shape); binary
    attachments become image/document parts; checkpoints carry ``cache_control``."""
    points = set(cache_points)
    content: list[dict[str, Any]] = []
    for i, b in enumerate(blocks):
        if block_type(b.type).render == "reasoning":
            continue  # the provider's own thinking travels only in its native format
        render = block_type(b.type).render
        if render == "attachment":
            kind = sendable(b, "anthropic", "message")
        else:  # an image a tool returned
            kind = sendable(b, "anthropic", "result") if render == "tool_result" else None
        if kind is not None:  # an attachment, or an image a tool returned
            content.append({"type": "text", "text": block_text(b)})
            item: dict[str, Any] = {"type": kind, "source": anthropic_source(b)}
        else:
            item = {"type": "text", "text": block_text(b)}
            if not item["text"].strip():  # a hidden opaque block: no provider takes blank text
                if i in points and content:
                    content[-1]["cache_control"] = {"type": "ephemeral"}
                continue
        if i in points:
            item["cache_control"] = {"type": "ephemeral"}
        content.append(item)
    if not content:
        raise EmptyPromptError("nothing to send: the rendered timeline holds no block")
    payload: dict[str, Any] = {"messages": [{"role": "user", "content": content}]}
    if system.strip():
        sys_block: dict[str, Any] = {"type": "text", "text": system}
        if system_cached:
            sys_block["cache_control"] = {"type": "ephemeral"}
        payload = {"system": [sys_block], **payload}
    return payload
