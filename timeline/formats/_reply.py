"""Shared helpers of the SDK response converters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from timeline.model.errors import InvalidBlockError

__all__ = ["ToolCallRequest", "Usage", "as_dict", "get_int"]


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
    prompt_tokens: int = 0
    completion_tokens: int = 0
