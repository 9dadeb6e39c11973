"""Import OpenAI Chat Completions, OpenAI Responses input or Anthropic Messages JSON into
a timeline. :func:`import_conversation` also returns the system prompt (system and
developer messages, Anthropic's ``system``, Responses ``instructions``): a timeline never
stores it as a block, it is passed to ``render()``.

Malformed input raises :class:`~timeline.model.errors.InvalidBlockError` naming the element
(``messages[3].content[1]: ...``) before anything is stored.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

import attrs

from timeline.core.timeline import Timeline
from timeline.model import constructors as B
from timeline.model.errors import InvalidBlockError
from timeline.model.reasoning import anthropic_thinking

__all__ = ["ImportedConversation", "import_conversation", "import_messages"]


def _fail(where: str, what: str) -> InvalidBlockError:
    return InvalidBlockError(f"{where}: {what}")


def _messages(data: Any, where: str = "messages") -> tuple[list[Any], str]:
    system = ""
    if isinstance(data, Mapping):
        sys_value = data.get("system", "")
        if isinstance(sys_value, list):
            system = "\n".join(str(p.get("text", "")) for p in sys_value if isinstance(p, Mapping))
        elif isinstance(sys_value, str):
            system = sys_value
        data = data.get("messages")
    if not isinstance(data, list):
        raise _fail(where, "expected a list of messages (or an object with 'messages')")
    return data, system


def _data_url(url: str, where: str) -> tuple[str, bytes]:
    if not url.startswith("data:") or ";base64," not in url:
        raise _fail(where, "only base64 data: URLs can be imported (remote URLs are not fetched)")
    head, _, payload = url.partition(";base64,")
    try:
        return head[5:], base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise _fail(where, f"invalid base64 data: {exc}") from exc


def _b64(source: Any, where: str) -> tuple[str, bytes]:
    if not isinstance(source, Mapping) or source.get("type") != "base64":
        raise _fail(where, "only base64 sources can be imported")
    try:
        return str(source.get("media_type", "")), base64.b64decode(
            str(source.get("data", "")), validate=True
        )
    except binascii.Error as exc:
        raise _fail(where, f"invalid base64 data: {exc}") from exc


class _Builder:
    def __init__(self, conversation_id: str) -> None:
        self.tl = Timeline(conversation_id)
        self.in_turn = False
        self.attachments = 0
        self.system: list[str] = []

    def user_turn(self) -> None:
        self.tl.begin_turn()
        self.in_turn = True

    def ensure_turn(self) -> None:
        if not self.in_turn:
            self.user_turn()

    def attach(self, mime: str, data: bytes, name: str = "") -> None:
        self.attachments += 1
        self.tl.append(
            B.user_attachment(name=name or f"attachment-{self.attachments}", mime=mime, data=data)
        )


def _text_parts(content: Any, where: str, kinds: tuple[str, ...] = ("text",)) -> str:
    """Text parts (``{"type": "text", "text": ...}``; refusals too) joined by newlines."""
    texts = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in kinds:
            texts.append(str(part.get("text", "")))
        elif kind == "refusal":
            texts.append(str(part.get("refusal", "")))
        else:
            raise _fail(f"{where}[{j}]", f"expected a text part, got {kind!r}")
    return "\n".join(texts)


def _import_openai(messages: Iterable[Any], b: _Builder) -> int:
    skipped = 0
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, Mapping):
            raise _fail(where, "expected an object")
        role = m.get("role")
        content = m.get("content")
        if role in ("system", "developer"):
            skipped += 1
            if isinstance(content, str):
                b.system.append(content)
            elif isinstance(content, list):
                b.system.append(_text_parts(content, f"{where}.content"))
            continue
        if role == "user":
            b.user_turn()
            if isinstance(content, str):
                b.tl.append(B.user_prompt(content))
            elif isinstance(content, list):
                for j, part in enumerate(content):
                    pw = f"{where}.content[{j}]"
                    kind = part.get("type") if isinstance(part, Mapping) else None
                    if kind == "text":
                        b.tl.append(B.user_prompt(_text(part.get("text", ""), f"{pw}.text")))
                    elif kind == "image_url":
                        b.attach(*_data_url(_image_url(part.get("image_url"), pw), pw))
                    elif kind == "file" and isinstance(part.get("file"), Mapping):
                        file = part["file"]
                        mime, data = _data_url(str(file.get("file_data") or ""), pw)
                        b.attach(mime, data, str(file.get("filename") or ""))
                    else:
                        raise _fail(pw, f"unsupported content part type {kind!r}")
            else:
                raise _fail(f"{where}.content", "expected a string or a list of parts")
        elif role == "assistant":
            b.ensure_turn()
            if isinstance(content, list):  # a list of text (or refusal) parts
                content = _text_parts(content, f"{where}.content")
            if isinstance(content, str) and content:
                b.tl.append(B.assistant_completion(content))
            elif content not in (None, "") and not isinstance(content, str):
                raise _fail(f"{where}.content", "expected a string, a list of text parts or null")
            for j, call in enumerate(_list(m.get("tool_calls"), f"{where}.tool_calls")):
                cw = f"{where}.tool_calls[{j}]"
                fn = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(fn, Mapping) or not call.get("id") or not fn.get("name"):
                    raise _fail(cw, "needs id and function.name")
                aw = f"{cw}.function.arguments"
                params = _arguments(fn.get("arguments"), aw)
                call_id = _text(call["id"], f"{cw}.id")
                with _located(aw):
                    b.tl.append(
                        B.tool_call(
                            _text(fn["name"], f"{cw}.function.name"), params, call_id=call_id
                        )
                    )
        elif role == "tool":
            b.ensure_turn()
            if not m.get("tool_call_id"):
                raise _fail(where, "a tool message needs tool_call_id")
            if isinstance(content, list) and all(
                isinstance(p, Mapping) and p.get("type") == "text" for p in content
            ):
                text = _text_parts(content, f"{where}.content")
            else:
                text = content if isinstance(content, str) else _dumps(content, f"{where}.content")
            try:
                b.tl.append(B.tool_result(_text(m["tool_call_id"], f"{where}.tool_call_id"), text))
            except InvalidBlockError as exc:
                raise _fail(where, str(exc)) from exc
        else:
            raise _fail(f"{where}.role", f"unknown role {role!r}")
    return skipped


def _import_anthropic(messages: Iterable[Any], b: _Builder) -> int:
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant"):
            raise _fail(where, "expected an object with role 'user' or 'assistant'")
        content = m.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise _fail(f"{where}.content", "expected a string or a list of blocks")
        kinds = {p.get("type") for p in parts if isinstance(p, Mapping) and _hashable(p)}
        if m["role"] == "user" and kinds - {"tool_result"}:
            b.user_turn()
        else:
            b.ensure_turn()
        for j, part in enumerate(parts):
            pw = f"{where}.content[{j}]"
            if not isinstance(part, Mapping):
                raise _fail(pw, "expected an object")
            kind = part.get("type")
            if kind == "text":
                text = _text(part.get("text", ""), f"{pw}.text")
                b.tl.append(
                    B.user_prompt(text) if m["role"] == "user" else B.assistant_completion(text)
                )
            elif kind in ("image", "document") and m["role"] == "user":
                b.attach(*_b64(part.get("source"), pw))
            elif kind in ("thinking", "redacted_thinking") and m["role"] == "assistant":
                try:
                    b.tl.append(anthropic_thinking(part))
                except InvalidBlockError as exc:
                    raise _fail(pw, str(exc)) from exc
            elif kind == "tool_use" and m["role"] == "assistant":
                if not part.get("id") or not part.get("name"):
                    raise _fail(pw, "tool_use needs id and name")
                with _located(f"{pw}.input"):
                    b.tl.append(
                        B.tool_call(
                            _text(part["name"], f"{pw}.name"),
                            _input(part.get("input"), f"{pw}.input"),
                            call_id=_text(part["id"], f"{pw}.id"),
                        )
                    )
            elif kind == "tool_result" and m["role"] == "user":
                if not part.get("tool_use_id"):
                    raise _fail(pw, "tool_result needs tool_use_id")
                _anthropic_result(part, pw, b)
            else:
                raise _fail(pw, f"unsupported block type {kind!r} in a {m['role']} message")
    return 0


def _anthropic_result(part: Mapping[str, Any], where: str, b: _Builder) -> None:
    """A ``tool_result``: its text parts as one result, each image as a further result
    block of the same call (the formats send them together)."""
    call_id = _text(part["tool_use_id"], f"{where}.tool_use_id")
    body = part.get("content", "")
    images: list[tuple[str, bytes]] = []
    if isinstance(body, list):
        texts = []
        for k, item in enumerate(body):
            kind = item.get("type") if isinstance(item, Mapping) else None
            if kind == "image":
                images.append(_b64(item.get("source"), f"{where}.content[{k}]"))
            elif kind == "text":
                texts.append(_text(item.get("text", ""), f"{where}.content[{k}].text"))
            else:
                raise _fail(f"{where}.content[{k}]", f"unsupported tool_result part {kind!r}")
        body = "\n".join(texts)
    elif body is None:
        body = ""
    elif not isinstance(body, str):
        raise _fail(
            f"{where}.content", f"expected a string or a list of blocks, got {_json_type(body)}"
        )
    is_error = part.get("is_error", False)
    if not isinstance(is_error, bool | None):
        raise _fail(f"{where}.is_error", "expected true or false")
    is_error = bool(is_error)
    try:
        if body or not images:
            b.tl.append(B.tool_result(call_id, str(body), is_error=is_error))
        for mime, data in images:
            b.tl.append(B.tool_result(call_id, "", is_error=is_error, mime=mime, data=data))
    except InvalidBlockError as exc:
        raise _fail(where, str(exc)) from exc


@attrs.frozen
class ImportedConversation:
    """What an import produced: the timeline, the system prompt it carried (pass it to
    ``render()``; empty when none) and how many system messages it held."""

    timeline: Timeline
    system: str
    system_messages: int


def import_conversation(
    data: Any, fmt: Literal["openai", "anthropic", "responses"], conversation_id: str
) -> ImportedConversation:
    """A new timeline holding the conversation, with its system prompt.

    ``fmt="responses"`` reads Responses API input: a list of items or an object with
    ``input`` (and ``instructions``)."""
    if fmt == "responses":
        from timeline.io.responses import import_responses

        return import_responses(data, conversation_id)
    messages, system = _messages(data)
    b = _Builder(conversation_id)
    with _located("messages"):
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


# -- type checks of untrusted input (each names where the bad value is) -----------------


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"expected a string, got {_json_type(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {_json_type(value)}")
    return value


def _image_url(value: Any, where: str) -> str:
    if not isinstance(value, Mapping):
        raise _fail(f"{where}.image_url", f"expected an object with url, got {_json_type(value)}")
    return _text(value.get("url", ""), f"{where}.image_url.url")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _arguments(raw: Any, where: str) -> Any:
    """OpenAI tool-call arguments: a JSON text holding an object."""
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        raise _fail(where, f"expected a JSON string, got {_json_type(raw)}")
    try:
        params = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise _fail(where, "nested too deeply") from exc
    except ValueError as exc:
        raise _fail(where, f"not valid JSON: {exc}") from exc
    return _input(params, where)


def _input(value: Any, where: str) -> Any:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected a JSON object, got {_json_type(value)}")
    return value


def _dumps(value: Any, where: str) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        raise _fail(where, f"cannot be stored as text: {exc}") from exc


def _hashable(part: Mapping[str, Any]) -> bool:
    return isinstance(part.get("type"), str | None)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


@contextmanager
def _located(where: str) -> Iterator[None]:
    """Errors from the timeline (a bad params value) and a parser's recursion limit as
    InvalidBlockError naming the element."""
    try:
        yield
    except InvalidBlockError as exc:
        if str(exc).startswith("messages"):
            raise
        raise _fail(where, str(exc)) from exc
    except RecursionError as exc:
        raise _fail(where, "nested too deeply") from exc
