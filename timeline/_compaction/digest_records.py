"""The records of ``compaction_digest``: plain data (frozen msgspec Structs) stored in a
summary block's ``meta``, the tool classification that sorts calls into them, and the
conversion to and from that ``meta``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

__all__ = [
    "DEFAULT_TOOL_CLASSIFICATION",
    "Artifact",
    "CompactionDigest",
    "ExecOutput",
    "FileOp",
    "HiddenBlock",
    "MemoryHit",
    "PlanRecord",
    "SearchRecord",
    "ToolCategory",
    "classify_tool",
    "digest_from_meta",
    "digest_meta",
]

ToolCategory = Literal["read", "write", "patch", "exec", "memory_read", "search", "other"]

DEFAULT_TOOL_CLASSIFICATION: Final[Mapping[str, ToolCategory]] = {
    "read_file": "read",
    "read": "read",
    "view": "read",
    "cat": "read",
    "open_file": "read",
    "write_file": "write",
    "write": "write",
    "create_file": "write",
    "edit_file": "patch",
    "edit": "patch",
    "str_replace": "patch",
    "apply_patch": "patch",
    "patch": "patch",
    "multi_edit": "patch",
    "bash": "exec",
    "shell": "exec",
    "exec": "exec",
    "run_command": "exec",
    "execute": "exec",
    "python": "exec",
    "memory_read": "memory_read",
    "grep": "search",
    "glob": "search",
    "search": "search",
}
"""Tool name to category; a policy's ``tool_classification`` extends and overrides it."""


class FileOp(msgspec.Struct, frozen=True):
    path: str
    op: str
    tool: str
    turn_id: str
    call_id: str


class ExecOutput(msgspec.Struct, frozen=True):
    command: str
    tool: str
    turn_id: str
    call_id: str
    output_head: str
    is_error: bool = False


class MemoryHit(msgspec.Struct, frozen=True):
    query: str
    paths: list[str]
    turn_ids: list[str]


class HiddenBlock(msgspec.Struct, frozen=True):
    path: str
    replacement_text: str | None


class Artifact(msgspec.Struct, frozen=True):
    path: str
    mime: str
    visibility: str
    sources_used: list[str] = []
    kind: str = ""
    physical_path: str = ""


class SearchRecord(msgspec.Struct, frozen=True):
    """A search tool call: its parameters and how many hits it returned (None: unknown)."""

    tool: str
    query: str
    params: dict[str, Any]
    hits: int | None
    turn_id: str = ""


class PlanRecord(msgspec.Struct, frozen=True):
    """A ``react.plan`` block seen in a compacted window (for ``react.plan.history``)."""

    block_id: str
    path: str
    turn_id: str
    text: str


class CompactionDigest(msgspec.Struct, frozen=True, kw_only=True):
    """Inventory of one compacted window, with cumulative file lists and user requests."""

    artifacts: list[Artifact] = []
    streamed_artifacts: list[Artifact] = []
    file_reads: list[FileOp] = []
    file_writes: list[FileOp] = []
    file_patches: list[FileOp] = []
    exec_outputs: list[ExecOutput] = []
    memory_reads: list[MemoryHit] = []
    hidden_blocks: list[HiddenBlock] = []
    read_files: list[str] = []
    modified_files: list[str] = []
    user_requests: list[str] = []
    user_requests_omitted: int = 0
    """Requests dropped from the carried list (between the first and the newest ones);
    their full text stays in the turn log, searchable with ``memory_read``."""
    searches: list[SearchRecord] = []
    tagged_notes: list[str] = []
    """Lines tagged ``[P]``, ``[D]`` or ``[S]`` in user prompts and completions, verbatim
    and cumulative (kept in every later summary)."""
    plans: list[PlanRecord] = []
    """Every plan compacted so far, oldest first (cumulative)."""


def classify_tool(name: str | None, overrides: Mapping[str, str] | None = None) -> str:
    """Category of a tool by name: overrides first, then the defaults, else ``other``."""
    if not name:
        return "other"
    if overrides and name in overrides:
        return overrides[name]
    return DEFAULT_TOOL_CLASSIFICATION.get(name, "other")


def digest_meta(digest: CompactionDigest) -> dict[str, Any]:
    """``digest`` as plain data for a summary block's meta."""
    raw: dict[str, Any] = msgspec.to_builtins(digest)
    return raw


def digest_from_meta(meta: Mapping[str, Any]) -> CompactionDigest | None:
    """The digest stored in a summary block's meta, or None when absent or unreadable."""
    raw = meta.get("compaction_digest")
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, CompactionDigest)
    except msgspec.ValidationError:
        return None
