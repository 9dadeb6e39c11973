"""OpenAI payloads: Chat Completions messages and Responses API input items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from timeline.block import Block
from timeline.formats._plan import MISSING_RESULT_TEXT, Part, b64, part_text, plan_messages

__all__ = ["to_openai", "to_openai_responses"]


def _data_url(b: Block) -> str:
    return f"data:{b.mime};base64,{b64(b.data or b'')}"


def _result_text(part: Part) -> str:
    if part.index < 0:
        return MISSING_RESULT_TEXT
    return "\n".join(b.text for b in part.results)


def _chat_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        return {"type": "image_url", "image_url": {"url": _data_url(b)}}
    if part.kind == "document":
        name = str(b.meta.get("name", "attachment.pdf"))
        return {"type": "file", "file": {"filename": name, "file_data": _data_url(b)}}
    return {"type": "text", "text": part_text(b)}


def to_openai(system: str, blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Chat Completions ``messages``: assistant ``tool_calls`` then one ``tool`` message per
    call, in call order."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in plan_messages(blocks):
        if message.role == "assistant":
            texts = [part_text(p.block) for p in message.parts if p.kind != "tool_call"]
            calls = [
                {
                    "id": p.block.call_id,
                    "type": "function",
                    "function": {"name": p.block.tool_id, "arguments": p.block.text or "{}"},
                }
                for p in message.parts
                if p.kind == "tool_call"
            ]
            item: dict[str, Any] = {
                "role": "assistant",
                "content": "\n\n".join(texts) if texts else None,
            }
            if calls:
                item["tool_calls"] = calls
            out.append(item)
            continue
        for p in message.parts:
            if p.kind == "tool_result":
                out.append(
                    {"role": "tool", "tool_call_id": p.block.call_id, "content": _result_text(p)}
                )
        rest = [_chat_part(p) for p in message.parts if p.kind != "tool_result"]
        if rest:
            out.append({"role": "user", "content": rest})
    return out


def _responses_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        return {"type": "input_image", "image_url": _data_url(b)}
    if part.kind == "document":
        name = str(b.meta.get("name", "attachment.pdf"))
        return {"type": "input_file", "filename": name, "file_data": _data_url(b)}
    return {"type": "input_text", "text": part_text(b)}


def _flush_assistant_text(out: list[dict[str, Any]], texts: list[dict[str, Any]]) -> None:
    if texts:
        out.append({"type": "message", "role": "assistant", "content": list(texts)})
        texts.clear()


def to_openai_responses(system: str, blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """Responses API ``input`` items: messages, ``function_call`` and
    ``function_call_output`` items."""
    out: list[dict[str, Any]] = []
    if system:
        out.append(
            {
                "type": "message",
                "role": "system",
                "content": [{"type": "input_text", "text": system}],
            }
        )
    for message in plan_messages(blocks):
        if message.role == "assistant":
            texts: list[dict[str, Any]] = []
            for p in message.parts:
                if p.kind == "tool_call":
                    _flush_assistant_text(out, texts)
                    out.append(
                        {
                            "type": "function_call",
                            "call_id": p.block.call_id,
                            "name": p.block.tool_id,
                            "arguments": p.block.text or "{}",
                        }
                    )
                else:
                    texts.append({"type": "output_text", "text": part_text(p.block)})
            _flush_assistant_text(out, texts)
            continue
        for p in message.parts:
            if p.kind == "tool_result":
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": p.block.call_id,
                        "output": _result_text(p),
                    }
                )
        rest = [_responses_part(p) for p in message.parts if p.kind != "tool_result"]
        if rest:
            out.append({"type": "message", "role": "user", "content": rest})
    return out
