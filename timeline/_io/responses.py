"""Import OpenAI Responses API input items into a timeline.

Accepts a list of input items or an object with ``input`` (and ``instructions``).
Modelled: messages (``type: "message"`` or role-only easy messages, string or part-list
content; images and files by bytes, URL or file id), ``function_call``,
``function_call_output`` (string or a list of text, image and file parts) and
``reasoning`` items (kept exactly). Every other item type (web search, file search, code
interpreter, image generation, computer use, MCP, shell, custom tool calls, compaction,
item references, types never seen) is kept exactly as an opaque provider block
(``timeline._model.native``), and so is an assistant message whose text carries
annotations. System and developer messages and ``instructions`` form the returned system
prompt. Only malformed input raises :class:`~timeline._model.errors.InvalidBlockError`,
naming the item (``input[3].content[1]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from timeline._io._common import (
    Builder,
    ImportedConversation,
    arguments,
    check_text,
    data_url,
    fail,
    located,
)
from timeline._io._media import native_result, result_media, user_file, user_image
from timeline._model import (
    Block,
    InvalidBlockError,
    openai_compaction,
    openai_reasoning,
    reference_meta,
    with_native,
)
from timeline._model import constructors as B

__all__ = ["import_items", "import_responses"]

_TEXT_PARTS: Final = ("input_text", "output_text", "text")
_CALL_KEYS: Final = frozenset({"type", "id", "call_id", "name", "arguments", "status"})
_USER_SIDE: Final = frozenset({"mcp_approval_response", "additional_tools", "item_reference"})
"""Item types the client sends besides ``*_output`` items (user side)."""


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


def _system(parts: list[Any], where: str, system: list[str]) -> int:
    texts = []
    for j, part in enumerate(parts):
        if not isinstance(part, Mapping) or part.get("type") not in _TEXT_PARTS:
            raise fail(f"{where}.content[{j}]", "a system message holds text parts only")
        texts.append(check_text(part.get("text", ""), f"{where}.content[{j}].text"))
    system.append("\n".join(texts))
    return 1


def _annotated(parts: list[Any]) -> bool:
    return any(
        isinstance(p, Mapping) and (p.get("annotations") or p.get("logprobs")) for p in parts
    )


def _message(item: Mapping[str, Any], where: str, b: Builder, system: list[str]) -> int:
    role = item.get("role")
    content = item.get("content")
    parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
    if not isinstance(parts, list):
        raise fail(f"{where}.content", "expected a string or a list of parts")
    if role in ("system", "developer"):
        return _system(parts, where, system)
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
            _image(part, pw, b)
        elif kind == "input_file" and role == "user":
            user_file(part, pw, b, "responses")
        else:
            raise fail(pw, f"unsupported part type {kind!r} in a {role} message")
    text = "\n".join(texts)
    if text:
        block = B.user_prompt(text) if role == "user" else B.assistant_completion(text)
        if role == "assistant" and _annotated(parts):  # cited text: sent back as received
            with located(where):
                block = with_native(block, "responses", dict(item))
        b.tl.append(block)
    return 0


def _image(part: Mapping[str, Any], where: str, b: Builder) -> None:
    detail = {"detail": part["detail"]} if isinstance(part.get("detail"), str) else {}
    if part.get("file_id"):
        file_id = check_text(part["file_id"], f"{where}.file_id")
        b.refer(where, extra=detail, media="image", file_id=file_id, provider="openai")
    else:
        user_image(str(part.get("image_url") or ""), f"{where}.image_url", b, detail)


def _call(item: Mapping[str, Any], where: str, b: Builder) -> None:
    if not item.get("call_id") or not item.get("name"):
        raise fail(where, "a function_call needs call_id and name")
    params = arguments(item.get("arguments"), f"{where}.arguments")
    name = check_text(item["name"], f"{where}.name")
    source = check_text(item["call_id"], f"{where}.call_id")
    b.ensure_turn()
    with located(f"{where}.arguments"):
        block = B.tool_call(name, params, call_id=source)
    if set(item) - _CALL_KEYS or item.get("arguments") != block.text:
        # a namespace, a caller, arguments not in canonical form: sent back as received
        with located(where):
            block = with_native(block, "responses", dict(item))
    b.append(block, f"{where}.call_id")


def _output_part(part: Any, where: str, call_id: str) -> Block | str:
    """One part of a function call's output: its text, or a further result block."""
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in _TEXT_PARTS:
        return check_text(part.get("text", ""), f"{where}.text")
    if not isinstance(part, Mapping):
        raise fail(where, "expected an object")
    with located(where):
        if kind == "input_image" and part.get("image_url"):
            url = check_text(part["image_url"], f"{where}.image_url")
            if url.startswith("data:"):
                mime, data = data_url(url, where)
                return B.tool_result(call_id, "", mime=mime, data=data)
            return result_media(call_id, {"meta": reference_meta("image", url=url)}, False)
        return native_result(call_id, "responses", dict(part), False)


def _output(item: Mapping[str, Any], where: str, b: Builder) -> None:
    call_id = check_text(item.get("call_id") or "", f"{where}.call_id")
    output = item.get("output")
    if isinstance(output, str):
        output = [{"type": "input_text", "text": output}]
    elif not isinstance(output, list):
        raise fail(f"{where}.output", "expected a string or a list of parts")
    out: list[Block] = []
    texts: list[str] = []
    for j, part in enumerate(output):
        got = _output_part(part, f"{where}.output[{j}]", call_id)
        if isinstance(got, str):
            texts.append(got)
            continue
        if any(texts):
            out.append(B.tool_result(call_id, "\n".join(texts)))
        texts = []
        out.append(got)
    if any(texts) or not out:
        out.append(B.tool_result(call_id, "\n".join(texts)))
    b.ensure_turn()
    try:
        b.results(out)
    except InvalidBlockError as exc:
        raise fail(where, str(exc)) from exc


def _other(item: Mapping[str, Any], kind: str, where: str, b: Builder) -> None:
    """Reasoning, compaction, and every item type not modelled: kept exactly."""
    b.ensure_turn()
    if kind == "reasoning":
        try:
            b.tl.append(openai_reasoning(item))
        except InvalidBlockError as exc:
            raise fail(where, str(exc)) from exc
    elif kind == "compaction":
        with located(where):
            block = openai_compaction(item)
        b.append(block, where)
    else:
        side = "user" if kind.endswith("_output") or kind in _USER_SIDE else "assistant"
        b.provider_item("responses", item, where, side)


def import_items(items: Iterable[Any], b: Builder, system: list[str], start: int = 0) -> int:
    """Append the Responses input items (``start``: the first one's index, for error
    messages); system and developer messages go to ``system``. Returns how many."""
    system_messages = 0
    for i, item in enumerate(items, start):
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
        elif isinstance(kind, str) and kind:
            _other(item, kind, where, b)
        else:
            raise fail(f"{where}.type", f"expected an item type, got {kind!r}")
    return system_messages


def import_responses(data: Any, conversation_id: str) -> ImportedConversation:
    """A new timeline holding the Responses input ``data``, with its system prompt."""
    items, system = _items(data)
    b = Builder(conversation_id)
    system_messages = len(system) + import_items(items, b, system)
    return ImportedConversation(b.tl, "\n\n".join(system), system_messages)
