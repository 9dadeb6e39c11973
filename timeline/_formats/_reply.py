"""Shared helpers of the SDK response converters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from timeline._model import InvalidBlockError

__all__ = ["ToolCallRequest", "Usage", "as_dict", "get_int", "read_usage"]


def as_dict(obj: Any, what: str) -> dict[str, Any]:
    """An SDK response object (pydantic model) or its dict form, as a plain dict."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        obj = dump(mode="json", exclude_none=True, by_alias=True)
    if not isinstance(obj, Mapping):
        raise InvalidBlockError(
            f"expected an SDK {what} or its dict form, not {type(obj).__name__}"
        )
    return dict(obj)


def get_int(data: Mapping[str, Any] | None, *keys: str) -> int:
    """The sum of the integer fields ``keys`` of ``data`` (missing or null: 0)."""
    if not data:
        return 0
    return sum(v for k in keys if isinstance(v := data.get(k), int))


@attrs.frozen
class ToolCallRequest:
    """A tool call the model asked for; ``params`` may be raw JSON text (possibly cut
    off when the reply hit its length limit)."""

    name: str
    params: Mapping[str, Any] | str
    call_id: str | None = None


@attrs.frozen
class Usage:
    """A reply's token figures: the whole prompt, the completion, and the prompt tokens
    read from and written to the provider's prompt cache (None: not reported; OpenAI
    reports reads only)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


def _count(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_usage(usage: Any) -> Usage:
    """The figures of a provider's usage (an SDK object or its dict form, or a whole
    response carrying one): Anthropic Messages (``input_tokens`` plus the cache's
    ``cache_read_input_tokens`` and ``cache_creation_input_tokens``), OpenAI Chat
    Completions (``prompt_tokens``, ``prompt_tokens_details.cached_tokens``) or
    Responses (``input_tokens``, ``input_tokens_details.cached_tokens``)."""
    if isinstance(usage, Usage):
        return usage
    data = as_dict(usage, "usage")
    inner = data.get("usage")
    if isinstance(inner, Mapping):
        data = dict(inner)
    if "prompt_tokens" in data:
        details = data.get("prompt_tokens_details") or {}
        read = _count(details, "cached_tokens") if isinstance(details, Mapping) else None
        return Usage(get_int(data, "prompt_tokens"), get_int(data, "completion_tokens"), read)
    details = data.get("input_tokens_details")
    if isinstance(details, Mapping):
        return Usage(
            get_int(data, "input_tokens"),
            get_int(data, "output_tokens"),
            _count(details, "cached_tokens"),
        )
    cached = ("cache_read_input_tokens", "cache_creation_input_tokens")
    anthropic = any(k in data for k in cached)
    return Usage(
        get_int(data, "input_tokens", *cached),
        get_int(data, "output_tokens"),
        get_int(data, cached[0]) if anthropic else None,
        get_int(data, cached[1]) if anthropic else None,
    )
