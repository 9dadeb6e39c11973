"""OpenTelemetry spans (the optional extra ``[otel]``): ``timeline._render``,
``timeline._compaction``, ``timeline.persist``, ``timeline.search`` and
``timeline.usage``, with the figures operators ask about as attributes.

Spans go to the tracer provider the application set up
(``opentelemetry.trace.set_tracer_provider``). Without ``opentelemetry-api`` installed
nothing is imported, ever (one look for the package, remembered); with it but no
provider set, nothing is recorded and a render pays one check. Like the logger, spans
carry counts, ids, reasons and versions, never the text of a block or a query.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, ParamSpec, TypeVar

__all__ = [
    "ATTRIBUTE_PREFIX",
    "Attributes",
    "emit",
    "named",
    "searched",
    "asearched",
    "tracer",
]

ATTRIBUTE_PREFIX: Final = "timeline."
Attributes = Mapping[str, str | int | float | bool]

_api: list[Any] = []
"""``opentelemetry.trace`` once imported, or None when it cannot be (looked up once)."""
_silent: list[tuple[type, ...]] = []
"""The API's provider types that record nothing (the default proxy, the no-op one)."""
_cache: list[tuple[Any, Any]] = []
"""(tracer provider, our tracer from it): the provider's tracer, made once."""


def _trace_api() -> Any | None:
    if not _api:
        try:
            found = importlib.util.find_spec("opentelemetry") is not None
        except (ImportError, ValueError):
            found = False
        if found:
            from opentelemetry import trace

            _silent.append((trace.ProxyTracerProvider, trace.NoOpTracerProvider))
            _api.append(trace)
        else:
            _api.append(None)
    return _api[0]


def tracer() -> Any | None:
    """The tracer of the application's provider, or None when spans would go nowhere
    (no ``opentelemetry-api``, or no provider set): the caller then does its work
    without a span."""
    trace = _api[0] if _api else _trace_api()  # every render asks: kept cheap
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, _silent[0]):
        return None
    if not _cache or _cache[0][0] is not provider:
        _cache[:] = [(provider, provider.get_tracer("block-timeline"))]
    return _cache[0][1]


def named(attributes: Attributes) -> dict[str, str | int | float | bool]:
    """``attributes`` under the ``timeline.`` prefix."""
    return {ATTRIBUTE_PREFIX + k: v for k, v in attributes.items()}


def emit(name: str, attributes: Attributes, start_ns: int | None = None) -> None:
    """A span ``name`` that ends now (started at ``start_ns``, from ``time.time_ns()``,
    or now), under the current span, when a provider is set."""
    found = tracer()
    if found is None:
        return
    span = found.start_span(name, start_time=start_ns, attributes=named(attributes))
    span.end()


P = ParamSpec("P")
R = TypeVar("R")


def _search_attributes(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Attributes:
    """A search's figures from its arguments ``(store, conversation_id, query, limit)``:
    the store's kind, the conversation, how many words the query has (never its text)."""
    named_args = dict(zip(("store", "conversation_id", "query", "limit"), args, strict=False))
    named_args.update(kwargs)
    limit = named_args.get("limit", 10)
    return {
        "conversation_id": str(named_args.get("conversation_id", "")),
        "store": type(named_args.get("store")).__name__,
        "query_words": len(str(named_args.get("query", "")).split()),
        "limit": limit if isinstance(limit, int) else -1,
    }


def searched(fn: Callable[P, list[R]]) -> Callable[P, list[R]]:
    """``fn`` (a store's ``search``) in a ``timeline.search`` span when tracing."""

    @functools.wraps(fn)
    def search(*args: P.args, **kwargs: P.kwargs) -> list[R]:
        found = tracer()
        if found is None:
            return fn(*args, **kwargs)
        attributes = named(_search_attributes(args, kwargs))
        with found.start_as_current_span("timeline.search", attributes=attributes) as span:
            hits = fn(*args, **kwargs)
            span.set_attribute(ATTRIBUTE_PREFIX + "hits", len(hits))
            return hits

    return search


def asearched(fn: Callable[P, Awaitable[list[R]]]) -> Callable[P, Awaitable[list[R]]]:
    """:func:`searched` for a store's ``asearch``."""

    @functools.wraps(fn)
    async def asearch(*args: P.args, **kwargs: P.kwargs) -> list[R]:
        found = tracer()
        if found is None:
            return await fn(*args, **kwargs)
        attributes = named(_search_attributes(args, kwargs))
        with found.start_as_current_span("timeline.search", attributes=attributes) as span:
            hits = await fn(*args, **kwargs)
            span.set_attribute(ATTRIBUTE_PREFIX + "hits", len(hits))
            return hits

    return asearch
