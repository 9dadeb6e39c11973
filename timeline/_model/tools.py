"""Tool definitions as a render takes them: provider-neutral, checked once, immutable.

A tool is a name, a description and a JSON Schema of its input (``{"name": "read_file",
"description": "...", "input_schema": {"type": "object", "properties": {...}}}``).
:func:`tool_specs` also reads the providers' own forms (Chat Completions
``{"type": "function", "function": {...}}``, Responses ``{"type": "function", "name":
...}``, Anthropic's, with ``parameters`` for ``input_schema``), so the list an agent
already sends works as it is. Each becomes a :class:`ToolSpec` holding its schema as the
JSON text it was given (key order kept), which the payloads decode into new dicts and the
token count reads as is. A bad definition is an :class:`InvalidBlockError` naming it
(``tools[2].input_schema``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from timeline._model.errors import InvalidBlockError
from timeline._model.json_text import check_json

__all__ = ["TOOL_NAME", "ToolSpec", "tool_specs"]

TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What Anthropic, Chat Completions and Responses all accept as a function tool's name."""
_KEYS: Final = frozenset(
    {"name", "description", "input_schema", "parameters", "type", "strict", "cache_control"}
)


class ToolSpec(msgspec.Struct, frozen=True):
    """One function tool: its name, description and input schema (as JSON text)."""

    name: str
    description: str = ""
    schema_json: str = '{"type":"object"}'
    """The JSON Schema of the tool's input, as JSON text in the order it was given."""
    strict: bool = False
    """Ask the provider to hold the model's input to the schema exactly."""

    @property
    def input_schema(self) -> dict[str, Any]:
        """The schema as a new dict (the caller's own)."""
        schema: dict[str, Any] = msgspec.json.decode(self.schema_json)
        return schema


def _fail(where: str, what: str) -> InvalidBlockError:
    return InvalidBlockError(f"{where}: {what}")


def _unwrapped(tool: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """The definition inside a Chat Completions ``{"type": "function", "function": ...}``;
    a tool of another ``type`` (a provider's server tool) is refused."""
    kind = tool.get("type", "function")
    if kind != "function":
        raise _fail(
            f"{where}.type",
            f"{kind!r} is not a function tool; pass a provider's server tools to its SDK "
            "yourself (render counts function tools)",
        )
    inner = tool.get("function")
    if inner is None:
        return tool
    if not isinstance(inner, Mapping):
        raise _fail(f"{where}.function", "expected an object")
    return inner


def _spec(tool: Any, where: str) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return tool
    if not isinstance(tool, Mapping):
        raise _fail(where, f"expected a tool definition (a mapping), got {type(tool).__name__}")
    body = _unwrapped(tool, where)
    unknown = set(body) - _KEYS - {"function"}
    if unknown:
        raise _fail(f"{where}.{sorted(unknown)[0]}", "unknown key of a tool definition")
    name = body.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise _fail(f"{where}.name", f"expected 1-64 letters, digits, '_' or '-', got {name!r}")
    description = body.get("description", "")
    if not isinstance(description, str):
        raise _fail(f"{where}.description", "expected a string")
    schema = body.get("input_schema", body.get("parameters", {"type": "object"}))
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise _fail(f"{where}.input_schema", 'expected a JSON Schema of {"type": "object"}')
    strict = body.get("strict", False)
    if not isinstance(strict, bool | None):
        raise _fail(f"{where}.strict", "expected true or false")
    schema = dict(schema)
    check_json(schema, f"{where}.input_schema")
    check_json(description, f"{where}.description")
    return ToolSpec(name, description, msgspec.json.encode(schema).decode(), bool(strict))


def tool_specs(tools: Any) -> tuple[ToolSpec, ...]:
    """``tools`` (a sequence of definitions or :class:`ToolSpec`) checked, as specs; a
    tuple of specs is returned as it is (nothing to read again)."""
    if isinstance(tools, tuple) and all(isinstance(t, ToolSpec) for t in tools):
        out: tuple[ToolSpec, ...] = tools
    elif isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence):
        raise InvalidBlockError(
            f"tools must be a list of tool definitions, got {type(tools).__name__}"
        )
    else:
        out = tuple(_spec(t, f"tools[{i}]") for i, t in enumerate(tools))
    seen: set[str] = set()
    for i, spec in enumerate(out):
        if spec.name in seen:
            raise _fail(f"tools[{i}].name", f"{spec.name!r} is defined twice")
        seen.add(spec.name)
    return out
