"""Summarizers for :mod:`timeline.integrations.langchain`, taking what
``SummarizationMiddleware`` takes as its ``model`` / ``summarizer``.

* a LangChain chat model (or its ``"provider:model"`` name): :class:`ChatModelSummarizer`
  calls it with the library's summary prompt;
* a function of the messages to summarize returning the text (sync or async), or a
  ``Runnable`` doing the same: :class:`MessagesSummarizer` gives it the covered blocks as
  LangChain messages (a previous summary first, as a summary message);
* anything else is taken as a timeline summarizer as it is.

Every LangChain call they make is internal (:func:`internal_calls`): kept off the agent's
streams, as ``SummarizationMiddleware`` keeps its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from timeline._compaction import AsyncLLMSummarizer, LLMSummarizer, SummaryRequest
from timeline._model import TURN_HEADER, Block
from timeline._render import RenderedContext
from timeline.integrations import missing_extra
from timeline.integrations._langchain_messages import SUMMARY_PREFIX, held_message, to_langchain
from timeline.integrations._langchain_state import internal_calls

try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
    from langchain_core.runnables import Runnable
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

__all__ = [
    "AsyncMessagesSummarizer",
    "ChatModelSummarizer",
    "MessagesSummarizer",
    "as_summarizer",
    "request_messages",
]


class ChatModelSummarizer:
    """A summarizer over a LangChain chat model (the library's summary prompt; the
    model's calls internal)."""

    def __init__(self, model: BaseChatModel, tool_output_chars: int = 2000) -> None:
        self.model = model
        self._sync = LLMSummarizer(self._complete, tool_output_chars)
        self._async = AsyncLLMSummarizer(self._acomplete, tool_output_chars)

    def _messages(self, system: str, prompt: str) -> list[BaseMessage]:
        return [SystemMessage(system), HumanMessage(prompt)]

    def _complete(self, system: str, prompt: str) -> str:
        with internal_calls():
            return self.model.invoke(self._messages(system, prompt)).text

    async def _acomplete(self, system: str, prompt: str) -> str:
        with internal_calls():
            reply = await self.model.ainvoke(self._messages(system, prompt))
        return reply.text

    def summarize(self, request: SummaryRequest) -> str:
        return self._sync.summarize(request)

    async def asummarize(self, request: SummaryRequest) -> str:
        return await self._async.asummarize(request)


def request_messages(request: SummaryRequest) -> list[BaseMessage]:
    """The blocks a summary covers as LangChain messages: each mirrored message as the
    agent's state had it (its first block holds it), the rest converted; a previous
    summary first, as the summary message the agent saw."""
    out: list[BaseMessage] = []
    run: list[Block] = []  # blocks holding no message (not mirrored): converted

    def flush() -> None:
        if any(b.type != TURN_HEADER for b in run):
            view = RenderedContext("", tuple(run), (), lambda: 0, None, len(run))
            out.extend(to_langchain(view, system=False))
        run.clear()

    restored: set[str] = set()
    for block in request.blocks:
        message = held_message(block)
        if message is not None:
            flush()
            out.append(message)
            restored.add(block.id)
        elif block.id.split(".")[0] not in restored:
            run.append(block)
    flush()
    if request.previous_summary:
        out.insert(0, HumanMessage(f"{SUMMARY_PREFIX}{request.previous_summary}"))
    return out


def _text(out: object) -> str:
    if not isinstance(out, str):
        raise TypeError(f"`summarizer` must return a str, got {type(out).__name__}")
    return out


class MessagesSummarizer:
    """A function (or ``Runnable``) of the messages to summarize, returning the summary."""

    def __init__(self, fn: Callable[[list[BaseMessage]], str] | Runnable[Any, Any]) -> None:
        self.fn = fn

    def summarize(self, request: SummaryRequest) -> str:
        messages = request_messages(request)
        with internal_calls():
            if isinstance(self.fn, Runnable):
                return _text(self.fn.invoke(messages))
            return _text(self.fn(messages))


class AsyncMessagesSummarizer:
    """An async function (or a ``Runnable``, awaited) of the messages to summarize."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    async def asummarize(self, request: SummaryRequest) -> str:
        messages = request_messages(request)
        with internal_calls():
            if isinstance(self.fn, Runnable):
                return _text(await self.fn.ainvoke(messages))
            return _text(await self.fn(messages))


class _RunnableSummarizer(MessagesSummarizer, AsyncMessagesSummarizer):
    """A ``Runnable``: invoked on the sync path, awaited on the async one."""


def as_summarizer(summarizer: Any) -> Any:
    """What ``TimelineMiddleware(summarizer=...)`` was given, as a timeline summarizer."""
    if isinstance(summarizer, str):
        from langchain.chat_models import init_chat_model

        summarizer = init_chat_model(summarizer)
    if isinstance(summarizer, BaseChatModel):
        return ChatModelSummarizer(summarizer)
    if isinstance(summarizer, Runnable):
        return _RunnableSummarizer(summarizer)
    if any(hasattr(summarizer, m) for m in ("summarize", "asummarize", "summarize_sections")):
        return summarizer
    if inspect.iscoroutinefunction(summarizer):
        return AsyncMessagesSummarizer(summarizer)
    if callable(summarizer):
        return MessagesSummarizer(summarizer)
    return summarizer
