"""Strict payload validation against the real ``anthropic`` and ``openai`` SDK param types,
plus the provider rules those types cannot express.

The SDKs' params are ``TypedDict``s; every one reachable from the top types gets
``extra="forbid"`` and strict mode, so an unknown or misspelt key fails. Some SDK unions
also accept their response *models* (which allow extra keys): a payload dict that only
validates as such a model is reported too. ``Iterable[...]`` fields validate lazily in
pydantic, so the result is drained to run every nested check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Union, get_args, get_origin, get_type_hints

import pydantic
import typing_extensions
from anthropic.types import (
    ContentBlockParam,
    MessageCreateParams,
    MessageParam,
    TextBlockParam,
    ToolParam,
)
from anthropic.types.beta import BetaContentBlockParam, BetaSystemMessageParam
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from openai.types.responses import FunctionToolParam, ResponseInputItemParam

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
CALL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,40}$")
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})
MAX_CACHE_POINTS = 4

_CONFIG = pydantic.ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
_seen: set[type] = set()


def _forbid_extra(tp: Any) -> None:
    if isinstance(tp, type) and typing_extensions.is_typeddict(tp):
        if tp in _seen:
            return
        _seen.add(tp)
        tp.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
        for hint in get_type_hints(tp, include_extras=True).values():
            _forbid_extra(hint)
        return
    for arg in get_args(tp):
        _forbid_extra(arg)
    value = getattr(tp, "__value__", None)
    if value is not None:
        _forbid_extra(value)


for _top in (
    MessageCreateParams,
    MessageParam,
    BetaContentBlockParam,
    BetaSystemMessageParam,
    ChatCompletionMessageParam,
    ResponseInputItemParam,
    ToolParam,
    ChatCompletionFunctionToolParam,
    FunctionToolParam,
):
    _forbid_extra(_top)

_LIST = pydantic.ConfigDict(strict=True, arbitrary_types_allowed=True)
ANTHROPIC_MESSAGES = pydantic.TypeAdapter(list[MessageParam], config=_LIST)


def _literal(tp: Any) -> str | None:
    """The single string of ``Required[Literal["x"]]`` (None: another type)."""
    while get_args(tp) and not isinstance(get_args(tp)[0], str):
        tp = get_args(tp)[0]
    args = get_args(tp)
    return args[0] if len(args) == 1 and isinstance(args[0], str) else None


def _param_classes(*unions: Any) -> dict[str, Any]:
    """Each content block type's own param TypedDict (the first union naming it wins)."""
    out: dict[str, Any] = {}
    for union in unions:
        for member in get_args(union):
            if not typing_extensions.is_typeddict(member):
                continue  # a response model: never what a request should hold
            kind = _literal(get_type_hints(member, include_extras=True).get("type"))
            if kind is not None and kind not in out:
                out[kind] = member
    return out


def _param_types(*unions: Any) -> dict[str, pydantic.TypeAdapter[Any]]:
    """:func:`_param_classes` as type adapters."""
    return {k: pydantic.TypeAdapter(v) for k, v in _param_classes(*unions).items()}


_ANTHROPIC_CLASSES = _param_classes(ContentBlockParam, BetaContentBlockParam)
ANTHROPIC_PARTS = _param_types(ContentBlockParam, BetaContentBlockParam)
"""Content block type -> its param TypedDict: the Messages API types first, then the beta
types (compaction, MCP tool use and results: a payload holding those goes to
``client.beta.messages.create``). A content union also takes the response models, which
pydantic may pick for a valid dict (a web search result), so each part is validated
against the one param type its ``type`` names."""
ANTHROPIC_SYSTEM = pydantic.TypeAdapter(list[TextBlockParam], config=_LIST)
ANTHROPIC_SYSTEM_MESSAGE = pydantic.TypeAdapter(BetaSystemMessageParam)
"""A beta ``role: "system"`` message inside ``messages`` (its content blocks are checked
again one by one against the param type their ``type`` names)."""
CHAT_MESSAGES = pydantic.TypeAdapter(list[ChatCompletionMessageParam], config=_LIST)
RESPONSES_INPUT = pydantic.TypeAdapter(list[ResponseInputItemParam], config=_LIST)
ANTHROPIC_TOOLS = pydantic.TypeAdapter(list[ToolParam], config=_LIST)
CHAT_TOOLS = pydantic.TypeAdapter(list[ChatCompletionFunctionToolParam], config=_LIST)
RESPONSES_TOOLS = pydantic.TypeAdapter(list[FunctionToolParam], config=_LIST)
"""Function tool definitions of each API (a request's ``tools``)."""


def tools_errors(adapter: pydantic.TypeAdapter[Any], tools: Any, names: list[Any]) -> list[str]:
    """What an API would reject in a request's ``tools`` (``names``: each tool's name):
    the SDK type's complaints, a name the API refuses, a name given twice, no tool."""
    errors = sdk_errors(adapter, tools)
    if not names:
        errors.append("tools: an empty list")
    errors += [f"tools: name {n!r}" for n in names if not NAME_RE.match(str(n))]
    if len(set(map(str, names))) != len(names):
        errors.append("tools: a name given twice")
    return errors


def _drain(value: Any) -> None:
    if isinstance(value, pydantic.BaseModel):
        raise ValueError(
            f"a dict only validates as the response model {type(value).__name__}, "
            "not as a param type"
        )
    if isinstance(value, Mapping):
        for v in value.values():
            _drain(v)
    elif isinstance(value, list | tuple | Iterator) or type(value).__name__ == "ValidatorIterator":
        for v in value:
            _drain(v)


def sdk_errors(adapter: pydantic.TypeAdapter[Any], value: Any) -> list[str]:
    """The SDK type's complaints about ``value`` (empty when valid)."""
    try:
        _drain(adapter.validate_python(value))
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        return [f"sdk: {len(exc.errors())} errors, first at {first['loc']}: {first['msg']}"]
    except ValueError as exc:
        return [f"sdk: {exc}"]
    return []


def _blank(text: Any) -> bool:
    return not isinstance(text, str) or not text.strip()


# -- Anthropic ------------------------------------------------------------------------


def _anthropic_part_errors(part: Mapping[str, Any], where: str) -> list[str]:
    errors: list[str] = []
    kind = part.get("type")
    if kind == "text" and _blank(part.get("text")):
        errors.append(f"{where}: empty text")
    if kind in ("image", "document") and part.get("source", {}).get("type") == "base64":
        source = part.get("source", {})
        allowed = IMAGE_TYPES if kind == "image" else DOCUMENT_TYPES
        if source.get("media_type", "text/plain") not in allowed:
            errors.append(f"{where}: {kind} media type {source.get('media_type')!r}")
    if kind == "tool_use":
        if not NAME_RE.match(str(part.get("name"))):
            errors.append(f"{where}: tool name {part.get('name')!r}")
        if not CALL_ID_RE.match(str(part.get("id"))):
            errors.append(f"{where}: tool_use id {part.get('id')!r}")
    if kind == "tool_result":
        content = part.get("content", "")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if part.get("is_error") and not items:
            errors.append(f"{where}: error result without content")
        for k, item in enumerate(items):
            errors += _anthropic_part_errors(item, f"{where}.content[{k}]")
    if kind in ("thinking", "redacted_thinking") and "role:user" in where:
        errors.append(f"{where}: thinking in a user message")
    return errors


def _part_sdk_errors(
    adapter: pydantic.TypeAdapter[Any], part: Mapping[str, Any], kind: str
) -> list[str]:
    """``part`` checked against its param type. A server tool result whose ``content`` is
    an error object (``{"type": "web_search_tool_result_error", ...}``) is valid, but
    pydantic picks the union's ``Iterable`` branch for any dict and then iterates its
    keys; so such a content is checked against the union's object members alone and the
    rest of the part with an empty list in its place."""
    content = part.get("content")
    hints = get_type_hints(_ANTHROPIC_CLASSES[kind], include_extras=True)
    union = hints.get("content")
    while len(get_args(union)) == 1:  # Required[...]
        union = get_args(union)[0]
    members = [m for m in get_args(union) if typing_extensions.is_typeddict(m)]
    iterable = any(
        get_origin(m) is not None and not typing_extensions.is_typeddict(m) for m in get_args(union)
    )
    if not isinstance(content, Mapping) or not members or not iterable:
        return sdk_errors(adapter, part)
    objects: Any = Union[tuple(members)]  # noqa: UP007 (a runtime union of the members)
    found = sdk_errors(pydantic.TypeAdapter(objects), content)
    return found or sdk_errors(adapter, {**part, "content": []})


def _anthropic_sdk_errors(messages: Any) -> list[str]:
    """The SDK types' complaints: each message a role and content, each content part
    valid as the param type its ``type`` names (strictly, extra keys forbidden)."""
    if not isinstance(messages, list):
        return ["sdk: messages is not a list"]
    for i, m in enumerate(messages):
        if isinstance(m, Mapping) and m.get("role") == "system":
            found = sdk_errors(ANTHROPIC_SYSTEM_MESSAGE, m)
            if found:
                return [f"{found[0]} (messages[{i}], a system message)"]
        elif not isinstance(m, Mapping) or set(m) != {"role", "content"}:
            return [f"sdk: messages[{i}] is not a message {{role, content}}"]
        elif m["role"] not in ("user", "assistant"):
            return [f"sdk: messages[{i}].role {m['role']!r}"]
        content = m["content"]
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            return [f"sdk: messages[{i}].content is neither a string nor a list"]
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else None
            adapter = ANTHROPIC_PARTS.get(str(kind))
            if adapter is None:
                return [f"sdk: messages[{i}].content[{j}]: no param type for {kind!r}"]
            found = sdk_errors(adapter, part) and _part_sdk_errors(adapter, part, str(kind))
            if found:
                return [f"{found[0]} (messages[{i}].content[{j}], {kind})"]
    return []


def anthropic_errors(payload: Mapping[str, Any]) -> list[str]:
    """Everything the Messages API would reject in ``payload`` (``{tools?, system?,
    messages}``)."""
    errors = _anthropic_sdk_errors(payload.get("messages"))
    if "system" in payload:
        errors += sdk_errors(ANTHROPIC_SYSTEM, payload["system"])
        errors += [
            f"system[{i}]: empty" for i, s in enumerate(payload["system"]) if _blank(s["text"])
        ]
    tools = payload.get("tools", [])
    if "tools" in payload:
        errors += tools_errors(ANTHROPIC_TOOLS, tools, [t.get("name") for t in tools])
    if set(payload) - {"tools", "system", "messages"}:
        errors.append(f"unexpected keys {sorted(set(payload) - {'tools', 'system', 'messages'})}")
    messages = payload.get("messages") or []
    if not messages:
        return [*errors, "no messages"]
    if messages[0]["role"] != "user":
        errors.append("first message is not user")
    cache_points = sum(1 for s in payload.get("system", []) if "cache_control" in s)
    cache_points += sum(1 for t in tools if "cache_control" in t)
    pending: list[str] = []
    used: set[str] = set()
    for i, m in enumerate(messages):
        role, content = m["role"], m.get("content", "")
        where = f"messages[{i}] role:{role}"
        if i and messages[i - 1]["role"] == role and role != "system":
            errors.append(f"{where}: same role as the previous message")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "system":  # a beta system message: anywhere but between calls and results
            errors += _system_message_errors(parts, pending, where)
            cache_points += sum("cache_control" in p for p in parts)
            continue
        if not parts:
            errors.append(f"{where}: empty content")
        results = [p.get("tool_use_id") for p in parts if p.get("type") == "tool_result"]
        lead = [p.get("tool_use_id") for p in parts[: len(results)]]
        if role == "user" and results != lead:
            errors.append(f"{where}: tool_result blocks are not first")
        if sorted(map(str, results)) != sorted(pending):
            errors.append(f"{where}: results {results} do not answer the calls {pending}")
        pending = [str(p.get("id")) for p in parts if p.get("type") == "tool_use"]
        errors += [f"{where}: tool_use id {i!r} used before" for i in pending if i in used]
        used.update(pending)
        for j, part in enumerate(parts):
            cache_points += "cache_control" in part
            errors += _anthropic_part_errors(part, f"{where}.content[{j}]")
    if pending:
        errors.append(f"calls {pending} have no results")
    last = messages[-1]
    if last["role"] == "assistant":
        final = last["content"] if isinstance(last["content"], str) else last["content"][-1]
        text = final if isinstance(final, str) else final.get("text", "x")
        if text != text.rstrip():
            errors.append("the final assistant message ends in whitespace")
    if cache_points > MAX_CACHE_POINTS:
        errors.append(f"{cache_points} cache_control marks (max {MAX_CACHE_POINTS})")
    return errors


def _system_message_errors(parts: list[Any], pending: list[str], where: str) -> list[str]:
    """What the API would reject in a beta ``role: "system"`` message: calls before it
    still waiting for their results, a blank text, a content block of a type the param
    type does not take there."""
    errors = [f"{where}: between calls {pending} and their results"] if pending else []
    for j, part in enumerate(parts):
        kind = str(part.get("type"))
        if kind not in ("text", "tool_addition", "tool_removal"):
            errors.append(f"{where}.content[{j}]: {kind!r} in a system message")
        else:
            errors += sdk_errors(ANTHROPIC_PARTS[kind], part)
        if kind == "text" and _blank(part.get("text")):
            errors.append(f"{where}.content[{j}]: empty text")
    return errors


# -- OpenAI Chat Completions ----------------------------------------------------------


def _data_url_type(url: str) -> str:
    return url[5:].split(";", 1)[0] if url.startswith("data:") else ""


def _remote(url: str) -> bool:
    """A reference the provider fetches itself (an https URL)."""
    return url.startswith(("https://", "http://"))


def chat_errors(payload: list[dict[str, Any]] | dict[str, Any]) -> list[str]:
    """Everything Chat Completions would reject in ``messages``, or in a request's
    ``{"messages", "tools"?}``."""
    errors: list[str] = []
    if isinstance(payload, dict):
        if set(payload) - {"messages", "tools"}:
            errors.append(f"unexpected keys {sorted(set(payload) - {'messages', 'tools'})}")
        if "tools" in payload:
            names = [t.get("function", {}).get("name") for t in payload["tools"]]
            errors += tools_errors(CHAT_TOOLS, payload["tools"], names)
        messages = payload.get("messages", [])
    else:
        messages = payload
    errors += sdk_errors(CHAT_MESSAGES, messages)
    if not [m for m in messages if m["role"] != "system"]:
        errors.append("no conversation messages")
    pending: list[str] = []
    for i, m in enumerate(messages):
        where = f"messages[{i}] role:{m['role']}"
        if m["role"] == "tool":
            if m.get("tool_call_id") not in pending:
                errors.append(f"{where}: tool message answers no open call")
            else:
                pending.remove(m["tool_call_id"])
            if _blank(m.get("content")):
                errors.append(f"{where}: empty tool content")
            continue
        if pending:
            errors.append(f"{where}: calls {pending} are not answered right after their message")
            pending = []
        content = m.get("content")
        if (
            m["role"] == "assistant"
            and content is None
            and not (m.get("tool_calls") or m.get("audio"))
        ):
            errors.append(f"{where}: no content and no tool calls")
        if isinstance(content, str) and _blank(content):
            errors.append(f"{where}: empty content")
        for j, part in enumerate(content if isinstance(content, list) else []):
            if part.get("type") == "text" and _blank(part.get("text")):
                errors.append(f"{where}.content[{j}]: empty text")
            if part.get("type") == "image_url" and not _remote(part["image_url"]["url"]):
                mime = _data_url_type(part["image_url"]["url"])
                if mime not in IMAGE_TYPES:
                    errors.append(f"{where}.content[{j}]: image type {mime!r}")
            if part.get("type") == "file" and "file_id" not in part["file"]:
                mime = _data_url_type(part["file"].get("file_data", ""))
                if mime != "application/pdf":
                    errors.append(f"{where}.content[{j}]: file type {mime!r}")
        if isinstance(content, list) and not content:
            errors.append(f"{where}: empty content list")
        for call in m.get("tool_calls") or []:
            if not NAME_RE.match(call["function"]["name"]):
                errors.append(f"{where}: tool name {call['function']['name']!r}")
            if not CALL_ID_RE.match(call["id"]):
                errors.append(f"{where}: call id {call['id']!r}")
            pending.append(call["id"])
    if pending:
        errors.append(f"calls {pending} have no results")
    final = messages[-1] if messages else {}
    text = final.get("content") if final.get("role") == "assistant" else None
    if isinstance(text, str) and text != text.rstrip():
        errors.append("the final assistant message ends in whitespace")
    return errors


# -- OpenAI Responses -----------------------------------------------------------------


def responses_errors(payload: list[dict[str, Any]] | dict[str, Any]) -> list[str]:
    """Everything the Responses API would reject in ``input``, or in a request's
    ``{"input", "tools"?}``."""
    errors: list[str] = []
    if isinstance(payload, dict):
        if set(payload) - {"input", "tools"}:
            errors.append(f"unexpected keys {sorted(set(payload) - {'input', 'tools'})}")
        if "tools" in payload:
            names = [t.get("name") for t in payload["tools"]]
            errors += tools_errors(RESPONSES_TOOLS, payload["tools"], names)
        items = payload.get("input", [])
    else:
        items = payload
    errors += sdk_errors(RESPONSES_INPUT, items)
    if not [i for i in items if i.get("role") not in ("system", "developer")]:
        errors.append("no conversation items")
    calls: list[str] = []
    answered: set[str] = set()
    for i, item in enumerate(items):
        where = f"input[{i}]"
        kind = item.get("type", "message")
        if kind == "function_call":
            if not NAME_RE.match(item["name"]):
                errors.append(f"{where}: tool name {item['name']!r}")
            if not CALL_ID_RE.match(item["call_id"]):
                errors.append(f"{where}: call id {item['call_id']!r}")
            calls.append(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in calls:
                errors.append(f"{where}: output for an unknown call {item['call_id']!r}")
            answered.add(item["call_id"])
            output = item["output"]
            if isinstance(output, str) and _blank(output):
                errors.append(f"{where}: empty output")
        elif kind == "message":
            content = item["content"]
            if isinstance(content, str):
                if _blank(content):
                    errors.append(f"{where}: empty content")
                continue
            for j, part in enumerate(content):
                if part.get("type") in ("input_text", "output_text") and _blank(part.get("text")):
                    errors.append(f"{where}.content[{j}]: empty text")
                if part.get("type") == "input_image" and "file_id" not in part:
                    if _remote(part.get("image_url", "")):
                        continue
                    mime = _data_url_type(part.get("image_url", ""))
                    if mime not in IMAGE_TYPES:
                        errors.append(f"{where}.content[{j}]: image type {mime!r}")
    if set(calls) - answered:
        errors.append(f"calls {sorted(set(calls) - answered)} have no output")
    return errors
