"""LangChain v1 / LangGraph: ``TimelineMiddleware``, ``from_langchain``, ``to_langchain``.

``TimelineMiddleware(store, policy)`` goes in ``create_agent(..., middleware=[mw])``.
The conversation id is the run's ``thread_id``. Before every model call the state's new
messages are mirrored into that thread's timeline (by message id, so idempotent), the
model gets the rendered, compacted context instead of the raw state, and the timeline is
persisted after the call. For ``ChatAnthropic`` the cache checkpoints travel as
``cache_control`` on the content blocks. ``invoke`` and ``ainvoke`` both work.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from timeline.compaction.policy import CompactionPolicy
from timeline.core.timeline import Timeline
from timeline.formats._plan import MISSING_RESULT_TEXT, Part, part_text, plan_messages
from timeline.integrations import IntegrationError, missing_extra
from timeline.integrations._threads import TimelineCache, open_store
from timeline.model import constructors as B
from timeline.model.block import Block
from timeline.model.errors import ConflictError, InvalidBlockError
from timeline.model.persistence import IndexStore
from timeline.model.reasoning import anthropic_thinking, reasoning_item
from timeline.render.context import RenderedContext

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

__all__ = ["TimelineMiddleware", "from_langchain", "to_langchain"]

_CACHE = {"type": "ephemeral"}
ID_PREFIX = "lc-"


# -- converters ----------------------------------------------------------------------


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


def _block_id(message: BaseMessage, position: int) -> str:
    """Stable block ids from the message id (or its content and position without one)."""
    if message.id:
        return f"{ID_PREFIX}{message.id}"
    digest = hashlib.sha1(
        f"{message.type}\x00{message.content!r}".encode(), usedforsecurity=False
    ).hexdigest()[:12]
    return f"{ID_PREFIX}p{position}-{digest}"


def _message_blocks(message: BaseMessage, position: int = 0) -> list[Block]:
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
    base = _block_id(message, position)
    return [
        Block(**{**_fields(b), "id": base if k == 0 else f"{base}.{k}"}) for k, b in enumerate(out)
    ]


def _list(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _fields(block: Block) -> dict[str, Any]:
    return {f: getattr(block, f) for f in block.__struct_fields__}


def from_langchain(messages: Sequence[BaseMessage]) -> list[Block]:
    """Blocks for LangChain messages: human text and images, AI text, tool calls, signed
    thinking (``assistant.thinking`` blocks; other reasoning content rides in the first
    block's ``meta["lc_thinking"]``), tool messages.
    Block ids derive from message ids, so converting again gives the same ids."""
    return [b for i, m in enumerate(messages) for b in _message_blocks(m, i)]


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
        for part in message.parts:
            if part.kind == "tool_result":
                results.append(_tool_message(part, points, cache_control))
            else:
                rest.append(_with_cache(_user_part(part), part, points, cache_control))
        if carry and results and isinstance(results[-1].content[0], dict):
            results[-1].content[0]["cache_control"] = dict(_CACHE)
        carry = False
        out.extend(results)
        if rest:
            out.append(HumanMessage(content=rest))
    return out


def _ai_message(parts: Sequence[Part], points: set[int], cache: bool) -> AIMessage:
    content: list[dict[str, Any] | str] = []
    calls = []
    thinking: list[dict[str, Any]] = []
    for part in parts:
        b = part.block
        thinking += b.meta.get("lc_thinking", [])
        if part.kind == "reasoning":
            content.append(reasoning_item(b) or {})
        elif part.kind == "tool_call":
            args = json.loads(b.text) if b.text else {}
            calls.append(
                {"name": b.tool_id or "", "args": args, "id": b.call_id, "type": "tool_call"}
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
        tool_call_id=b.call_id or "",
        name=b.tool_id,
        status="error" if error else "success",
    )


# -- middleware ------------------------------------------------------------------------


def mirror(tl: Timeline, messages: Sequence[BaseMessage]) -> int:
    """Append the messages the timeline does not hold yet: those after the last one it
    knows (by message id). A human message starts a turn. Returns how many were new."""
    known = {b.id for b in tl.blocks}
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if _block_id(messages[i], i) in known:
            start = i + 1
            break
    for i in range(start, len(messages)):
        message = messages[i]
        if isinstance(message, HumanMessage) or not tl.current_turn_id:
            tl.begin_turn()
        tl.extend(_message_blocks(message, i))
    return len(messages) - start


def _thread_id(request: ModelRequest[Any], default: str | None) -> str:
    info = getattr(request.runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    if not thread:
        try:
            from langgraph.config import get_config

            thread = get_config().get("configurable", {}).get("thread_id")
        except RuntimeError:  # not inside a runnable context
            thread = None
    if not thread:
        thread = default
    if not thread:
        raise IntegrationError(
            "TimelineMiddleware needs a thread id: invoke the agent with "
            'config={"configurable": {"thread_id": ...}} or pass default_thread_id='
        )
    return str(thread)


def _results(response: Any) -> list[BaseMessage]:
    if isinstance(response, AIMessage):
        return [response]
    inner = getattr(response, "model_response", response)
    return list(getattr(inner, "result", []))


def _is_anthropic(model: Any) -> bool:
    return type(model).__name__ == "ChatAnthropic" or "anthropic" in str(
        getattr(model, "_llm_type", "")
    )


class TimelineMiddleware(AgentMiddleware):
    """Bounded, compacted, persisted context for ``create_agent`` (see the module doc).

    ``store`` is an index store or its URL; ``policy`` the compaction policy (its budget
    bounds every model request); other keywords go to :class:`Timeline` (summarizer,
    token_counter, hooks). ``cache_control=None`` marks cache checkpoints for
    ``ChatAnthropic`` only. ``default_thread_id`` serves runs without a ``thread_id``.
    """

    def __init__(
        self,
        store: IndexStore | str,
        policy: CompactionPolicy | None = None,
        *,
        cache_control: bool | None = None,
        default_thread_id: str | None = None,
        **timeline_kwargs: Any,
    ) -> None:
        super().__init__()
        self.store = open_store(store)
        self.policy = policy if policy is not None else CompactionPolicy()
        self.cache_control = cache_control
        self.default_thread_id = default_thread_id
        self.timelines = TimelineCache(self.store, self.policy, timeline_kwargs)

    def timeline(self, thread_id: str) -> Timeline:
        """The thread's timeline (loaded from the store on first use)."""
        return self.timelines.get(thread_id)

    def _prepare(self, tl: Timeline, request: ModelRequest[Any]) -> ModelRequest[Any]:
        mirror(tl, request.messages)
        view = tl.render(request.system_prompt or "")
        return self._override(view, request)

    def _override(self, view: RenderedContext, request: ModelRequest[Any]) -> ModelRequest[Any]:
        cache = (
            self.cache_control if self.cache_control is not None else _is_anthropic(request.model)
        )
        provider = "anthropic" if _is_anthropic(request.model) else None
        messages = to_langchain(view, cache_control=cache, system=False, provider=provider)
        return request.override(messages=messages)  # type: ignore[arg-type]

    def _record(self, tl: Timeline, request: ModelRequest[Any], response: Any) -> list[BaseMessage]:
        results = _results(response)
        mirror(tl, [*request.messages, *results])
        for message in results:
            usage = getattr(message, "usage_metadata", None) or {}
            if usage.get("input_tokens"):
                tl.record_usage(prompt_tokens=int(usage["input_tokens"]))
        return results

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Any],
    ) -> Any:
        thread = _thread_id(request, self.default_thread_id)
        tl = self.timelines.get(thread)
        response = handler(self._prepare(tl, request))
        self._record(tl, request, response)
        try:
            tl.persist(self.store)
        except ConflictError:  # another worker persisted this thread: take theirs, add ours
            self.timelines.forget(thread)
            tl = self.timelines.get(thread)
            mirror(tl, [*request.messages, *_results(response)])
            tl.persist(self.store)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[Any]],
    ) -> Any:
        thread = _thread_id(request, self.default_thread_id)
        tl = await self.timelines.aget(thread)
        mirror(tl, request.messages)
        view = await tl.arender(request.system_prompt or "")
        response = await handler(self._override(view, request))
        self._record(tl, request, response)
        try:
            await tl.apersist(self.store)
        except ConflictError:
            self.timelines.forget(thread)
            tl = await self.timelines.aget(thread)
            mirror(tl, [*request.messages, *_results(response)])
            await tl.apersist(self.store)
        return response
