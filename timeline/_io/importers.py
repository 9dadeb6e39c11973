"""Import OpenAI Chat Completions, OpenAI Responses input or Anthropic Messages JSON into
a timeline. :func:`import_conversation` also returns the system prompt (system and
developer messages, Anthropic's ``system``, Responses ``instructions``): a timeline never
stores it as a block, it is passed to ``render()``.

Malformed input raises :class:`~timeline._model.errors.InvalidBlockError` naming the element
(``messages[3].content[1]: ...``) before anything is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from timeline._core import Timeline
from timeline._io._common import (
    Builder,
    ImportedConversation,
    arguments,
    check_list,
    check_text,
    dumps_value,
    fail,
    image_url,
    located,
    split_messages,
    text_parts,
)
from timeline._io._media import chat_audio, user_file, user_image
from timeline._io.anthropic import import_anthropic
from timeline._io.responses import import_responses
from timeline._model import InvalidBlockError, chat_audio_reply, with_native
from timeline._model import constructors as B

__all__ = ["ImportedConversation", "import_conversation", "import_messages"]

_import_anthropic = import_anthropic  # the streaming importer's name for it
_CALL_KEYS: Final = frozenset({"id", "type", "function"})


def _import_openai(messages: Iterable[Any], b: Builder, start: int = 0) -> int:
    """Append the messages (``start``: the first one's index, for error messages); returns
    how many system messages went to the system prompt."""
    skipped = 0
    for i, m in enumerate(messages, start):
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
    """A user message: a new turn; its text parts as prompts, images, audio and files as
    attachments (bytes, or a reference to a URL or file id), any other part kept as
    Chat's own."""
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
            url = image_url(part.get("image_url"), pw)
            detail = part["image_url"].get("detail")
            user_image(url, f"{pw}.image_url.url", b, {"detail": detail} if detail else {})
        elif kind == "input_audio":
            chat_audio(part, pw, b)
        elif kind == "file" and isinstance(part.get("file"), Mapping):
            user_file(part["file"], f"{pw}.file", b, "chat")
        elif isinstance(part, Mapping) and isinstance(kind, str):
            b.provider_item("chat", part, pw, "user")
        else:
            raise fail(pw, f"unsupported content part type {kind!r}")


def _openai_assistant(m: Mapping[str, Any], content: Any, where: str, b: Builder) -> None:
    """An assistant message: its text (a string or text/refusal parts, a refusal), an
    audio reply (kept as Chat's own), then its calls."""
    b.ensure_turn()
    if isinstance(content, list):  # a list of text (or refusal) parts
        content = text_parts(content, f"{where}.content")
    if content in (None, "") and isinstance(m.get("refusal"), str):
        content = m["refusal"]
    if isinstance(content, str) and content:
        b.tl.append(B.assistant_completion(content))
    elif content not in (None, "") and not isinstance(content, str):
        raise fail(f"{where}.content", "expected a string, a list of text parts or null")
    if isinstance(m.get("audio"), Mapping):  # its id goes back, its transcript is text
        check_text(m["audio"].get("id"), f"{where}.audio.id")
        b.append(chat_audio_reply(m["audio"]), f"{where}.audio")
    for j, call in enumerate(check_list(m.get("tool_calls"), f"{where}.tool_calls")):
        _openai_call(call, f"{where}.tool_calls[{j}]", b)


def _openai_call(call: Any, cw: str, b: Builder) -> None:
    """One tool call (a reused id: see :mod:`timeline._model.call_ids`)."""
    if not isinstance(call, Mapping) or not call.get("id"):
        raise fail(cw, "needs id and function.name")
    source = check_text(call["id"], f"{cw}.id")
    fn = call.get("function")
    if call.get("type", "function") != "function" or not isinstance(fn, Mapping):
        _custom_call(call, source, cw, b)
        return
    if not fn.get("name"):
        raise fail(cw, "needs id and function.name")
    aw = f"{cw}.function.arguments"
    params = arguments(fn.get("arguments"), aw)
    name = check_text(fn["name"], f"{cw}.function.name")
    with located(aw):
        block = B.tool_call(name, params, call_id=source)
    if set(call) - _CALL_KEYS or fn.get("arguments") != block.text:
        with located(cw):  # more fields, or arguments not in canonical form: kept as sent
            block = with_native(block, "chat", dict(call))
    b.append(block, f"{cw}.id")


def _custom_call(call: Mapping[str, Any], source: str, cw: str, b: Builder) -> None:
    """A call of another type (a custom tool's free-form input): a tool call holding
    the input, keeping Chat's own form to send back."""
    body = call.get(str(call.get("type")))
    if not isinstance(body, Mapping) or not isinstance(body.get("name"), str):
        raise fail(cw, f"a {call.get('type')!r} call needs {call.get('type')}.name")
    params = {k: v for k, v in body.items() if k != "name"}
    with located(cw):
        block = B.tool_call(body["name"], params, call_id=source)
        block = with_native(block, "chat", dict(call))
    b.append(block, f"{cw}.id")


def _openai_tool(m: Mapping[str, Any], content: Any, where: str, b: Builder) -> None:
    """A tool message: the result of the latest call it names (text parts joined, any
    other content kept as JSON text)."""
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
        b.results([B.tool_result(call_id, text)])
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
            skipped = import_anthropic(messages, b) + (1 if system else 0)
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
