"""What ``Timeline.record_usage`` does with a provider's usage report: the calibration of
the next estimate, and the cache figures checked against what the previous request left
cached (:mod:`timeline._cache.breaks`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from timeline._cache import Sent, find_break, min_cacheable_tokens
from timeline._formats import Usage, read_usage
from timeline._model import CacheBreak, InvalidBlockError, UsageRecord, check_count, tracing
from timeline._render import Settings, timestamp
from timeline._state import Ledger

__all__ = ["CACHE_BREAKS_KEPT", "CacheBreakHook", "DEFAULT_CACHE_TTL", "record", "usage_of"]

CacheBreakHook = Callable[[CacheBreak], object]

CACHE_BREAKS_KEPT = 20
"""Cache breaks the timeline's state keeps (the latest; ``inspect`` shows them)."""
DEFAULT_CACHE_TTL = 300.0
"""The providers' default cache lifetime (Anthropic's 5 minutes; OpenAI keeps a prefix
5 to 10 minutes)."""


def usage_of(usage: Any, prompt_tokens: int | None, read: int | None, written: int | None) -> Usage:
    """The figures ``record_usage`` was given: a provider usage (SDK object, its dict
    form, a whole response, or a :class:`Usage`), or the keywords (which win)."""
    for name, value in (("prompt_tokens", prompt_tokens), ("cache_read_tokens", read)):
        check_count(value, name, optional=True)
    check_count(written, "cache_write_tokens", optional=True)
    if usage is None:
        if prompt_tokens is None:
            raise InvalidBlockError(
                "record_usage needs the provider's usage (the reply's usage object) or "
                "prompt_tokens="
            )
        return Usage(prompt_tokens, 0, read, written)
    found = read_usage(usage)
    return Usage(
        found.prompt_tokens if prompt_tokens is None else prompt_tokens,
        found.completion_tokens,
        found.cache_read_tokens if read is None else read,
        found.cache_write_tokens if written is None else written,
    )


def record(
    ledger: Ledger,
    settings: Settings,
    usage: Usage,
    *,
    model: str | None,
    hook: CacheBreakHook | None,
) -> CacheBreak | None:
    """Calibrate with ``usage`` (the provider's figures for the latest render); with cache
    figures, compare them with what the previous recorded request left cached, keep a
    break in the state and report it to ``hook``."""
    found = _record(ledger, settings, usage, model=model, hook=hook)
    attributes: tracing.Attributes = {
        "conversation_id": settings.conversation_id,
        "prompt_tokens": usage.prompt_tokens,
        "cache.read_tokens": -1 if usage.cache_read_tokens is None else usage.cache_read_tokens,
        "cache.write_tokens": -1 if usage.cache_write_tokens is None else usage.cache_write_tokens,
        "cache.hit": bool(usage.cache_read_tokens),
        "cache.break": "none" if found is None else found.cause,
    }
    tracing.emit("timeline.usage", attributes)
    return found


def _record(
    ledger: Ledger,
    settings: Settings,
    usage: Usage,
    *,
    model: str | None,
    hook: CacheBreakHook | None,
) -> CacheBreak | None:
    notes = ledger.notes
    if notes.raw_estimate is None:
        return None
    raw = notes.raw_estimate()
    read, written = usage.cache_read_tokens, usage.cache_write_tokens
    state = ledger.state
    ledger.usage_reported(
        UsageRecord(usage.prompt_tokens, raw, state.structure_version, read, written)
    )
    sent = notes.sent
    if read is None or sent is None:
        return None
    now = settings.clock()
    previous, current = notes.cached, Sent(sent, now.timestamp())
    ledger.notes = attrs.evolve(notes, cached=current)
    if previous is None or previous.request is sent or raw <= 0:
        return None
    found = find_break(
        previous,
        current,
        read=read,
        written=written,
        scale=usage.prompt_tokens / raw if usage.prompt_tokens else 1.0,
        ttl_seconds=settings.policy.cache_ttl_seconds or DEFAULT_CACHE_TTL,
        min_tokens=min_cacheable_tokens(model or settings.policy.model),
        ts=timestamp(settings.clock),
        cleared=ledger.state.cleared,
    )
    if found is None:
        return None
    ledger.cache_broke(found, CACHE_BREAKS_KEPT)
    if hook is not None:
        hook(found)
    return found
