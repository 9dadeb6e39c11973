"""Import Anthropic Messages JSON (``system`` and ``messages``) into a timeline.

Text, images and documents (bytes, plain text, or by URL or file id), thinking, tool
use and tool results are modelled; everything else Anthropic produced (server tool use
and its results, MCP tool use and results, container uploads, compaction blocks, search
results, a text with citations, a content type never seen) is kept exactly as the
provider's own part (``timeline._model.native``), and so is a beta ``role: "system"``
message inside ``messages`` (a ``provider.message`` block, sent back to Anthropic as that
message in its place). Only malformed input is refused, with the element named
(``messages[3].content[1].tool_use_id``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

from timeline._io._common import (
    Builder,
    check_text,
    fail,
    hashable_type,
    input_object,
    json_type,
    located,
)
from timeline._io._media import anthropic_media, attachment_from, native_result, result_media
from timeline._model import (
    Block,
    InvalidBlockError,
    anthropic_compaction,
    anthropic_system_message,
    anthropic_thinking,
    with_native,
)
from timeline._model import constructors as B

__all__ = ["import_anthropic"]

_USER_SIDE: Final = frozenset({"container_upload", "search_result"})
"""Content types the client sends (user side); any other unmodelled type is assistant
side when it sits in an assistant message."""
_TOOL_USE_KEYS: Final = frozenset({"type", "id", "name", "input", "cache_control"})


def import_anthropic(messages: Iterable[Any], b: Builder, start: int = 0) -> int:
    """Append the messages (``start``: the first one's index, for error messages); returns
    how many system messages went to the system prompt (none: the system prompt is the
    request's ``system``, and a ``role: "system"`` message inside ``messages`` stays in
    its place as a block)."""
    for i, m in enumerate(messages, start):
        where = f"messages[{i}]"
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant", "system"):
            raise fail(where, "expected an object with role 'user', 'assistant' or 'system'")
        if m["role"] == "system":
            b.ensure_turn()
            with located(where):
                block = anthropic_system_message(m)
            b.append(block, where)
            continue
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
            if m["role"] == "user":
                _user_part(part, pw, b)
            else:
                _assistant_part(part, pw, b)
    return 0


def _text(part: Mapping[str, Any], where: str, role: str) -> Block:
    text = check_text(part.get("text", ""), f"{where}.text")
    block = B.user_prompt(text) if role == "user" else B.assistant_completion(text)
    if part.get("citations"):  # the cited text goes back with its citations
        with located(where):
            block = with_native(
                block, "anthropic", {k: v for k, v in part.items() if k != "cache_control"}
            )
    return block


def _user_part(part: Mapping[str, Any], where: str, b: Builder) -> None:
    kind = part.get("type")
    if kind == "text":
        b.append(_text(part, where, "user"), where)
    elif kind in ("image", "document"):
        fields = anthropic_media(part, where)
        if fields is None:
            b.provider_item("anthropic", _plain(part), where, "user")
            return
        b.attachments += 1
        block = attachment_from(fields, f"attachment-{b.attachments}")
        if "text" in fields:  # a plain-text document goes back to Anthropic as it came
            with located(where):
                block = with_native(block, "anthropic", _plain(part))
        b.append(block, where)
    elif kind == "tool_result":
        if not part.get("tool_use_id"):
            raise fail(where, "tool_result needs tool_use_id")
        _result(part, where, b)
    elif kind in ("thinking", "redacted_thinking", "tool_use"):
        raise fail(where, f"unsupported block type {kind!r} in a user message")
    else:
        b.provider_item("anthropic", _plain(part), where, "user")


def _plain(part: Mapping[str, Any]) -> dict[str, Any]:
    """The part without its cache checkpoint (the timeline places its own)."""
    return {k: v for k, v in part.items() if k != "cache_control"}


def _assistant_part(part: Mapping[str, Any], where: str, b: Builder) -> None:
    kind = part.get("type")
    if kind == "text":
        b.append(_text(part, where, "assistant"), where)
    elif kind in ("thinking", "redacted_thinking"):
        try:
            b.tl.append(anthropic_thinking(part))
        except InvalidBlockError as exc:
            raise fail(where, str(exc)) from exc
    elif kind == "tool_use":
        _tool_use(part, where, b)
    elif kind == "compaction":
        with located(where):
            block = anthropic_compaction(_plain(part))
        b.append(block, where)
    elif kind in ("tool_result", "image", "document"):
        raise fail(where, f"unsupported block type {kind!r} in an assistant message")
    else:
        b.provider_item(
            "anthropic", _plain(part), where, "user" if kind in _USER_SIDE else "assistant"
        )


def _tool_use(part: Mapping[str, Any], where: str, b: Builder) -> None:
    if not part.get("id") or not part.get("name"):
        raise fail(where, "tool_use needs id and name")
    source = check_text(part["id"], f"{where}.id")
    name = check_text(part["name"], f"{where}.name")
    with located(f"{where}.input"):
        params = input_object(part.get("input"), f"{where}.input")
        block = B.tool_call(name, params, call_id=source)
    if set(part) - _TOOL_USE_KEYS or _ordered(params) != block.text:
        # a caller, a toolset, input keys not in sorted order: sent back as received
        with located(where):
            block = with_native(block, "anthropic", _plain(part))
    b.append(block, f"{where}.id")


def _ordered(params: Mapping[str, Any]) -> str:
    """``params`` as compact JSON in its own key order (canonical JSON sorts them)."""
    return msgspec.json.encode(dict(params)).decode()


def _result(part: Mapping[str, Any], where: str, b: Builder) -> None:
    """A ``tool_result``: a result block for each run of text parts and for each other
    part (an image or document, by bytes or reference, or a part kept exactly), in
    order; the formats send the results of one call together."""
    call_id = check_text(part["tool_use_id"], f"{where}.tool_use_id")
    is_error = part.get("is_error", False)
    if not isinstance(is_error, bool | None):
        raise fail(f"{where}.is_error", "expected true or false")
    is_error = bool(is_error)
    body = part.get("content", "")
    if body is None or isinstance(body, str):
        body = [{"type": "text", "text": body or ""}]
    elif not isinstance(body, list):
        raise fail(
            f"{where}.content", f"expected a string or a list of blocks, got {json_type(body)}"
        )
    out: list[Block] = []
    texts: list[str] = []
    for k, item in enumerate(body):
        iw = f"{where}.content[{k}]"
        if not isinstance(item, Mapping):
            raise fail(iw, f"expected an object, got {json_type(item)}")
        kind = item.get("type")
        if kind == "text" and not item.get("citations"):
            texts.append(check_text(item.get("text", ""), f"{iw}.text"))
            continue
        if any(texts):
            out.append(B.tool_result(call_id, "\n".join(texts), is_error=is_error))
        texts = []
        fields = anthropic_media(item, iw) if kind in ("image", "document") else None
        with located(iw):
            if fields is not None:
                out.append(result_media(call_id, fields, is_error))
            else:
                out.append(native_result(call_id, "anthropic", _plain(item), is_error))
    if any(texts) or not out:
        out.append(B.tool_result(call_id, "\n".join(texts), is_error=is_error))
    with located(where):
        b.results(out)
