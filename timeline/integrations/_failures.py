"""A summarizer's failure raised to the caller, for adapters whose host raises it.

The library never lets a failed summarizer crash a render: it falls back to the
deterministic inventory summary (``CompactionPolicy.on_summary_failure``). A host such as
LangChain's ``SummarizationMiddleware`` raises instead, and leaves the history as it was.
:func:`watched` wraps a summarizer so that its exceptions are noted while they still reach
the library (which falls back as usual); :func:`raising_failures` then raises the first
one noted during the block, so the adapter can drop the render's result (nothing was
persisted) and the host sees the summarizer's own exception.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["raising_failures", "watched"]

_noted: contextvars.ContextVar[list[BaseException] | None] = contextvars.ContextVar(
    "timeline_summarizer_failures", default=None
)


def _note(exc: BaseException) -> None:
    # a list, not a value: a sync summarizer on the async path runs in a worker thread
    # with a copy of the context, and the copy shares the list
    noted = _noted.get()
    if noted is not None:
        noted.append(exc)


def _summarize(self: Any, request: Any) -> str:
    try:
        return str(self.inner.summarize(request))
    except Exception as exc:
        _note(exc)
        raise


def _summarize_sections(self: Any, request: Any) -> Any:
    try:
        return self.inner.summarize_sections(request)
    except Exception as exc:
        _note(exc)
        raise


async def _asummarize(self: Any, request: Any) -> str:
    try:
        return str(await self.inner.asummarize(request))
    except Exception as exc:
        _note(exc)
        raise


def _init(self: Any, inner: Any) -> None:
    self.inner = inner


def watched(summarizer: Any) -> Any:
    """``summarizer`` with the same protocols (sync, sectioned, async: only those it has),
    noting its exceptions for :func:`raising_failures`."""
    methods: dict[str, Any] = {"__init__": _init, "__doc__": "A watched summarizer."}
    if callable(getattr(summarizer, "summarize", None)):
        methods["summarize"] = _summarize
    if callable(getattr(summarizer, "summarize_sections", None)):
        methods["summarize_sections"] = _summarize_sections
    if callable(getattr(summarizer, "asummarize", None)):
        methods["asummarize"] = _asummarize
    return type("WatchedSummarizer", (), methods)(summarizer)


@contextlib.contextmanager
def raising_failures(on: bool = True) -> Iterator[None]:
    """Inside, a watched summarizer's first exception is raised at the block's end
    (when ``on``; otherwise the library's fallback stands)."""
    if not on:
        yield
        return
    noted: list[BaseException] = []
    token = _noted.set(noted)
    try:
        yield
    finally:
        _noted.reset(token)
    if noted:
        raise noted[0]
