"""Tools for :class:`~timeline._driver.ReactDriver` declared the way agent SDKs declare
function tools: a plain function's name, docstring and signature are its definition.

``def read_file(path: str, limit: int = 200) -> str: "Read a file."`` becomes the tool
``read_file`` with the schema ``{"type": "object", "properties": {"path": {"type":
"string"}, "limit": {"type": "integer", "default": 200}}, "required": ["path"]}`` and the
description "Read a file."; a parameter's description comes from ``Annotated[str, "..."]``
or the docstring's ``Args:`` section (or ``:param path: ...``). The model's arguments are
passed as keywords. A callable given under a name in a mapping keeps the older
convention: it gets the arguments as one mapping, and is declared as taking any object.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, Union

import attrs

from timeline._model import (
    TOOL_NAME,
    DriverError,
    ToolSpec,
    provider_tool_name,
    provider_tool_names,
    tool_specs,
)

__all__ = ["FunctionTool", "function_tool", "tool_set"]

_SIMPLE: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARG_LINE = re.compile(r"^\s*(?::param\s+)?(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@attrs.frozen
class FunctionTool:
    """A tool's definition and the callable that runs it. Calling it with the model's
    arguments runs the callable (as keywords, or as one mapping for ``takes_mapping``);
    a result that is not text (a dict, a list, a number) is returned as JSON."""

    spec: ToolSpec
    fn: Callable[..., Any]
    takes_mapping: bool = False

    def __call__(self, params: Mapping[str, Any]) -> Any:
        raw = self.fn(params) if self.takes_mapping else self.fn(**params)
        if isinstance(raw, str) or hasattr(raw, "is_error"):  # text, or a ToolOutput
            return raw
        return json.dumps(raw, ensure_ascii=False, default=str)


def _described(doc: str) -> tuple[str, dict[str, str]]:
    """A docstring's description (the text before its sections) and its parameters'
    descriptions (Google ``Args:`` or Sphinx ``:param x:`` lines)."""
    text = inspect.cleandoc(doc)
    head = re.split(r"\n\s*\n(?=\s*(?:Args|Arguments|Parameters|Returns|Raises):)|\n:param", text)
    description = head[0].strip() if head else ""
    params: dict[str, str] = {}
    section = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section = True
            continue
        if stripped.endswith(":") and not stripped.startswith(":"):
            section = False
        match = _ARG_LINE.match(line) if section or stripped.startswith(":param") else None
        if match:
            params[match.group(1).lstrip("*")] = match.group(2).strip()
    return description, params


def _schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a parameter annotation (``{}``: any value)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        schema = _schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**schema, "description": notes[0]} if notes else schema
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    if origin is Literal:
        kinds = {_SIMPLE.get(type(a)) for a in args}
        kind = kinds.pop() if len(kinds) == 1 else None
        return {"enum": list(args), **({"type": kind} if kind else {})}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [m.value for m in hint]}
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        inner = (
            _schema(options[0]) if len(options) == 1 else {"anyOf": [_schema(a) for a in options]}
        )
        return {"anyOf": [inner, {"type": "null"}]} if len(options) < len(args) else inner
    if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, Sequence):
        return {"type": "array", **({"items": _schema(args[0])} if args else {})}
    if hint in (dict, Mapping) or origin in (dict, Mapping):
        return {"type": "object"}
    return {}


def function_tool(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionTool:
    """The tool a plain function declares: its name (or ``name``), its docstring's
    description (or ``description``) and a schema from its signature."""
    if inspect.iscoroutinefunction(fn):
        raise DriverError(f"tool {fn.__name__!r} is async; ReactDriver runs tools synchronously")
    doc, notes = _described(inspect.getdoc(fn) or "")
    hints = typing.get_type_hints(fn, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name == "self":
            continue
        schema = _schema(hints.get(p.name, Any))
        if p.name in notes and "description" not in schema:
            schema["description"] = notes[p.name]
        if p.default is p.empty:
            required.append(p.name)
        elif p.default is None or isinstance(p.default, str | int | float | bool):
            schema["default"] = p.default
        properties[p.name] = schema
    schema = {
        "type": "object",
        "properties": properties,
        **({"required": required} if required else {}),
    }
    definition = {
        "name": name or fn.__name__,
        "description": description or doc,
        "input_schema": schema,
    }
    (spec,) = tool_specs([definition])
    return FunctionTool(spec, fn)


def _of_mapping(key: str, fn: Any) -> FunctionTool:
    """A tool given under ``key``: a :class:`FunctionTool` as it is, another callable
    with the mapping convention, declared as taking any object."""
    if isinstance(fn, FunctionTool):
        return fn
    if not callable(fn):
        raise DriverError(f"tool {key!r} is not callable")
    name = key if TOOL_NAME.match(key) else provider_tool_name(key)
    doc, _ = _described(inspect.getdoc(fn) or "")
    (spec,) = tool_specs([{"name": name, "description": doc}])
    return FunctionTool(spec, fn, takes_mapping=True)


def tool_set(tools: Any) -> dict[str, FunctionTool]:
    """The driver's tools by the name the model calls them: from a mapping of names to
    callables (or :class:`FunctionTool`), or a sequence of plain functions (or
    :class:`FunctionTool`)."""
    if isinstance(tools, Mapping):
        found = {str(key): _of_mapping(str(key), fn) for key, fn in tools.items()}
    elif isinstance(tools, Sequence) and not isinstance(tools, str):
        made = [t if isinstance(t, FunctionTool) else function_tool(t) for t in tools]
        found = {t.spec.name: t for t in made}
    else:
        raise DriverError(
            f"tools must be a list of functions or a mapping of names to callables, "
            f"got {type(tools).__name__}"
        )
    provider_tool_names(found)  # two names a provider would see as one: ToolNameError
    tool_specs([t.spec for t in found.values()])  # two tools of one name are refused
    return found
