"""The tool definitions of a request in each provider's own form.

Anthropic ``tools``: ``{"name", "description", "input_schema"}``, the last one carrying a
``cache_control`` breakpoint (Anthropic caches tools, system and messages as one prefix,
tools first); Chat Completions ``{"type": "function", "function": {"name", "description",
"parameters"}}``; Responses ``{"type": "function", "name", "description", "parameters",
"strict"}``. Every call builds new dicts (the caller's own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from timeline._model import ToolSpec

__all__ = ["anthropic_tools", "chat_tools", "responses_tools"]


def _described(out: dict[str, Any], spec: ToolSpec) -> dict[str, Any]:
    if spec.description:
        out["description"] = spec.description
    return out


def anthropic_tools(
    specs: Sequence[ToolSpec], cache_control: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """Anthropic's ``tools``; ``cache_control`` (None: no breakpoint) on the last one."""
    out = []
    for spec in specs:
        tool = _described({"name": spec.name}, spec)
        tool["input_schema"] = spec.input_schema
        if spec.strict:
            tool["strict"] = True
        out.append(tool)
    if out and cache_control is not None:
        out[-1]["cache_control"] = cache_control
    return out


def chat_tools(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Chat Completions ``tools``."""
    out = []
    for spec in specs:
        function = _described({"name": spec.name}, spec)
        function["parameters"] = spec.input_schema
        if spec.strict:
            function["strict"] = True
        out.append({"type": "function", "function": function})
    return out


def responses_tools(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Responses API ``tools``."""
    return [
        {
            "type": "function",
            **_described({"name": spec.name}, spec),
            "parameters": spec.input_schema,
            "strict": spec.strict,
        }
        for spec in specs
    ]
