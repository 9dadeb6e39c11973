"""LangChain v1 / LangGraph: ``TimelineMiddleware``, ``from_langchain``, ``to_langchain``.

``TimelineMiddleware(store, policy)`` goes in ``create_agent(..., middleware=[mw])``.
The conversation id is the run's ``thread_id``. Before every model call the state's new
messages are mirrored into that thread's timeline (by message id, so idempotent), the
model gets the rendered, compacted context instead of the raw state, and the timeline is
persisted after the call. For ``ChatAnthropic`` the cache checkpoints travel as
``cache_control`` on the content blocks. ``invoke`` and ``ainvoke`` both work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from timeline.compaction.policy import CompactionPolicy
from timeline.core.timeline import Timeline
from timeline.integrations import IntegrationError, missing_extra
from timeline.integrations._threads import TimelineCache, open_store
from timeline.model.errors import ConflictError
from timeline.model.persistence import IndexStore
from timeline.render.context import RenderedContext

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

from timeline.integrations._langchain_messages import (
    block_id,
    from_langchain,
    message_blocks,
    to_langchain,
)

__all__ = ["TimelineMiddleware", "from_langchain", "mirror", "to_langchain"]


def mirror(tl: Timeline, messages: Sequence[BaseMessage]) -> int:
    """Append the messages the timeline does not hold yet: those after the last one it
    knows (by message id). A human message starts a turn. Returns how many were new."""
    known = {b.id for b in tl.blocks}
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if block_id(messages[i], i) in known:
            start = i + 1
            break
    for i in range(start, len(messages)):
        message = messages[i]
        if isinstance(message, HumanMessage) or not tl.current_turn_id:
            tl.begin_turn()
        tl.extend(message_blocks(message, i))
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
