"""The tools a framework passes with a model request, as definitions the timeline counts.

Each adapter turns its host's tools into definition mappings (LangChain's
``convert_to_openai_tool``, pydantic-ai's ``ToolDefinition``, the Agents SDK's
``FunctionTool``); :func:`host_tool_specs` checks them. A tool that is not a function tool
(a provider's server tool the host passes through) has no definition the timeline can
count and is left out rather than stopping the agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from timeline._model import InvalidBlockError, ToolSpec, tool_specs

__all__ = ["host_tool_specs"]


def host_tool_specs(definitions: Iterable[Mapping[str, Any]]) -> tuple[ToolSpec, ...]:
    """The function tools among ``definitions`` (any form :func:`tool_specs` reads), each
    name once (the first definition of a name wins)."""
    out: dict[str, ToolSpec] = {}
    for definition in definitions:
        try:
            (spec,) = tool_specs([definition])
        except InvalidBlockError:
            continue
        out.setdefault(spec.name, spec)
    return tuple(out.values())
