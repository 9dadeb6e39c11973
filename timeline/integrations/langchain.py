"""LangChain v1 / LangGraph: ``TimelineMiddleware``, ``from_langchain``, ``to_langchain``.

``TimelineMiddleware(store, policy)`` goes in ``create_agent(..., middleware=[mw])``, in
place of ``SummarizationMiddleware``. The conversation id is the run's ``thread_id``.

* Before each model call (``before_model``) the state's new messages are mirrored into
  the thread's timeline and the timeline compacts when due; a new summary replaces the
  messages it covers in the agent's state, shaped as ``SummarizationMiddleware`` shapes
  its own: a separate ``HumanMessage`` with ``lc_source="summarization"``.
* The model call (``wrap_model_call``) gets the request's own messages, bounded by the
  budget with the system prompt counted (a compaction the render makes takes effect at
  once; a block too big for any cut is sent truncated) and, for ``ChatAnthropic``, the
  cache checkpoints as ``cache_control``. Under the budget nothing changes.
* The timeline is persisted once per model call, after it (the call's messages and any
  summary made before it), under a lock per (store, thread) for threads and event loops;
  it reloads when another writer moved the store, and a conflicting write is applied
  again to the reloaded timeline.

A summarizer that is a LangChain chat model (``summarizer=ChatOpenAI(...)``) writes the
summaries; its calls, like any LangChain call a summarizer makes, stay internal (off
``stream_mode="messages"`` and ``astream_events``), as ``SummarizationMiddleware``'s do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from timeline._compaction import CompactionPolicy
from timeline._core import Timeline
from timeline._driver import TOOL_SPECS, compact_context_tool
from timeline._model import IndexStore, ToolSpec
from timeline._render import RenderedContext
from timeline.integrations import IntegrationError, missing_extra
from timeline.integrations._failures import raising_failures, watched
from timeline.integrations._threads import TimelineCache, open_store, store_key
from timeline.integrations._tools import host_tool_specs

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

from timeline._model import name_home
from timeline.integrations._langchain_messages import from_langchain, to_langchain
from timeline.integrations._langchain_restore import restored
from timeline.integrations._langchain_state import (
    OrphanPolicy,
    OrphanToolMessageWarning,
    compose,
    ensure_ids,
    internal_calls,
    mirror,
    state_update,
    thread_id,
)
from timeline.integrations._langchain_summarizers import (
    ChatModelSummarizer,
    MessagesSummarizer,
    as_summarizer,
)

try:  # langchain 1.4: internal calls are hidden by this transformer (1.5: by their tag)
    from langchain.agents.middleware.internal_call_transformer import InternalCallTransformer

    _TRANSFORMERS: tuple[Any, ...] = (InternalCallTransformer,)
except ImportError:  # pragma: no cover - older langchain
    _TRANSFORMERS = ()

__all__ = [
    "ChatModelSummarizer",
    "MessagesSummarizer",
    "OrphanToolMessageWarning",
    "TimelineMiddleware",
    "from_langchain",
    "mirror",
    "to_langchain",
]


def _is_anthropic(model: Any) -> bool:
    return type(model).__name__ == "ChatAnthropic" or "anthropic" in str(
        getattr(model, "_llm_type", "")
    )


def _definition(tool: Any) -> dict[str, Any]:
    """A bound tool (a ``BaseTool``, a function, a schema or a provider's dict) as a
    definition mapping; one LangChain cannot convert passes through as it is."""
    if isinstance(tool, dict):
        return tool
    try:
        return dict(convert_to_openai_tool(tool))
    except Exception:  # anything LangChain cannot describe is not counted
        return {}


def _results(response: Any) -> list[BaseMessage]:
    if isinstance(response, AIMessage):
        return [response]
    inner = getattr(response, "model_response", response)
    return list(getattr(inner, "result", []))


class TimelineMiddleware(AgentMiddleware):
    """Bounded, compacted, persisted context for ``create_agent`` (see the module doc).

    ``store`` is an index store or its URL; ``policy`` the compaction policy (its budget
    bounds every model request); ``summarizer`` what ``SummarizationMiddleware`` takes (a
    chat model or its name, a function or ``Runnable`` of the messages to summarize) or
    any timeline summarizer (None: the deterministic one); other keywords go to :class:`Timeline`
    (token_counter, hooks). ``cache_control=None`` marks cache checkpoints for
    ``ChatAnthropic`` only. ``default_thread_id`` serves runs without a ``thread_id``.
    ``orphan_tool_messages``: a ``ToolMessage`` whose call is not in the history is not
    recorded, with an :class:`OrphanToolMessageWarning` (``"drop"``), or recorded as
    text (``"text"``); the model gets it as the state has it either way.
    ``on_summary_failure``: a summarizer that raises gets the library's fallback summary
    (``"fallback"``), or its exception reaches the agent with the history unchanged, as
    with ``SummarizationMiddleware`` (``"raise"``).
    """

    transformers = _TRANSFORMERS

    def __init__(
        self,
        store: IndexStore | str,
        policy: CompactionPolicy | None = None,
        *,
        summarizer: Any = None,
        cache_control: bool | None = None,
        default_thread_id: str | None = None,
        orphan_tool_messages: OrphanPolicy = "drop",
        on_summary_failure: Literal["fallback", "raise"] = "fallback",
        **timeline_kwargs: Any,
    ) -> None:
        super().__init__()
        self.store = open_store(store)
        self.policy = policy if policy is not None else CompactionPolicy()
        self.cache_control = cache_control
        self.default_thread_id = default_thread_id
        if orphan_tool_messages not in ("drop", "text"):
            raise IntegrationError(
                f"TimelineMiddleware orphan_tool_messages must be 'drop' or 'text', "
                f"not {orphan_tool_messages!r}"
            )
        self.orphan_tool_messages: OrphanPolicy = orphan_tool_messages
        if on_summary_failure not in ("fallback", "raise"):
            raise IntegrationError(
                f"TimelineMiddleware on_summary_failure must be 'fallback' or 'raise', "
                f"not {on_summary_failure!r}"
            )
        self.on_summary_failure = on_summary_failure
        if summarizer is not None:
            summarizer = as_summarizer(summarizer)
            raising = on_summary_failure == "raise"
            timeline_kwargs["summarizer"] = watched(summarizer) if raising else summarizer
        self.timelines = TimelineCache(
            self.store, self.policy, timeline_kwargs, key=store_key(store)
        )
        self._systems: dict[str, str] = {}
        self._tools: dict[str, tuple[ToolSpec, ...]] = {}

    def timeline(self, thread_id: str) -> Timeline:
        """The thread's timeline (loaded from the store on first use)."""
        return self.timelines.get(thread_id)

    def compact_context_tool(self) -> BaseTool:
        """``compact_context(focus)`` as a LangChain tool for ``create_agent(tools=...)``:
        the agent compacts its own thread at a moment it chooses (between two tasks), the
        summary keeping ``focus`` in view; the next model request starts with the summary.
        The thread is the run's ``thread_id`` (else ``default_thread_id``); its last
        request's system prompt and tools are counted against the budget; the compaction
        is persisted at once."""

        def compact_context(focus: str = "") -> str:
            thread = thread_id(None, self.default_thread_id)
            system, tools = self._systems.get(thread, ""), self._tools.get(thread, ())

            def run(tl: Timeline) -> str:
                with internal_calls():
                    return compact_context_tool(tl, system, tools)({"focus": focus}).text

            with self.timelines.lock(thread).hold():
                return self.timelines.commit(thread, run)

        return StructuredTool.from_function(
            compact_context,
            name="compact_context",
            description=str(TOOL_SPECS["compact_context"]["description"]),
        )

    def _render(
        self, tl: Timeline, system: str, tools: tuple[ToolSpec, ...] = ()
    ) -> RenderedContext:
        """The timeline rendered with the request's tools, the summarizer's calls
        internal; with ``on_summary_failure="raise"`` its failure raised (the caller drops
        the timeline)."""
        with internal_calls(), raising_failures(self.on_summary_failure == "raise"):
            return tl.render(system, tools=tools)

    async def _arender(
        self, tl: Timeline, system: str, tools: tuple[ToolSpec, ...] = ()
    ) -> RenderedContext:
        """:meth:`_render` for async code."""
        with internal_calls(), raising_failures(self.on_summary_failure == "raise"):
            return await tl.arender(system, tools=tools)

    def _request_tools(self, thread: str, request: ModelRequest[Any]) -> tuple[ToolSpec, ...]:
        """The function tools the agent binds to this model call (kept for the thread's
        next ``before_model``), counted against the budget."""
        tools = host_tool_specs(_definition(t) for t in getattr(request, "tools", None) or ())
        self._tools[thread] = tools
        return tools

    # -- before each model call: mirror, compact, rewrite the state ------------------------

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Mirror the state, compact when due; a new summary replaces what it covers."""
        thread = thread_id(runtime, self.default_thread_id)
        messages = list(state["messages"])
        ensure_ids(messages)
        system, tools = self._systems.get(thread, ""), self._tools.get(thread, ())

        def change(tl: Timeline) -> dict[str, Any] | None:
            full = [*restored(tl, messages), *messages]
            mirror(tl, full, self.orphan_tool_messages)
            view = self._render(tl, system, tools)
            return state_update(full, len(full) - len(messages), tl, view)

        with self.timelines.lock(thread).hold():
            return self.timelines.apply(thread, change)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """:meth:`before_model` for ``ainvoke`` / ``astream``."""
        thread = thread_id(runtime, self.default_thread_id)
        messages = list(state["messages"])
        ensure_ids(messages)
        system, tools = self._systems.get(thread, ""), self._tools.get(thread, ())

        async def change(tl: Timeline) -> dict[str, Any] | None:
            full = [*restored(tl, messages), *messages]
            mirror(tl, full, self.orphan_tool_messages)
            view = await self._arender(tl, system, tools)
            return state_update(full, len(full) - len(messages), tl, view)

        async with self.timelines.lock(thread).ahold():
            return await self.timelines.aapply(thread, change)

    # -- the model call -----------------------------------------------------------------

    def _state_messages(self, request: ModelRequest[Any]) -> list[BaseMessage]:
        state = getattr(request, "state", None) or {}
        messages = list(state.get("messages", request.messages))
        ensure_ids(messages)
        return messages

    def _compose(
        self, tl: Timeline, view: RenderedContext, request: ModelRequest[Any]
    ) -> list[BaseMessage]:
        anthropic = _is_anthropic(request.model)
        cache = self.cache_control if self.cache_control is not None else anthropic
        provider = "anthropic" if anthropic else None
        return compose(request.messages, tl, view, cache_control=cache, provider=provider)

    def _record(self, tl: Timeline, state: Sequence[BaseMessage], response: Any) -> None:
        results = _results(response)
        mirror(tl, [*state, *results], self.orphan_tool_messages)
        for message in results:
            usage = getattr(message, "usage_metadata", None) or {}
            if usage.get("input_tokens"):
                details = usage.get("input_token_details") or {}
                read, written = details.get("cache_read"), details.get("cache_creation")
                tl.record_usage(
                    prompt_tokens=int(usage["input_tokens"]),
                    cache_read_tokens=read if isinstance(read, int) else None,
                    cache_write_tokens=written if isinstance(written, int) else None,
                )

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Any],
    ) -> Any:
        thread = thread_id(request.runtime, self.default_thread_id)
        system = request.system_prompt or ""
        self._systems[thread] = system
        tools = self._request_tools(thread, request)
        state = self._state_messages(request)

        def prepare(tl: Timeline) -> list[BaseMessage]:
            mirror(tl, state, self.orphan_tool_messages)
            view = self._render(tl, system, tools)
            return self._compose(tl, view, request)

        lock = self.timelines.lock(thread)
        with lock.hold():
            messages = self.timelines.apply(thread, prepare)
        response = handler(request.override(messages=messages))  # type: ignore[arg-type]
        with lock.hold():
            self.timelines.commit(thread, lambda tl: self._record(tl, state, response))
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[Any]],
    ) -> Any:
        thread = thread_id(request.runtime, self.default_thread_id)
        system = request.system_prompt or ""
        self._systems[thread] = system
        tools = self._request_tools(thread, request)
        state = self._state_messages(request)

        async def prepare(tl: Timeline) -> list[BaseMessage]:
            mirror(tl, state, self.orphan_tool_messages)
            view = await self._arender(tl, system, tools)
            return self._compose(tl, view, request)

        async def record(tl: Timeline) -> None:
            self._record(tl, state, response)

        lock = self.timelines.lock(thread)
        async with lock.ahold():
            messages = await self.timelines.aapply(thread, prepare)
        response = await handler(request.override(messages=messages))  # type: ignore[arg-type]
        async with lock.ahold():
            await self.timelines.acommit(thread, record)
        return response


name_home(__name__, __all__, globals())
