"""Tools that reach the index store: search archived history, read a path back.

``memory_read`` hits are recorded in the result's ``meta["hits"]`` so the compaction
digest can list them; ``read_path`` brings an evicted block's full text back into the
context as a tool result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from timeline.compaction.truncation import cut_at_word
from timeline.driver.react import ToolOutput
from timeline.model.errors import StoreError
from timeline.model.persistence import IndexStore

__all__ = ["memory_read_tool", "read_path_tool"]

ToolFn = Callable[[Mapping[str, Any]], ToolOutput]


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


def read_path_tool(store: IndexStore, conversation_id: str, max_chars: int = 20_000) -> ToolFn:
    """``read_path({"path": ...})``: the stored text at a logical path, back in context."""

    def read_path(params: Mapping[str, Any]) -> ToolOutput:
        path = str(params.get("path", ""))
        try:
            found = store.read(conversation_id, path)
        except StoreError as exc:
            return ToolOutput(f"error: read failed: {exc}", is_error=True)
        if not found:
            return ToolOutput(f"error: nothing stored at {path!r}", is_error=True)
        text = "\n".join(b.text for b in found)
        if len(text) > max_chars:
            kept = cut_at_word(text, max_chars)
            text = f"{kept}\n[... {len(text) - len(kept)} more chars at {path}]"
        return ToolOutput(text, meta={"read_path": path})

    return read_path
