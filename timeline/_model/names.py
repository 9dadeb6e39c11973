"""Tool names and call ids in the form every provider accepts.

Anthropic and OpenAI accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$`` and reject
call ids with other characters (OpenAI also caps them at 40). Timelines keep whatever
was appended or imported (``functions.fs_read:0`` from another provider, a name with a
dot); every payload format maps them through these two functions, so the call and its
result always carry the same safe id. Declare your tools to the provider under
``provider_tool_name(name)`` when a name does not already fit.

A safe id maps to itself, so a payload the formats built imports and renders back
unchanged. Two ids of one timeline never share a safe form: the timeline gives a call
whose id would collide with another call's another internal id
(:mod:`timeline._model.call_ids`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

from timeline._model.errors import ToolNameError

__all__ = ["provider_call_id", "provider_tool_name", "provider_tool_names"]

_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_CALL_ID: Final = re.compile(r"^[a-zA-Z0-9_-]{1,40}$")
_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_-]")


def _digest(value: str, n: int) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def provider_tool_name(name: str) -> str:
    """``name`` itself when it fits ``^[a-zA-Z0-9_-]{1,64}$``; otherwise every other
    character becomes ``_`` and a name over 64 characters keeps 55 plus a hash."""
    if _NAME.fullmatch(name):
        return name
    safe = _UNSAFE.sub("_", name) or "tool"
    if len(safe) > 64:
        safe = f"{safe[:55]}_{_digest(name, 8)}"
    return safe


def provider_tool_names(names: Iterable[str]) -> dict[str, str]:
    """Each tool's provider-safe name -> the tool's own name, to declare tools and to
    find the tool a call names. Two names with one safe form (``fs.delete`` and
    ``fs:delete``: ``fs_delete``) are refused with :class:`ToolNameError`: a provider
    would see one tool, and a call to it could run the other."""
    out: dict[str, str] = {}
    for name in names:
        safe = provider_tool_name(name)
        other = out.setdefault(safe, name)
        if other != name:
            raise ToolNameError(
                f"tools {other!r} and {name!r} both go to the provider as {safe!r}: "
                "rename one of them"
            )
    return out


def provider_call_id(call_id: str) -> str:
    """``call_id`` itself when it fits ``^[a-zA-Z0-9_-]{1,40}$``; otherwise a stable safe
    form: its first 27 characters made safe, ``_`` and 12 hex digits of its hash."""
    if _CALL_ID.fullmatch(call_id):
        return call_id
    return f"{_UNSAFE.sub('_', call_id[:27])}_{_digest(call_id, 12)}"
