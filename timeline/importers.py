"""Import OpenAI Chat Completions or Anthropic Messages JSON into a timeline.

Malformed input raises :class:`~timeline.errors.InvalidBlockError` naming the element
(``messages[3].content[1]: ...``) before anything is stored.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from timeline import blocks as B
from timeline.errors import InvalidBlockError
from timeline.timeline import Timeline

__all__ = ["import_messages"]


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

    def user_turn(self) -> None:
        self.tl.begin_turn()
        self.in_turn = True

    def ensure_turn(self) -> None:
        if not self.in_turn:
            self.user_turn()

    def attach(self, mime: str, data: bytes) -> None:
        self.attachments += 1
        self.tl.append(
            B.user_attachment(name=f"attachment-{self.attachments}", mime=mime, data=data)
        )


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
                        b.tl.append(B.user_prompt(str(part.get("text", ""))))
                    elif kind == "image_url":
                        b.attach(*_data_url(str((part.get("image_url") or {}).get("url", "")), pw))
                    else:
                        raise _fail(pw, f"unsupported content part type {kind!r}")
            else:
                raise _fail(f"{where}.content", "expected a string or a list of parts")
        elif role == "assistant":
            b.ensure_turn()
            if isinstance(content, str) and content:
                b.tl.append(B.assistant_completion(content))
            elif content not in (None, "") and not isinstance(content, str):
                raise _fail(f"{where}.content", "expected a string or null")
            for j, call in enumerate(m.get("tool_calls") or []):
                cw = f"{where}.tool_calls[{j}]"
                fn = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(fn, Mapping) or not call.get("id") or not fn.get("name"):
                    raise _fail(cw, "needs id and function.name")
                try:
                    params = json.loads(fn.get("arguments") or "{}")
                except ValueError as exc:
                    raise _fail(f"{cw}.function.arguments", f"not valid JSON: {exc}") from exc
                b.tl.append(B.tool_call(str(fn["name"]), params, call_id=str(call["id"])))
        elif role == "tool":
            b.ensure_turn()
            if not m.get("tool_call_id"):
                raise _fail(where, "a tool message needs tool_call_id")
            text = content if isinstance(content, str) else json.dumps(content)
            try:
                b.tl.append(B.tool_result(str(m["tool_call_id"]), text))
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
        kinds = {p.get("type") for p in parts if isinstance(p, Mapping)}
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
                text = str(part.get("text", ""))
                b.tl.append(
                    B.user_prompt(text) if m["role"] == "user" else B.assistant_completion(text)
                )
            elif kind in ("image", "document") and m["role"] == "user":
                b.attach(*_b64(part.get("source"), pw))
            elif kind == "tool_use" and m["role"] == "assistant":
                if not part.get("id") or not part.get("name"):
                    raise _fail(pw, "tool_use needs id and name")
                b.tl.append(
                    B.tool_call(str(part["name"]), part.get("input") or {}, call_id=str(part["id"]))
                )
            elif kind == "tool_result" and m["role"] == "user":
                if not part.get("tool_use_id"):
                    raise _fail(pw, "tool_result needs tool_use_id")
                body = part.get("content", "")
                if isinstance(body, list):
                    body = "\n".join(str(p.get("text", "")) for p in body if isinstance(p, Mapping))
                try:
                    b.tl.append(
                        B.tool_result(
                            str(part["tool_use_id"]), str(body), is_error=bool(part.get("is_error"))
                        )
                    )
                except InvalidBlockError as exc:
                    raise _fail(pw, str(exc)) from exc
            else:
                raise _fail(pw, f"unsupported block type {kind!r} in a {m['role']} message")
    return 0


def import_messages(
    data: Any, fmt: Literal["openai", "anthropic"], conversation_id: str
) -> tuple[Timeline, int]:
    """A new timeline holding the messages; returns it and the count of skipped system
    messages (the system prompt is passed at render time, never stored as a block)."""
    messages, system = _messages(data)
    b = _Builder(conversation_id)
    if fmt == "openai":
        skipped = _import_openai(messages, b)
    elif fmt == "anthropic":
        skipped = _import_anthropic(messages, b) + (1 if system else 0)
    else:
        raise InvalidBlockError(f"unknown format {fmt!r}; use 'openai' or 'anthropic'")
    return b.tl, skipped
