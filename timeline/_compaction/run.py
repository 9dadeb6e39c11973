"""Running a summarizer safely: sync or async, with the policy's timeout, and the
deterministic inventory as the fallback when it fails (exception, timeout, empty text).
Compaction never crashes the loop."""

from __future__ import annotations

import asyncio
import concurrent.futures

from timeline._compaction.summarizers._sentences import clip_lines
from timeline._compaction.summarizers.base import (
    AsyncSummarizer,
    SectionedSummarizer,
    Summarizer,
    SummaryRequest,
    SummaryResult,
    within,
)
from timeline._compaction.summarizers.inventory import InventorySummarizer
from timeline._model import AsyncSummarizerError, log

__all__ = ["summarize_async", "summarize_sync"]

_FALLBACK = InventorySummarizer()


class _OwnError(Exception):
    """The summarizer's own exception (its own ``TimeoutError`` included), kept apart from
    the policy's timeout."""


def _failed(request: SummaryRequest, error: BaseException | str, fallback: bool) -> SummaryResult:
    if isinstance(error, _OwnError) and error.__cause__ is not None:
        error = error.__cause__
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    if not fallback:
        return SummaryResult("", error=reason)
    written = _FALLBACK.summarize_sections(request)
    return SummaryResult(written.text, written.sections, reason)


def _checked(request: SummaryRequest, result: SummaryResult, fallback: bool) -> SummaryResult:
    text: object = result.text
    if not isinstance(text, str) or not text.strip():
        return _failed(request, "summarizer returned an empty summary", fallback)
    return _capped(request, SummaryResult(text.strip(), result.sections))


def _capped(request: SummaryRequest, result: SummaryResult) -> SummaryResult:
    """``result`` within the request's cap: a summary that came back longer (a model that
    ignored its limit) keeps its first lines, so the compaction still fits its budget and
    the agent goes on; logged as a warning."""
    text = result.text

    def fit(chars: int) -> SummaryResult:
        if len(text) <= chars:
            return result
        return SummaryResult(clip_lines(text, chars), result.sections)

    fitted = within(request, fit)
    if fitted.text != text:
        log.summary_cut(len(text), len(fitted.text), request.max_tokens)
    return fitted


def _call_sync(summarizer: Summarizer, request: SummaryRequest) -> SummaryResult:
    try:
        if isinstance(summarizer, SectionedSummarizer):
            return summarizer.summarize_sections(request)
        return SummaryResult(summarizer.summarize(request))
    except Exception as exc:
        raise _OwnError() from exc


async def _call_async(summarizer: AsyncSummarizer, request: SummaryRequest) -> SummaryResult:
    try:
        return SummaryResult(await summarizer.asummarize(request))
    except Exception as exc:
        raise _OwnError() from exc


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_sync(
    summarizer: Summarizer | AsyncSummarizer, request: SummaryRequest, timeout: float | None
) -> SummaryResult:
    """The summarizer's result, waiting at most ``timeout`` seconds (raises on failure)."""
    if not isinstance(summarizer, Summarizer):
        coro = _call_async(summarizer, request)
        return asyncio.run(asyncio.wait_for(coro, timeout) if timeout else coro)
    if timeout is None:
        return _call_sync(summarizer, request)
    # no `with`: its exit would wait for a summarizer that overran
    pool = concurrent.futures.ThreadPoolExecutor(1, "timeline-summarizer")
    try:
        return pool.submit(_call_sync, summarizer, request).result(timeout)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def summarize_sync(
    summarizer: Summarizer | AsyncSummarizer | None,
    request: SummaryRequest,
    timeout: float | None,
    *,
    fallback: bool = True,
) -> SummaryResult:
    """Run a summarizer; a failure (exception, timeout, empty) falls back to the
    deterministic inventory, or with ``fallback=False`` gives ``""``; the result's
    ``error`` says why. An async summarizer inside a running event loop raises
    :class:`AsyncSummarizerError` (use ``arender``)."""
    if summarizer is None:
        return _FALLBACK.summarize_sections(request)
    if not isinstance(summarizer, Summarizer) and _in_running_loop():
        raise AsyncSummarizerError(
            f"{type(summarizer).__name__} is async and an event loop is running: render() and "
            "compact() cannot wait for it here; call `await timeline.arender(...)` or "
            "`await timeline.acompact(...)` instead"
        )
    try:
        result = _run_sync(summarizer, request, timeout)
    except TimeoutError:
        return _failed(request, f"summarizer timed out after {timeout}s", fallback)
    except Exception as exc:
        return _failed(request, exc, fallback)
    return _checked(request, result, fallback)


async def summarize_async(
    summarizer: Summarizer | AsyncSummarizer | None,
    request: SummaryRequest,
    timeout: float | None,
    *,
    fallback: bool = True,
) -> SummaryResult:
    """The async form of :func:`summarize_sync` (sync summarizers run in a thread)."""
    if summarizer is None:
        return _FALLBACK.summarize_sections(request)
    try:
        if isinstance(summarizer, AsyncSummarizer):
            result = await asyncio.wait_for(_call_async(summarizer, request), timeout)
        else:
            call = asyncio.to_thread(_call_sync, summarizer, request)
            result = await asyncio.wait_for(call, timeout)
    except TimeoutError:
        return _failed(request, f"summarizer timed out after {timeout}s", fallback)
    except Exception as exc:
        return _failed(request, exc, fallback)
    return _checked(request, result, fallback)
