"""The text form of a provider item: a short note saying what it was, then its text.

Other providers and the text layouts see this text in place of the item, search indexes
it and summaries read it, so it holds what a reader would look for: search queries,
result titles and URLs, code and its output, a compaction summary. Opaque values
(``encrypted_content``, signatures, base64 data, ids) are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["describe"]

_SKIP: Final = frozenset(
    {
        "type",
        "id",
        "call_id",
        "tool_use_id",
        "approval_request_id",
        "encrypted_content",
        "encrypted_index",
        "encrypted_stdout",
        "signature",
        "status",
        "cache_control",
        "media_type",
        "data",
        "result",
        "file_id",
        "container_id",
        "created_by",
        "caller",
    }
)
"""Keys whose values are bookkeeping or opaque, never text worth showing."""

_BLOB: Final = re.compile(r"^[A-Za-z0-9+/=_-]{200,}$")
_NOTE_CHARS: Final = 120


def _short(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _NOTE_CHARS else f"{text[: _NOTE_CHARS - 1]}…"


def _lines(value: Any, out: list[str], depth: int = 0) -> None:
    """Every text leaf of ``value`` in order: a dict's own strings on one line (``title —
    url``), nested values after it."""
    if depth > 32:
        return
    if isinstance(value, str):
        if value.strip() and not _BLOB.match(value):
            out.append(value)
        return
    if isinstance(value, list):
        for item in value:
            _lines(item, out, depth + 1)
        return
    if not isinstance(value, Mapping):
        return
    own = [
        v
        for k, v in value.items()
        if k not in _SKIP and isinstance(v, str) and v.strip() and not _BLOB.match(v)
    ]
    if own:
        out.append(" — ".join(own))
    for k, v in value.items():
        if k not in _SKIP and isinstance(v, Mapping | list):
            _lines(v, out, depth + 1)


def _body(item: Mapping[str, Any], skip: frozenset[str] = frozenset()) -> list[str]:
    out: list[str] = []
    _lines({k: v for k, v in item.items() if k not in skip}, out)
    return out


def _query(item: Mapping[str, Any]) -> str:
    source = item.get("input") or item.get("action") or {}
    if not isinstance(source, Mapping):
        return ""
    for key in ("query", "url", "pattern", "command", "path"):
        if isinstance(source.get(key), str):
            return str(source[key])
    queries = source.get("queries")
    if isinstance(queries, list):
        return "; ".join(str(q) for q in queries)
    return ""


def _action(item: Mapping[str, Any]) -> str:
    action = item.get("action")
    return str(action.get("type", "")) if isinstance(action, Mapping) else ""


def _count(value: Any) -> str:
    if not isinstance(value, list):
        return ""
    return f" → {len(value)} result{'' if len(value) == 1 else 's'}"


def _error(content: Any) -> str:
    if isinstance(content, Mapping) and isinstance(content.get("error_code"), str):
        return f" (error: {content['error_code']})"
    return ""


def _server_tool(item: Mapping[str, Any]) -> str:
    name = str(item.get("name", ""))
    query = _query(item)
    label = name.replace("_", " ")
    return f'[{label}: "{_short(query)}"]' if query else f"[server tool {name}]"


def _tool_result(label: str) -> Callable[[Mapping[str, Any]], str]:
    def note(item: Mapping[str, Any]) -> str:
        content = item.get("content")
        code = content.get("return_code") if isinstance(content, Mapping) else None
        exit_note = f" (exit {code})" if isinstance(code, int) else ""
        return f"[{label}{_count(content)}{exit_note}{_error(content)}]"

    return note


def _web_search_call(item: Mapping[str, Any]) -> str:
    action = item.get("action")
    kind = action.get("type") if isinstance(action, Mapping) else "search"
    query = _query(item)
    what = {"search": "web search", "open_page": "web page", "find": "find in page"}
    label = what.get(str(kind), f"web search {kind}")
    return f'[{label}: "{_short(query)}"]' if query else f"[{label}]"


def _mcp(label: str) -> Callable[[Mapping[str, Any]], str]:
    def note(item: Mapping[str, Any]) -> str:
        server = item.get("server_label") or item.get("server_name") or ""
        name = item.get("name") or ""
        where = "/".join(str(x) for x in (server, name) if x)
        if "approve" in item:
            where = "approved" if item.get("approve") else "denied"
        return f"[{label}: {where}]" if where else f"[{label}]"

    return note


def _fixed(label: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda item: f"[{label}]"


def _tool_change(part: Mapping[str, Any]) -> str:
    tool = part.get("tool")
    name = ""
    if isinstance(tool, Mapping):
        name = str(tool.get("name") or tool.get("server_name") or "")
        definition = tool.get("definition")
        if not name and isinstance(definition, Mapping):
            name = str(definition.get("name", ""))
    verb = "added" if part.get("type") == "tool_addition" else "removed"
    return f"[tool {verb}: {_short(name)}]" if name else f"[tool {verb}]"


def _system_message(item: Mapping[str, Any]) -> str:
    """An Anthropic ``role: "system"`` message: its texts in full, a note for each tool
    it adds or removes (its note is all its text form: ``describe`` adds no body)."""
    content = item.get("content")
    lines = ["[system message]"]
    for part in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            lines.append(part["text"])
        elif part.get("type") in ("tool_addition", "tool_removal"):
            lines.append(_tool_change(part))
        else:
            lines += _body(part)
    return "\n".join(line for line in lines if line.strip())


_ANTHROPIC: Final[dict[str, Callable[[Mapping[str, Any]], str]]] = {
    "server_tool_use": _server_tool,
    "web_search_tool_result": _tool_result("web search results"),
    "web_fetch_tool_result": _tool_result("web fetch result"),
    "code_execution_tool_result": _tool_result("code execution result"),
    "bash_code_execution_tool_result": _tool_result("bash result"),
    "text_editor_code_execution_tool_result": _tool_result("text editor result"),
    "tool_search_tool_result": _tool_result("tool search result"),
    "mcp_tool_use": _mcp("MCP call"),
    "mcp_tool_result": _fixed("MCP result"),
    "container_upload": _fixed("file uploaded to the code container"),
    "compaction": _fixed("compacted context"),
    "system": _system_message,
}
_RESPONSES: Final[dict[str, Callable[[Mapping[str, Any]], str]]] = {
    "web_search_call": _web_search_call,
    "file_search_call": lambda item: f"[file search: {_short(_query({'action': item}))}]",
    "code_interpreter_call": _fixed("code interpreter"),
    "image_generation_call": _fixed("image generation"),
    "computer_call": lambda item: f"[computer: {_short(_action(item))}]",
    "computer_call_output": _fixed("computer screenshot"),
    "mcp_list_tools": _mcp("MCP tools"),
    "mcp_call": _mcp("MCP call"),
    "mcp_approval_request": _mcp("MCP approval request"),
    "mcp_approval_response": _mcp("MCP approval"),
    "local_shell_call": _fixed("local shell call"),
    "local_shell_call_output": _fixed("local shell output"),
    "shell_call": _fixed("shell call"),
    "shell_call_output": _fixed("shell output"),
    "apply_patch_call": _fixed("apply patch"),
    "apply_patch_call_output": _fixed("apply patch output"),
    "custom_tool_call": lambda item: f"[custom tool call: {_short(item.get('name', ''))}]",
    "custom_tool_call_output": _fixed("custom tool output"),
    "compaction": _fixed("compacted context (encrypted, kept for OpenAI)"),
    "item_reference": lambda item: f"[item reference: {_short(item.get('id', ''))}]",
}
_CHAT: Final[dict[str, Callable[[Mapping[str, Any]], str]]] = {
    "audio": lambda item: f"[audio reply {_short(item.get('id', ''))}]",
}
_NOTES: Final = {"anthropic": _ANTHROPIC, "responses": _RESPONSES, "chat": _CHAT}
_NAMES: Final = {"anthropic": "Anthropic", "responses": "OpenAI Responses", "chat": "OpenAI Chat"}


def describe(provider: str, kind: str, item: Mapping[str, Any]) -> str:
    """The text form of ``item`` (of type ``kind``, from ``provider``): its note, then
    its text lines (never empty)."""
    note = _NOTES.get(provider, {}).get(kind)
    head = note(item) if note is not None else f"[{_NAMES.get(provider, provider)} {kind}]"
    if note is _system_message:
        return head  # its texts in order, each in full
    lines = [head]
    for line in _body(item):
        # a query or tool name the note already shows, a title repeated
        if line in head or line.replace("_", " ") in head or line in lines:
            continue
        lines.append(line)
    return "\n".join(lines)
