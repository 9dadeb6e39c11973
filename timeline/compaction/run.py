"""Running a summarizer safely: sync or async, with the policy's timeout, and the
deterministic inventory as the fallback when it fails (exception, timeout, empty text).
Compaction never crashes the loop."""

from __future__ import annotations

import asyncio
import concurrent.futures

from timeline.compaction.summarizers.base import AsyncSummarizer, Summarizer, SummaryRequest
from timeline.compaction.summarizers.inventory import InventorySummarizer
from timeline.model.errors import AsyncSummarizerError

__all__ = ["summarize_async", "summarize_sync"]

_FALLBACK = InventorySummarizer()


class _OwnError(Exception):
    """The summarizer's own exception (its own ``TimeoutError`` included), kept apart from
    the policy's timeout."""


def _failed(request: SummaryRequest, error: BaseException | str, fallback: bool) -> tuple[str, str]:
    if isinstance(error, _OwnError) and error.__cause__ is not None:
        error = error.__cause__
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return (_FALLBACK.summarize(request) if fallback else ""), reason


def _checked(request: SummaryRequest, text: object, fallback: bool) -> tuple[str, str | None]:
    if not isinstance(text, str) or not text.strip():
        return _failed(request, "summarizer returned an empty summary", fallback)
    return text.strip(), None


def _call_sync(summarizer: Summarizer, request: SummaryRequest) -> str:
    try:
        return summarizer.summarize(request)
    except Exception as exc:
        raise _OwnError() from exc


async def _call_async(summarizer: AsyncSummarizer, request: SummaryRequest) -> str:
    try:
        return await summarizer.asummarize(request)
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
) -> str:
    """The summarizer's text, waiting at most ``timeout`` seconds (raises on failure)."""
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
) -> tuple[str, str | None]:
    """Run a summarizer; a failure (exception, timeout, empty) falls back to the
    deterministic inventory, or with ``fallback=False`` gives ``""``. Returns the text and
    the failure reason, if any. An async summarizer inside a running event loop raises
    :class:`AsyncSummarizerError` (use ``arender``)."""
    if summarizer is None:
        return _FALLBACK.summarize(request), None
    if not isinstance(summarizer, Summarizer) and _in_running_loop():
        raise AsyncSummarizerError(
            f"{type(summarizer).__name__} is async and an event loop is running: render() and "
            "compact() cannot wait for it here; call `await timeline.arender(...)` or "
            "`await timeline.acompact(...)` instead"
        )
    try:
        text = _run_sync(summarizer, request, timeout)
    except TimeoutError:
        return _failed(request, f"summarizer timed out after {timeout}s", fallback)
    except Exception as exc:
        return _failed(request, exc, fallback)
    return _checked(request, text, fallback)


async def summarize_async(
    summarizer: Summarizer | AsyncSummarizer | None,
    request: SummaryRequest,
    timeout: float | None,
    *,
    fallback: bool = True,
) -> tuple[str, str | None]:
    """The async form of :func:`summarize_sync` (sync summarizers run in a thread)."""
    if summarizer is None:
        return _FALLBACK.summarize(request), None
    try:
        if isinstance(summarizer, AsyncSummarizer):
            text = await asyncio.wait_for(_call_async(summarizer, request), timeout)
        else:
            call = asyncio.to_thread(_call_sync, summarizer, request)
            text = await asyncio.wait_for(call, timeout)
    except TimeoutError:
        return _failed(request, f"summarizer timed out after {timeout}s", fallback)
    except Exception as exc:
        return _failed(request, exc, fallback)
    return _checked(request, text, fallback)
