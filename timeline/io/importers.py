"""Import OpenAI Chat Completions, OpenAI Responses input or Anthropic Messages JSON into
a timeline. :func:`import_conversation` also returns the system prompt (system and
developer messages, Anthropic's ``system``, Responses ``instructions``): a timeline never
stores it as a block, it is passed to ``render()``.

Malformed input raises :class:`~timeline.model.errors.InvalidBlockError` naming the element
(``messages[3].content[1]: ...``) before anything is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from timeline.core.timeline import Timeline
from timeline.io._common import (
    Builder,
    ImportedConversation,
    arguments,
    b64_source,
    check_list,
    check_text,
    data_url,
    dumps_value,
    fail,
    hashable_type,
    image_url,
    input_object,
    json_type,
    located,
    split_messages,
    text_parts,
)
from timeline.io.responses import import_responses
from timeline.model import constructors as B
from timeline.model.errors import InvalidBlockError
from timeline.model.reasoning import anthropic_thinking

__all__ = ["ImportedConversation", "import_conversation", "import_messages"]


def _import_openai(messages: Iterable[Any], b: Builder) -> int:
    skipped = 0
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, Mapping):
            raise fail(where, "expected an object")
        role = m.get("role")
        content = m.get("content")
        if role in ("system", "developer"):
            skipped += 1
            if isinstance(content, str):
                b.system.append(content)
            elif isinstance(content, list):
                b.system.append(text_parts(content, f"{where}.content"))
        elif role == "user":
            _openai_user(content, where, b)
        elif role == "assistant":
            _openai_assistant(m, content, where, b)
        elif role == "tool":
            _openai_tool(m, content, where, b)
        else:
            raise fail(f"{where}.role", f"unknown role {role!r}")
    return skipped


def _openai_user(content: Any, where: str, b: Builder) -> None:
    """A user message: a new turn; its text parts as prompts, images and files as
    attachments."""
    b.user_turn()
    if isinstance(content, str):
        b.tl.append(B.user_prompt(content))
        return
    if not isinstance(content, list):
        raise fail(f"{where}.content", "expected a string or a list of parts")
    for j, part in enumerate(content):
        pw = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            b.tl.append(B.user_prompt(check_text(part.get("text", ""), f"{pw}.text")))
        elif kind == "image_url":
            b.attach(*data_url(image_url(part.get("image_url"), pw), pw))
        elif kind == "file" and isinstance(part.get("file"), Mapping):
            file = part["file"]
            mime, data = data_url(str(file.get("file_data") or ""), pw)
            b.attach(mime, data, str(file.get("filename") or ""))
        else:
            raise fail(pw, f"unsupported content part type {kind!r}")


def _openai_assistant(m: Mapping[str, Any], content: Any, where: str, b: Builder) -> None:
    """An assistant message: its text (a string or text/refusal parts), then its calls."""
    b.ensure_turn()
    if isinstance(content, list):  # a list of text (or refusal) parts
        content = text_parts(content, f"{where}.content")
    if isinstance(content, str) and content:
        b.tl.append(B.assistant_completion(content))
    elif content not in (None, "") and not isinstance(content, str):
        raise fail(f"{where}.content", "expected a string, a list of text parts or null")
    for j, call in enumerate(check_list(m.get("tool_calls"), f"{where}.tool_calls")):
        cw = f"{where}.tool_calls[{j}]"
        fn = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(fn, Mapping) or not call.get("id") or not fn.get("name"):
            raise fail(cw, "needs id and function.name")
        aw = f"{cw}.function.arguments"
        params = arguments(fn.get("arguments"), aw)
        call_id = check_text(call["id"], f"{cw}.id")
        with located(aw):
            b.tl.append(
                B.tool_call(check_text(fn["name"], f"{cw}.function.name"), params, call_id=call_id)
            )


def _openai_tool(m: Mapping[str, Any], content: Any, where: str, b: Builder) -> None:
    """A tool message: the result of the call it names (text parts joined, any other
    content kept as JSON text)."""
    b.ensure_turn()
    if not m.get("tool_call_id"):
        raise fail(where, "a tool message needs tool_call_id")
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") == "text" for p in content
    ):
        text = text_parts(content, f"{where}.content")
    elif isinstance(content, str):
        text = content
    else:
        text = dumps_value(content, f"{where}.content")
    call_id = check_text(m["tool_call_id"], f"{where}.tool_call_id")
    try:
        b.tl.append(B.tool_result(call_id, text))
    except InvalidBlockError as exc:
        raise fail(where, str(exc)) from exc


def _import_anthropic(messages: Iterable[Any], b: Builder) -> int:
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant"):
            raise fail(where, "expected an object with role 'user' or 'assistant'")
        content = m.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise fail(f"{where}.content", "expected a string or a list of blocks")
        kinds = {p.get("type") for p in parts if isinstance(p, Mapping) and hashable_type(p)}
        if m["role"] == "user" and kinds - {"tool_result"}:
            b.user_turn()
        else:
            b.ensure_turn()
        for j, part in enumerate(parts):
            pw = f"{where}.content[{j}]"
            if not isinstance(part, Mapping):
                raise fail(pw, "expected an object")
            kind = part.get("type")
            if kind == "text":
                text = check_text(part.get("text", ""), f"{pw}.text")
                b.tl.append(
                    B.user_prompt(text) if m["role"] == "user" else B.assistant_completion(text)
                )
            elif kind in ("image", "document") and m["role"] == "user":
                b.attach(*b64_source(part.get("source"), pw))
            elif kind in ("thinking", "redacted_thinking") and m["role"] == "assistant":
                try:
                    b.tl.append(anthropic_thinking(part))
                except InvalidBlockError as exc:
                    raise fail(pw, str(exc)) from exc
            elif kind == "tool_use" and m["role"] == "assistant":
                if not part.get("id") or not part.get("name"):
                    raise fail(pw, "tool_use needs id and name")
                with located(f"{pw}.input"):
                    b.tl.append(
                        B.tool_call(
                            check_text(part["name"], f"{pw}.name"),
                            input_object(part.get("input"), f"{pw}.input"),
                            call_id=check_text(part["id"], f"{pw}.id"),
                        )
                    )
            elif kind == "tool_result" and m["role"] == "user":
                if not part.get("tool_use_id"):
                    raise fail(pw, "tool_result needs tool_use_id")
                _anthropic_result(part, pw, b)
            else:
                raise fail(pw, f"unsupported block type {kind!r} in a {m['role']} message")
    return 0


def _anthropic_result(part: Mapping[str, Any], where: str, b: Builder) -> None:
    """A ``tool_result``: its text parts as one result, each image as a further result
    block of the same call (the formats send them together)."""
    call_id = check_text(part["tool_use_id"], f"{where}.tool_use_id")
    body = part.get("content", "")
    images: list[tuple[str, bytes]] = []
    if isinstance(body, list):
        texts = []
        for k, item in enumerate(body):
            kind = item.get("type") if isinstance(item, Mapping) else None
            if kind == "image":
                images.append(b64_source(item.get("source"), f"{where}.content[{k}]"))
            elif kind == "text":
                texts.append(check_text(item.get("text", ""), f"{where}.content[{k}].text"))
            else:
                raise fail(f"{where}.content[{k}]", f"unsupported tool_result part {kind!r}")
        body = "\n".join(texts)
    elif body is None:
        body = ""
    elif not isinstance(body, str):
        raise fail(
            f"{where}.content", f"expected a string or a list of blocks, got {json_type(body)}"
        )
    is_error = part.get("is_error", False)
    if not isinstance(is_error, bool | None):
        raise fail(f"{where}.is_error", "expected true or false")
    is_error = bool(is_error)
    try:
        if body or not images:
            b.tl.append(B.tool_result(call_id, str(body), is_error=is_error))
        for mime, data in images:
            b.tl.append(B.tool_result(call_id, "", is_error=is_error, mime=mime, data=data))
    except InvalidBlockError as exc:
        raise fail(where, str(exc)) from exc


def import_conversation(
    data: Any, fmt: Literal["openai", "anthropic", "responses"], conversation_id: str
) -> ImportedConversation:
    """A new timeline holding the conversation, with its system prompt.

    ``fmt="responses"`` reads Responses API input: a list of items or an object with
    ``input`` (and ``instructions``)."""
    if fmt == "responses":
        return import_responses(data, conversation_id)
    messages, system = split_messages(data)
    b = Builder(conversation_id)
    with located("messages"):
        if fmt == "openai":
            skipped = _import_openai(messages, b)
        elif fmt == "anthropic":
            skipped = _import_anthropic(messages, b) + (1 if system else 0)
            if system:
                b.system.insert(0, system)
        else:
            raise InvalidBlockError(
                f"unknown format {fmt!r}; use 'openai', 'anthropic' or 'responses'"
            )
    return ImportedConversation(b.tl, "\n\n".join(b.system), skipped)


def import_messages(
    data: Any, fmt: Literal["openai", "anthropic", "responses"], conversation_id: str
) -> tuple[Timeline, int]:
    """A new timeline holding the messages; returns it and the count of system messages
    it held. The system prompt is never stored as a block: get it from
    :func:`import_conversation` and pass it to ``render()``."""
    imported = import_conversation(data, fmt, conversation_id)
    return imported.timeline, imported.system_messages
