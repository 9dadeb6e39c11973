"""Import OpenAI Responses API input items into a timeline.

Accepts a list of input items or an object with ``input`` (and ``instructions``):
messages (``type: "message"`` or role-only easy messages, string or part-list content),
``function_call``, ``function_call_output`` (string or a list of ``input_text`` /
``input_image`` parts) and ``reasoning`` items (kept exactly). System and developer
messages and ``instructions`` form the returned system prompt. Malformed input raises
:class:`~timeline.model.errors.InvalidBlockError` naming the item (``input[3].content[1]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from timeline.io._common import (
    Builder,
    ImportedConversation,
    arguments,
    check_text,
    data_url,
    fail,
)
from timeline.model import constructors as B
from timeline.model.errors import InvalidBlockError
from timeline.model.reasoning import openai_reasoning

__all__ = ["import_responses"]

_TEXT_PARTS = ("input_text", "output_text", "text")


def _items(data: Any) -> tuple[list[Any], list[str]]:
    system: list[str] = []
    if isinstance(data, Mapping):
        instructions = data.get("instructions")
        if isinstance(instructions, str) and instructions:
            system.append(instructions)
        data = data.get("input")
    if isinstance(data, str):
        data = [{"role": "user", "content": data}]
    if not isinstance(data, list):
        raise fail("input", "expected a list of input items (or an object with 'input')")
    return data, system


def _message(item: Mapping[str, Any], where: str, b: Builder, system: list[str]) -> int:
    role = item.get("role")
    content = item.get("content")
    parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
    if not isinstance(parts, list):
        raise fail(f"{where}.content", "expected a string or a list of parts")
    if role in ("system", "developer"):
        texts = []
        for j, part in enumerate(parts):
            if not isinstance(part, Mapping) or part.get("type") not in _TEXT_PARTS:
                raise fail(f"{where}.content[{j}]", "a system message holds text parts only")
            texts.append(check_text(part.get("text", ""), f"{where}.content[{j}].text"))
        system.append("\n".join(texts))
        return 1
    if role == "user":
        b.user_turn()
    elif role == "assistant":
        b.ensure_turn()
    else:
        raise fail(f"{where}.role", f"unknown role {role!r}")
    texts = []
    for j, part in enumerate(parts):
        pw = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in _TEXT_PARTS:
            texts.append(check_text(part.get("text", ""), f"{pw}.text"))
        elif kind == "refusal" and role == "assistant":
            texts.append(str(part.get("refusal", "")))
        elif kind == "input_image" and role == "user":
            b.attach(*data_url(str(part.get("image_url") or ""), pw))
        elif kind == "input_file" and role == "user":
            mime, data = data_url(str(part.get("file_data") or ""), pw)
            b.attach(mime, data, str(part.get("filename") or ""))
        else:
            raise fail(pw, f"unsupported part type {kind!r} in a {role} message")
    text = "\n".join(texts)
    if text:
        b.tl.append(B.user_prompt(text) if role == "user" else B.assistant_completion(text))
    return 0


def _call(item: Mapping[str, Any], where: str, b: Builder) -> None:
    if not item.get("call_id") or not item.get("name"):
        raise fail(where, "a function_call needs call_id and name")
    params = arguments(item.get("arguments"), f"{where}.arguments")
    name = check_text(item["name"], f"{where}.name")
    call_id = check_text(item["call_id"], f"{where}.call_id")
    b.ensure_turn()
    try:
        b.tl.append(B.tool_call(name, params, call_id=call_id))
    except InvalidBlockError as exc:
        raise fail(where, str(exc)) from exc


def _output(item: Mapping[str, Any], where: str, b: Builder) -> None:
    call_id = check_text(item.get("call_id") or "", f"{where}.call_id")
    output = item.get("output")
    texts: list[str] = []
    images: list[tuple[str, bytes]] = []
    if isinstance(output, str):
        texts.append(output)
    elif isinstance(output, list):
        for j, part in enumerate(output):
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind in _TEXT_PARTS:
                texts.append(check_text(part.get("text", ""), f"{where}.output[{j}].text"))
            elif kind == "input_image":
                images.append(data_url(str(part.get("image_url") or ""), f"{where}.output[{j}]"))
            else:
                raise fail(f"{where}.output[{j}]", f"unsupported output part {kind!r}")
    else:
        raise fail(f"{where}.output", "expected a string or a list of parts")
    b.ensure_turn()
    try:
        if texts or not images:
            b.tl.append(B.tool_result(call_id, "\n".join(texts)))
        for mime, data in images:
            b.tl.append(B.tool_result(call_id, "", mime=mime, data=data))
    except InvalidBlockError as exc:
        raise fail(where, str(exc)) from exc


def import_responses(data: Any, conversation_id: str) -> ImportedConversation:
    """A new timeline holding the Responses input ``data``, with its system prompt."""
    items, system = _items(data)
    b = Builder(conversation_id)
    system_messages = len(system)
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, Mapping):
            raise fail(where, "expected an object")
        kind = item.get("type", "message")
        if kind == "message":
            system_messages += _message(item, where, b, system)
        elif kind == "function_call":
            _call(item, where, b)
        elif kind == "function_call_output":
            _output(item, where, b)
        elif kind == "reasoning":
            b.ensure_turn()
            try:
                b.tl.append(openai_reasoning(item))
            except InvalidBlockError as exc:
                raise fail(where, str(exc)) from exc
        else:
            raise fail(f"{where}.type", f"unsupported item type {kind!r}")
    return ImportedConversation(b.tl, "\n\n".join(system), system_messages)
