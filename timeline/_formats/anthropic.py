"""Anthropic Messages API payload: ``{system, messages}`` with native tool blocks.

Each plan message's payload messages are a pure function of its parts and the checkpoint
set (:func:`anthropic_messages`), so a caller can build and reuse them one at a time.
A plan message is one payload message, except where it holds a ``provider.message``
block of Anthropic's (a beta ``role: "system"`` message recorded inside ``messages``):
that is sent as the message it was, in its place, between the parts before and after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any, Final, Literal

import msgspec

from timeline._formats._parts import sendable
from timeline._formats._plan import Message, Part, b64, plan_messages, result_items
from timeline._model import (
    ANTHROPIC_FIELDS,
    PROVIDER_MESSAGE,
    Block,
    PolicyError,
    media_ref,
    native_item,
    native_provider,
    provider_call_id,
    provider_tool_name,
    reasoning_item,
    sent_type,
)

__all__ = [
    "CacheTTL",
    "CacheTTLs",
    "anthropic_messages",
    "anthropic_payload",
    "anthropic_source",
    "breakpoint_ttls",
    "cache_control",
    "mark_checkpoints",
    "to_anthropic",
    "tools_ttl",
]

_CACHEABLE: Final = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "compaction",
    }
)
"""Content block types that take ``cache_control`` (thinking blocks do not; an unknown
type is left unmarked rather than risk a rejected request)."""
_MESSAGE_CACHEABLE: Final = frozenset({"text", "tool_addition", "tool_removal"})
"""The content blocks of a system message that take ``cache_control``."""


def anthropic_source(b: Block) -> dict[str, Any]:
    """The ``source`` of an image or document block: its bytes, URL or file id."""
    ref = media_ref(b)
    if ref is None:
        return {"type": "base64", "media_type": sent_type(b), "data": b64(b.data or b"")}
    if ref.url is not None:
        return {"type": "url", "url": ref.url}
    return {"type": "file", "file_id": ref.file_id}


CacheTTL = Literal["5m", "1h"]
CacheTTLs = CacheTTL | Mapping[str, CacheTTL] | None
"""``to_anthropic(cache_ttl=...)``: one TTL for every breakpoint, or one per role
(``"tools"``: the last tool's, ``"system"``, ``"messages"``: the conversation's
breakpoints but the last, ``"tail"``: the last one), or None (no ``ttl`` sent: the
provider's 5 minutes)."""
_RANK: Final = {None: 0, "5m": 0, "1h": 1}
_ROLES: Final = frozenset({"tools", "system", "messages", "tail"})


def _media(kind: str, b: Block) -> dict[str, Any]:
    """An image or document part, with what Anthropic's own part held beside its source
    (citations, a title, context)."""
    fields = b.meta.get(ANTHROPIC_FIELDS)
    part = {"type": kind, "source": anthropic_source(b)}
    return {**part, **fields} if isinstance(fields, dict) else part


def _image(b: Block) -> dict[str, Any]:
    return _media("image", b)


def _document(b: Block) -> dict[str, Any]:
    return _media("document", b)


def _own(b: Block) -> dict[str, Any] | None:
    """The Anthropic content block ``b`` keeps exactly, if any."""
    return native_item(b) if native_provider(b) == "anthropic" else None


def _result_item(item: str | Block) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    own = _own(item)
    if own is not None:
        return own
    return _image(item) if sendable(item, "anthropic", "result") == "image" else _document(item)


def _result_content(part: Part) -> str | list[dict[str, Any]]:
    items = result_items(part, "anthropic")
    if all(isinstance(item, str) for item in items):
        return "\n".join(str(item) for item in items)
    return [_result_item(item) for item in items]


def _tool_use(b: Block) -> dict[str, Any]:
    own = _own(b)
    call_id = provider_call_id(b.call_id or "")
    if own is not None:  # fields the model does not keep (a caller), sent back as received
        own["id"] = call_id
        return own
    return {
        "type": "tool_use",
        "id": call_id,
        "name": provider_tool_name(b.tool_id or ""),
        "input": msgspec.json.decode(b.text) if b.text else {},
    }


def _part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "tool_call":
        return _tool_use(b)
    if part.kind == "tool_result":
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": provider_call_id(b.call_id or ""),
            "content": _result_content(part),
        }
        if part.index < 0 or any(r.meta.get("is_error") for r in part.results):
            out["is_error"] = True
        return out
    if part.kind == "reasoning":
        return reasoning_item(b) or {}
    if part.kind == "provider":
        return native_item(b) or {}
    if part.kind == "image":
        return _image(b)
    if part.kind == "document":
        return _document(b)
    own = _own(b)
    if own is not None and own.get("type") == "text":  # a text with citations
        if own.get("text") != part.text:
            own["text"] = part.text  # the final text, its trailing whitespace removed
        return own
    return {"type": "text", "text": part.text}


def cache_control(ttl: str | None = None) -> dict[str, Any]:
    """A ``cache_control`` value (``ttl`` only when one is named)."""
    return {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}


def _requested(cache_ttl: CacheTTLs, role: str) -> str | None:
    ttl = cache_ttl.get(role) if isinstance(cache_ttl, Mapping) else cache_ttl
    if ttl not in _RANK:
        raise PolicyError(f"a TTL must be '5m' or '1h', got {ttl!r}", field="cache_ttl")
    return ttl


def breakpoint_ttls(
    cache_ttl: CacheTTLs, points: Sequence[int], system: bool
) -> tuple[str | None, dict[int, str | None]]:
    """The TTL of the system prompt's breakpoint (when ``system``) and of each checkpoint
    in ``points``. Anthropic refuses a longer TTL after a shorter one, so a breakpoint
    takes the longest TTL asked of itself or any later one (the later entry holds the
    earlier prefix anyway)."""
    if cache_ttl is not None and not isinstance(cache_ttl, str | Mapping):
        raise PolicyError(f"must be '5m', '1h' or a mapping, got {cache_ttl!r}", field="cache_ttl")
    if isinstance(cache_ttl, Mapping) and not set(cache_ttl) <= _ROLES:
        unknown = sorted(set(cache_ttl) - _ROLES)[0]
        raise PolicyError(f"unknown breakpoint role {unknown!r}", field="cache_ttl")
    ordered = sorted(set(points))
    roles = ["system"] if system else []
    roles += ["messages"] * max(0, len(ordered) - 1) + ["tail"] * bool(ordered)
    ttls = [_requested(cache_ttl, role) for role in roles]
    for i in range(len(ttls) - 2, -1, -1):
        if _RANK[ttls[i + 1]] > _RANK[ttls[i]]:
            ttls[i] = ttls[i + 1]
    system_ttl = ttls.pop(0) if system else None
    return system_ttl, dict(zip(ordered, ttls, strict=True))


def tools_ttl(cache_ttl: CacheTTLs, points: Sequence[int], system: bool) -> str | None:
    """The TTL of the breakpoint on the last tool: the one asked for ``"tools"``, or the
    longest of any later breakpoint (tools come first in the cached prefix)."""
    system_ttl, ttls = breakpoint_ttls(cache_ttl, points, system)
    asked = [_requested(cache_ttl, "tools"), system_ttl, *ttls.values()]
    return max(asked, key=lambda ttl: _RANK[ttl])


def _whole(part: Part) -> bool:
    """Whether ``part`` is a whole message of Anthropic's own (a system message)."""
    return part.kind == "provider" and part.block.type == PROVIDER_MESSAGE


def _segments(message: Message) -> list[tuple[Part, ...]]:
    """The parts of each payload message ``message`` becomes: runs of content parts,
    and each whole message of Anthropic's alone, in order."""
    out: list[tuple[Part, ...]] = []
    run: list[Part] = []
    for part in message.parts:
        if _whole(part):
            if run:
                out.append(tuple(run))
                run = []
            out.append((part,))
        else:
            run.append(part)
    if run:
        out.append(tuple(run))
    return out


def _split(message: Message) -> bool:
    """Whether ``message`` holds a whole message of Anthropic's (most hold none: then it
    is one payload message, built without segmenting)."""
    for p in message.parts:  # noqa: SIM110 (a loop: no generator for every message)
        if p.kind == "provider" and p.block.type == PROVIDER_MESSAGE:
            return True
    return False


def anthropic_messages(
    message: Message, points: Set[int], ttls: Mapping[int, str | None] | None = None
) -> list[dict[str, Any]]:
    """The payload messages of one plan message (one, or more around a system message
    kept exactly); parts on a checkpoint carry ``cache_control`` (see
    :func:`mark_checkpoints`)."""
    if not _split(message):
        items = [{"role": message.role, "content": [_part(part) for part in message.parts]}]
    else:
        items = [
            native_item(parts[0].block) or {}
            if _whole(parts[0])
            else {"role": message.role, "content": [_part(part) for part in parts]}
            for parts in _segments(message)
        ]
    if points:
        mark_checkpoints(items, message, points, ttls)
    return items


def _ttl(part: Part, points: Set[int], ttls: Mapping[int, str | None] | None) -> str | None:
    if not ttls:
        return None
    hit = [ttls.get(i) for i in (part.index, *part.indices) if i in points]
    return max(hit, key=lambda t: _RANK[t], default=None)


def mark_checkpoints(
    items: list[dict[str, Any]],
    message: Message,
    points: Set[int],
    ttls: Mapping[int, str | None] | None = None,
) -> None:
    """Add ``cache_control`` to the content parts of ``items`` (the payload messages
    :func:`anthropic_messages` built for ``message``) that fall on a checkpoint in
    ``points`` (with its TTL in ``ttls``, keyed like ``points``); a system message kept
    exactly takes it on its last content block."""
    if len(items) == 1 and items[0].get("role") == message.role:  # not a system message
        _mark_parts(message.parts, items[0], points, ttls)
        return
    for parts, item in zip(_segments(message), items, strict=True):
        if not _whole(parts[0]):
            _mark_parts(parts, item, points, ttls)
        elif parts[0].at(points):
            _mark_whole(item, _ttl(parts[0], points, ttls))


def _mark_parts(
    parts: Sequence[Part],
    item: dict[str, Any],
    points: Set[int],
    ttls: Mapping[int, str | None] | None,
) -> None:
    for part, content in zip(parts, item["content"], strict=True):
        if content.get("type") in _CACHEABLE and part.at(points):  # thinking takes none
            content["cache_control"] = cache_control(_ttl(part, points, ttls))


def _mark_whole(item: dict[str, Any], ttl: str | None) -> None:
    """A checkpoint on a system message: on its last content block (its string content
    as one text block), unless that block takes none."""
    content = item.get("content")
    if isinstance(content, str):
        content = item["content"] = [{"type": "text", "text": content}]
    if isinstance(content, list) and content and content[-1].get("type") in _MESSAGE_CACHEABLE:
        content[-1]["cache_control"] = cache_control(ttl)


def to_anthropic(
    system: str,
    blocks: Sequence[Block],
    cache_points: Sequence[int],
    system_cached: bool,
    cache_ttl: CacheTTLs = None,
) -> dict[str, Any]:
    """``{"system": [...], "messages": [...]}`` with ``cache_control`` on checkpoints
    (``cache_ttl``: see :data:`CacheTTLs`)."""
    points = set(cache_points)
    cached = system_cached and bool(system.strip())
    system_ttl, ttls = breakpoint_ttls(cache_ttl, cache_points, cached)
    messages = [
        item
        for m in plan_messages(blocks, "anthropic")
        for item in anthropic_messages(m, points, ttls)
    ]
    return anthropic_payload(system, messages, system_cached, system_ttl)


def anthropic_payload(
    system: str, messages: list[dict[str, Any]], system_cached: bool, system_ttl: str | None = None
) -> dict[str, Any]:
    """The payload around built ``messages``: the system prompt (cached or not) first."""
    if not system.strip():
        return {"messages": messages}
    sys_block: dict[str, Any] = {"type": "text", "text": system}
    if system_cached:
        sys_block["cache_control"] = cache_control(system_ttl)
    return {"system": [sys_block], "messages": messages}
