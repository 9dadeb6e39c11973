"""Tools the model calls to manage its own context: search archived history, read a
path back, compact now.

``memory_read`` hits are recorded in the result's ``meta["hits"]`` so the compaction
digest can list them; ``read_path`` brings a block's full text back into the context as
a tool result (from the timeline while it still holds the block, else from the store),
a range of its lines at a time for a long one; ``compact_context`` lets the agent
compact at a moment it chooses (between two tasks), with a focus for the summary.
:func:`memory_tools` makes all three for a timeline, and :data:`TOOL_SPECS` describes
them to the model (name, description, JSON schema: what ``render(tools=...)`` and the
providers' tool lists take).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from timeline._compaction import CompactionStats, cut_at_word
from timeline._core import Timeline
from timeline._driver.react import ToolOutput
from timeline._model import Block, IndexStore, StoreError, TimelineError

__all__ = [
    "TOOL_SPECS",
    "compact_context_tool",
    "memory_read_tool",
    "memory_tools",
    "read_path_tool",
]

ToolFn = Callable[[Mapping[str, Any]], ToolOutput]

TOOL_SPECS: Final[Mapping[str, Mapping[str, Any]]] = {
    "memory_read": {
        "name": "memory_read",
        "description": (
            "Search everything this conversation ever held, including what was compacted "
            "or cleared out of the context. Returns matching paths with a snippet each."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "limit": {"type": "integer", "description": "most hits (default 5)"},
            },
            "required": ["query"],
        },
    },
    "read_path": {
        "name": "read_path",
        "description": (
            "Read the full text stored at a path (a cleared, offloaded or compacted tool "
            "result, a file read, a message), verbatim. For a long text, read a range of "
            "lines with offset (the first line, from 1) and limit (how many lines)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "the path, as shown in context"},
                "offset": {"type": "integer", "description": "first line to read, from 1"},
                "limit": {"type": "integer", "description": "how many lines to read"},
            },
            "required": ["path"],
        },
    },
    "compact_context": {
        "name": "compact_context",
        "description": (
            "Compact the conversation now: older history is replaced by a summary (the full "
            "text stays searchable with memory_read). Call it between two tasks, with a "
            "focus saying what the summary must keep."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "focus": {"type": "string", "description": "what the summary must keep"},
            },
        },
    },
}
"""The tools' descriptions for the model (Anthropic's tool shape; OpenAI's ``parameters``
is the same JSON schema as ``input_schema``)."""


def memory_read_tool(store: IndexStore, conversation_id: str, limit: int = 5) -> ToolFn:
    """``memory_read({"query": ..., "limit": n})``: full-text search of everything the
    conversation ever held, evicted blocks and summaries included."""

    def memory_read(params: Mapping[str, Any]) -> ToolOutput:
        query = str(params.get("query", ""))
        try:
            n = int(params.get("limit", limit))
        except (TypeError, ValueError):
            n = limit
        try:
            hits = store.search(conversation_id, query, limit=max(1, min(n, 50)))
        except StoreError as exc:
            return ToolOutput(f"error: memory search failed: {exc}", is_error=True)
        meta = {"query": query, "hits": [{"path": h.path, "turn_id": h.turn_id} for h in hits]}
        if not hits:
            return ToolOutput(f"no archived context matched {query!r}", meta=meta)
        lines = [f"- {h.path} (turn {h.turn_id}): {h.snippet}" for h in hits]
        return ToolOutput("\n".join(lines), meta=meta)

    return memory_read


def _line(params: Mapping[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{key} must be a whole number, got {value!r}")
    number = int(value)
    if number < 1:
        raise ValueError(f"{key} must be at least 1, got {number}")
    return number


def _stored(
    store: IndexStore | None, timeline: Timeline | None, conversation_id: str, path: str
) -> list[Block]:
    """The blocks at ``path``: the timeline's while it holds them (before and after a
    persist, whatever the store has yet), else the store's."""
    if timeline is not None:
        found = [b for b in timeline.blocks if b.path == path]
        if found:
            return found
    if store is None:
        return []
    return store.read(conversation_id, path)


def _selected(text: str, offset: int | None, limit: int | None) -> tuple[str, int, int]:
    """Lines ``offset`` (from 1) on of ``text``, ``limit`` of them (all by default): the
    text, the number of its first line and how many lines ``text`` has."""
    if offset is None and limit is None:
        return text, 1, text.count("\n") + 1
    lines = text.splitlines(keepends=True)
    first = (offset or 1) - 1
    last = len(lines) if limit is None else min(len(lines), first + limit)
    return "".join(lines[first:last]), first + 1, len(lines)


def read_path_tool(
    store: IndexStore | None,
    conversation_id: str,
    max_chars: int = 20_000,
    *,
    timeline: Timeline | None = None,
) -> ToolFn:
    """``read_path({"path": ..., "offset": n, "limit": m})``: the text stored at a
    logical path, back in context verbatim (its lines ``offset`` to ``offset + limit -
    1`` when given). With ``timeline`` the blocks it still holds are read first, so a
    result cleared or offloaded before any persist reads back too. Longer than
    ``max_chars``: cut at a word, saying how to read on."""

    def read_path(params: Mapping[str, Any]) -> ToolOutput:
        path = str(params.get("path", ""))
        try:
            offset, limit = _line(params, "offset"), _line(params, "limit")
        except ValueError as exc:
            return ToolOutput(f"error: {exc}", is_error=True)
        try:
            found = _stored(store, timeline, conversation_id, path)
        except StoreError as exc:
            return ToolOutput(f"error: read failed: {exc}", is_error=True)
        if not found:
            return ToolOutput(f"error: nothing stored at {path!r}", is_error=True)
        whole = "\n".join(b.text for b in found)
        text, first, total = _selected(whole, offset, limit)
        if offset is not None or limit is not None:
            if not text:
                return ToolOutput(f"error: {path} has {total:,} lines", is_error=True)
            last = first + text.count("\n") - text.endswith("\n")
            text = f"[{path}: lines {first:,}-{last:,} of {total:,}]\n{text}"
        if len(text) > max_chars:
            kept = cut_at_word(text, max_chars)
            header = 1 if offset is not None or limit is not None else 0
            following = first + kept.count("\n") - header
            text = (
                f"{kept}\n[... {len(text) - len(kept):,} more chars at {path}: read_path with "
                f"offset={following} to read on]"
            )
        return ToolOutput(text, meta={"read_path": path})

    return read_path


def compact_context_tool(timeline: Timeline, system: str = "", tools: Sequence[Any] = ()) -> ToolFn:
    """``compact_context({"focus": ...})``: compact ``timeline`` now (as ``compact()``
    does, with ``system`` the prompt's system text and ``tools`` the tools its requests
    carry, both counted against the budget), the summary keeping ``focus`` in view; the
    result says what it did."""

    def compact_context(params: Mapping[str, Any]) -> ToolOutput:
        focus = str(params.get("focus") or "").strip() or None
        try:
            stats = timeline.compact(system, tools=tools, focus=focus)
        except TimelineError as exc:
            return ToolOutput(f"error: compaction failed: {exc}", is_error=True)
        if stats is None or stats.skipped is not None:
            why = "no earlier history to summarize" if stats is None else stats.skipped
            return ToolOutput(f"nothing compacted: {why}")
        return ToolOutput(_compacted(stats, focus))

    return compact_context


def _compacted(stats: CompactionStats, focus: str | None) -> str:
    """What a compaction did, told to the model: the blocks cleared and summarized (a
    focus unused when no summary was needed), the tokens before and after."""
    done: list[str] = []
    if stats.cleared_blocks:
        done.append(
            f"cleared {stats.cleared_blocks:,} old blocks to one-line placeholders "
            "(read_path brings one back verbatim)"
        )
    if stats.tier == "clear":
        if focus:
            done.append("no summary was needed, so the focus was not used")
    else:
        about = f" (focus: {focus})" if focus else ""
        done.append(f"compacted {stats.compacted_blocks:,} blocks into a summary{about}")
    return (
        f"{'; '.join(done)}; the context went from {stats.tokens_before:,} to "
        f"{stats.tokens_after or 0:,} tokens. The full text stays searchable with memory_read."
    )


def memory_tools(
    timeline: Timeline,
    store: IndexStore | None = None,
    *,
    system: str = "",
    tools: Sequence[Any] = (),
) -> dict[str, ToolFn]:
    """The context tools for ``timeline``, by name (their descriptions are
    :data:`TOOL_SPECS`): ``read_path`` and ``compact_context`` always, ``memory_read``
    with a ``store``; ``system`` and ``tools`` are what the agent's requests carry (a
    compaction counts them against the budget). For the driver: ``ReactDriver(tl, model,
    {**tools, **memory_tools(tl, store, system=SYSTEM, tools=SPECS)})``."""
    made = {
        "read_path": read_path_tool(store, timeline.conversation_id, timeline=timeline),
        "compact_context": compact_context_tool(timeline, system, tools),
    }
    if store is not None:
        made = {"memory_read": memory_read_tool(store, timeline.conversation_id), **made}
    return made
