"""LangChain messages <-> blocks for :mod:`timeline.integrations.langchain`: human text
and images, AI text and tool calls, signed thinking and other reasoning content, tool
messages; and back from a rendered view, tool pairs intact, with ``cache_control`` where
``ChatAnthropic`` takes it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from timeline._formats import MISSING_RESULT_TEXT, Part, part_text, plan_messages
from timeline._model import (
    CONV_RANGE_SUMMARY,
    Block,
    InvalidBlockError,
    anthropic_compaction,
    anthropic_thinking,
    given_call_id,
    native_item,
    provider_block,
    reasoning_item,
)
from timeline._model import constructors as B
from timeline._render import RenderedContext
from timeline.integrations import IntegrationError, missing_extra

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        message_to_dict,
        messages_from_dict,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

__all__ = [
    "ID_PREFIX",
    "SUMMARY_ID_PREFIX",
    "SUMMARY_PREFIX",
    "block_id",
    "from_langchain",
    "held_message",
    "is_own_summary",
    "message_blocks",
    "message_head",
    "own_summaries",
    "summary_message",
    "to_langchain",
    "with_cache_control",
]

_CACHE = {"type": "ephemeral"}
ID_PREFIX = "lc-"
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"
"""How ``SummarizationMiddleware`` opens its summary message (ours reads the same)."""
SUMMARY_ID_PREFIX = "timeline-summary-"
MESSAGE_META = "lc_message"
"""The meta key under which a message's first block holds the message itself."""


def summary_message(block: Block) -> HumanMessage:
    """The summary as ``SummarizationMiddleware`` shapes it: a separate ``HumanMessage``
    with ``lc_source="summarization"``; its id names the summary block."""
    return HumanMessage(
        content=f"{SUMMARY_PREFIX}{block.text}",
        additional_kwargs={"lc_source": "summarization"},
        id=f"{SUMMARY_ID_PREFIX}{block.id}",
    )


def own_summaries(blocks: Iterable[Block]) -> dict[str, Block]:
    """The summary blocks among ``blocks`` (a timeline's), by the id of the summary
    message :func:`summary_message` makes of each."""
    return {f"{SUMMARY_ID_PREFIX}{b.id}": b for b in blocks if b.type == CONV_RANGE_SUMMARY}


def is_own_summary(message: BaseMessage, summaries: Mapping[str, Block]) -> bool:
    """A summary message this module made of one of ``summaries`` (see
    :func:`own_summaries`): its id names the summary and it says what the summary says.
    Recognised by what the timeline holds, so a message that only looks like one (an id
    of the same shape) is the user's, mirrored like any other."""
    if not isinstance(message, HumanMessage):
        return False
    block = summaries.get(str(message.id or ""))
    return block is not None and message.content == f"{SUMMARY_PREFIX}{block.text}"


def message_head(block: Block) -> str:
    """The id of the first block of the message ``block`` belongs to (a message's blocks
    are its first block's id, then that id with ``.1``, ``.2``...)."""
    return block.id.split(".")[0]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for item in content or ():
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
    return "\n".join(p for p in parts if p)


def _image_of(item: Any) -> tuple[str, bytes] | None:
    """(mime, bytes) of a base64 image content block in any of LangChain's shapes."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    try:
        if kind == "image_url":
            image_url = item["image_url"]
            url = str(image_url["url"] if isinstance(image_url, dict) else image_url)
            if url.startswith("data:") and ";base64," in url:
                head, encoded = url[5:].split(";base64,", 1)
                return head, base64.b64decode(encoded)
        elif kind == "image":
            source = item.get("source") or {}
            data = item.get("base64") or item.get("data") or source.get("data")
            mime = str(item.get("mime_type") or source.get("media_type") or "image/png")
            if isinstance(data, str) and item.get("source_type", "base64") == "base64":
                return mime, base64.b64decode(data)
    except (KeyError, binascii.Error, ValueError):
        return None
    return None


def _thinking_of(content: Any) -> tuple[list[Block], list[dict[str, Any]]]:
    """Signed Anthropic thinking as ``assistant.thinking`` blocks (counted in the budget,
    sent back unchanged); any other thinking/reasoning content kept as raw items."""
    blocks: list[Block] = []
    other: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("thinking", "redacted_thinking"):
            try:
                blocks.append(anthropic_thinking({k: v for k, v in item.items() if k != "index"}))
                continue
            except InvalidBlockError:
                pass
        if kind in ("thinking", "redacted_thinking", "reasoning"):
            other.append(dict(item))
    return blocks, other


_SERVER_TOOL_TYPES = frozenset({"server_tool_use", "mcp_tool_use", "container_upload"})


def _native_of(content: Any) -> list[Block]:
    """Anthropic server-tool blocks (``server_tool_use``, ``*_tool_result``, MCP) and
    compaction blocks in an AI message's content, as opaque provider blocks: kept exactly
    (sent back to Anthropic as they came), their text form counted and searchable."""
    out: list[Block] = []
    for item in content if isinstance(content, list) else ():
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str):
            continue
        raw = {k: v for k, v in item.items() if k != "index"}  # a streamed chunk's position
        try:
            if kind == "compaction":
                out.append(anthropic_compaction(raw))
            elif kind in _SERVER_TOOL_TYPES or kind.endswith("_tool_result"):
                out.append(provider_block("anthropic", raw))
        except InvalidBlockError:
            continue  # not an Anthropic block after all: the message keeps it as it is
    return out


def block_id(message: BaseMessage, position: int) -> str:
    """Stable block ids from the message id (or its content and position without one)."""
    if message.id:
        return f"{ID_PREFIX}{message.id}"
    digest = hashlib.sha1(
        f"{message.type}\x00{message.content!r}".encode(), usedforsecurity=False
    ).hexdigest()[:12]
    return f"{ID_PREFIX}p{position}-{digest}"


def message_blocks(message: BaseMessage, position: int = 0) -> list[Block]:
    out: list[Block] = []
    if isinstance(message, ToolMessage):
        text = _text_of(message.content)
        images = [i for i in map(_image_of, _list(message.content)) if i is not None]
        mime, data = images[0] if images else ("text/plain", None)
        out.append(
            B.tool_result(
                message.tool_call_id,
                text,
                tool_id=message.name,
                is_error=message.status == "error",
                mime=mime,
                data=data,
            )
        )
    elif isinstance(message, AIMessage):
        signed, thinking = _thinking_of(message.content)
        signed += _native_of(message.content)
        text = _text_of(message.content)
        if text or not message.tool_calls:
            out.append(B.assistant_completion(text))
        for call in message.tool_calls:
            out.append(B.tool_call(call["name"], call["args"], call_id=call["id"]))
        if thinking:  # kept with the message so it goes back to the model
            first = out[0]
            out[0] = Block(**{**_fields(first), "meta": {**first.meta, "lc_thinking": thinking}})
        out = signed + out
    elif isinstance(message, HumanMessage | SystemMessage):
        text = _text_of(message.content)
        if isinstance(message, SystemMessage):
            out.append(B.note(text))
        elif text or not message.content:
            out.append(B.user_prompt(text))
        for k, image in enumerate(i for i in map(_image_of, _list(message.content)) if i):
            out.append(B.user_attachment(name=f"image-{k + 1}", mime=image[0], data=image[1]))
    else:
        raise IntegrationError(f"cannot convert a LangChain {type(message).__name__}")
    base = block_id(message, position)
    held = {MESSAGE_META: message_to_dict(message)}
    return [
        Block(
            **{
                **_fields(b),
                "id": base if k == 0 else f"{base}.{k}",
                "meta": {**b.meta, **held} if k == 0 else b.meta,
            }
        )
        for k, b in enumerate(out)
    ]


def held_message(block: Block) -> BaseMessage | None:
    """The message a block holds (the first block of each mirrored message holds it, as
    LangChain serializes it), else None."""
    data = block.meta.get(MESSAGE_META)
    return messages_from_dict([data])[0] if isinstance(data, dict) else None


def _list(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _fields(block: Block) -> dict[str, Any]:
    return {f: getattr(block, f) for f in block.__struct_fields__}


def from_langchain(messages: Sequence[BaseMessage]) -> list[Block]:
    """Blocks for LangChain messages: human text and images, AI text, tool calls, signed
    thinking (``assistant.thinking`` blocks; other reasoning content rides in the first
    block's ``meta["lc_thinking"]``), tool messages.
    Block ids derive from message ids, so converting again gives the same ids."""
    return [b for i, m in enumerate(messages) for b in message_blocks(m, i)]


def _with_cache(item: dict[str, Any], part: Part, points: set[int], on: bool) -> dict[str, Any]:
    if on and part.at(points):
        item["cache_control"] = dict(_CACHE)
    return item


def _user_part(part: Part) -> dict[str, Any]:
    b = part.block
    if part.kind == "image":
        data = base64.b64encode(b.data or b"").decode("ascii")
        return {"type": "image", "base64": data, "mime_type": b.mime}
    if part.kind == "document":
        data = base64.b64encode(b.data or b"").decode("ascii")
        return {"type": "file", "base64": data, "mime_type": b.mime}
    return {"type": "text", "text": part_text(b)}


def to_langchain(
    view: RenderedContext,
    *,
    cache_control: bool = False,
    system: bool = True,
    provider: str | None = None,
) -> list[BaseMessage]:
    """LangChain messages for a rendered view: tool pairs intact, summaries and pinned
    blocks as human text. ``cache_control=True`` marks the view's cache checkpoints the
    way ``ChatAnthropic`` sends them; ``system=False`` leaves the system prompt out;
    ``provider="anthropic"`` includes signed thinking blocks (only Anthropic takes them)."""
    points = set(view.cache_points)
    out: list[BaseMessage] = []
    if system and view.system:
        item: dict[str, Any] = {"type": "text", "text": view.system}
        if cache_control and view.system_cached:
            item["cache_control"] = dict(_CACHE)
        out.append(SystemMessage(content=[item]))
    carry = False
    for message in plan_messages(view.blocks, provider):
        if message.role == "assistant":
            out.append(_ai_message(message.parts, points, cache_control))
            # ChatAnthropic drops cache_control on tool_use blocks: a checkpoint on a call
            # moves to the end of its results, which always follow it
            carry = cache_control and any(
                p.kind == "tool_call" and p.at(points) for p in message.parts
            )
            continue
        rest: list[dict[str, Any] | str] = []
        results: list[ToolMessage] = []
        summaries: list[BaseMessage] = []
        for part in message.parts:
            if part.kind == "tool_result":
                results.append(_tool_message(part, points, cache_control))
            elif part.block.type == CONV_RANGE_SUMMARY:
                summaries.append(
                    _cached(summary_message(part.block), part.at(points) and cache_control)
                )
            else:
                rest.append(_with_cache(_user_part(part), part, points, cache_control))
        if carry and results and isinstance(results[-1].content[0], dict):
            results[-1].content[0]["cache_control"] = dict(_CACHE)
        carry = False
        out.extend(results)
        out.extend(summaries)
        if rest:
            out.append(HumanMessage(content=rest))
    return out


def _cached(message: BaseMessage, on: bool) -> BaseMessage:
    return with_cache_control(message) if on else message


def with_cache_control(message: BaseMessage) -> BaseMessage:
    """A copy of ``message`` whose last content block carries an Anthropic cache
    checkpoint (a string content becomes one text block)."""
    content = message.content
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    )
    for k in range(len(blocks) - 1, -1, -1):
        if isinstance(blocks[k], dict) and blocks[k].get("type") not in (
            "thinking",
            "redacted_thinking",
        ):
            blocks[k] = {**blocks[k], "cache_control": dict(_CACHE)}
            break
        if isinstance(blocks[k], str):
            blocks[k] = {"type": "text", "text": blocks[k], "cache_control": dict(_CACHE)}
            break
    return message.model_copy(update={"content": blocks})


def _ai_message(parts: Sequence[Part], points: set[int], cache: bool) -> AIMessage:
    content: list[dict[str, Any] | str] = []
    calls = []
    thinking: list[dict[str, Any]] = []
    for part in parts:
        b = part.block
        thinking += b.meta.get("lc_thinking", [])
        if part.kind == "reasoning":
            content.append(reasoning_item(b) or {})
        elif part.kind == "provider":  # the provider's own item, in its place
            content.append(native_item(b) or {})
        elif part.kind == "tool_call":
            args = json.loads(b.text) if b.text else {}
            calls.append(
                {"name": b.tool_id or "", "args": args, "id": given_call_id(b), "type": "tool_call"}
            )
        elif part_text(b):
            content.append(_with_cache({"type": "text", "text": part_text(b)}, part, points, cache))
    ids = [p.block.id for p in parts if p.block.id]
    message_id = (
        ids[0][len(ID_PREFIX) :].split(".")[0] if ids and ids[0].startswith(ID_PREFIX) else None
    )
    return AIMessage(content=[*thinking, *content], tool_calls=calls, id=message_id)


def _tool_message(part: Part, points: set[int], cache: bool) -> ToolMessage:
    b = part.block
    if part.index < 0:
        text, error = MISSING_RESULT_TEXT, True
    else:
        text = "\n".join(r.text for r in part.results)
        error = any(r.meta.get("is_error") for r in part.results)
    content: list[dict[str, Any] | str] = [
        _with_cache({"type": "text", "text": text}, part, points, cache)
    ]
    for r in part.results:
        if r.data is not None and r.mime.startswith("image/"):
            data = base64.b64encode(r.data).decode("ascii")
            content.append({"type": "image", "base64": data, "mime_type": r.mime})
    return ToolMessage(
        content=content,
        tool_call_id=given_call_id(b),
        name=b.tool_id,
        status="error" if error else "success",
    )
