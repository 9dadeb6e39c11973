"""``compaction_digest``: an inventory of what a compacted window did.

Artifacts, file reads/writes/patches and exec outputs (by tool classification),
``memory_read`` hits, hidden blocks, and cumulative read/modified file lists merged with
the previous digest (a file read and later modified counts as modified only). It is
plain data (a msgspec Struct) stored in the summary block's ``meta``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import msgspec

from timeline.compaction.textscan import has_text
from timeline.compaction.truncation import cut_at_word
from timeline.model.block import (
    ASSISTANT_COMPLETION,
    CONV_RANGE_SUMMARY,
    REACT_PLAN,
    REACT_PLAN_HISTORY,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)

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
    "build_digest",
    "classify_tool",
    "digest_from_meta",
    "digest_meta",
    "tagged_lines",
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

_PATH_KEYS: Final = ("path", "file_path", "filepath", "filename", "file", "target_file")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
EXEC_OUTPUT_HEAD_CHARS: Final = 240
USER_REQUEST_MIN_CHARS: Final = 60
MAX_SEARCHES: Final = 40
"""Searches carried in the cumulative digest (the newest)."""


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


def _params(block: Block) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(block.text)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _paths_of(params: Mapping[str, Any]) -> list[str]:
    for key in _PATH_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value:
            return [value]
    for key in ("patch", "input", "diff"):
        value = params.get(key)
        if isinstance(value, str):
            found = _PATCH_FILE.findall(value)
            if found:
                return [p.strip() for p in found]
    paths = params.get("paths")
    if isinstance(paths, list):
        return [p for p in paths if isinstance(p, str)]
    return []


def _command_of(params: Mapping[str, Any]) -> str:
    for key in ("command", "cmd", "script", "code"):
        value = params.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
    return msgspec.json.encode(params, order="sorted").decode()


_TAG = re.compile(r"\[(?:P|D|S)\]")
_HIT_LISTS: Final = ("hits", "results", "matches", "items", "files")
_HIT_COUNTS: Final = ("count", "total", "total_hits", "num_results", "hit_count")
_QUERY_KEYS: Final = ("query", "q", "pattern", "regex", "glob", "search")
PLAN: Final = REACT_PLAN
PLAN_HISTORY: Final = REACT_PLAN_HISTORY


def tagged_lines(text: str) -> list[str]:
    """The lines of ``text`` carrying a ``[P]``, ``[D]`` or ``[S]`` tag, verbatim."""
    if "[" not in text:
        return []
    return [line.strip() for line in text.splitlines() if _TAG.search(line)]


def _json(text: str) -> Any:
    head = text[:64].lstrip()[:1] or text.lstrip()[:1]  # (no copy of a long text)
    if head not in ("{", "["):
        return None
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None


def _artifact_records(value: Any, depth: int = 0) -> list[dict[str, Any]]:
    """Mappings with ``artifact_path`` or ``physical_path`` in a JSON tool result (the
    result itself, a list of them, or under ``artifacts``/``files``), two levels deep."""
    if depth > 2:
        return []
    if isinstance(value, list):
        return [r for v in value for r in _artifact_records(v, depth + 1)]
    if not isinstance(value, dict):
        return []
    found = [value] if ("artifact_path" in value or "physical_path" in value) else []
    for key in ("artifacts", "files", "outputs"):
        if key in value:
            found += _artifact_records(value[key], depth + 1)
    return found


def _artifacts_from_result(result: Block, parsed: Any) -> tuple[list[Artifact], list[Artifact]]:
    visible: list[Artifact] = []
    streamed: list[Artifact] = []
    for rec in _artifact_records(parsed):
        logical = rec.get("artifact_path")
        physical = rec.get("physical_path")
        path = logical if isinstance(logical, str) and logical else physical
        if not isinstance(path, str) or not path:
            continue
        visibility = str(rec.get("visibility") or "visible")
        sources = rec.get("sources_used")
        artifact = Artifact(
            path=path,
            mime=str(rec.get("mime") or "application/octet-stream"),
            visibility=visibility,
            sources_used=[str(x) for x in sources] if isinstance(sources, list) else [],
            kind=str(rec.get("kind") or ""),
            physical_path=physical if isinstance(physical, str) else "",
        )
        (streamed if visibility == "external" else visible).append(artifact)
    return visible, streamed


def _hit_count(outs: Sequence[Block]) -> int | None:
    """Hits of a search: a JSON list's length, a hits/results list, a count field, else
    the non-empty lines of a text result."""
    if not outs:
        return None
    total = 0
    for out in outs:
        parsed = _json(out.text)
        if isinstance(parsed, list):
            total += len(parsed)
            continue
        if isinstance(parsed, dict):
            lists = [parsed[k] for k in _HIT_LISTS if isinstance(parsed.get(k), list)]
            counts = [parsed[k] for k in _HIT_COUNTS if type(parsed.get(k)) is int]
            if counts:
                total += counts[0]
                continue
            if lists:
                total += len(lists[0])
                continue
        total += sum(map(bool, map(str.strip, out.text.splitlines())))  # non-blank lines
    return total


def _search_record(call: Block, params: Mapping[str, Any], outs: Sequence[Block]) -> SearchRecord:
    query = next((params[k] for k in _QUERY_KEYS if isinstance(params.get(k), str)), "")
    return SearchRecord(
        tool=call.tool_id or "",
        query=query,
        params=dict(params),
        hits=_hit_count(outs),
        turn_id=call.turn_id,
    )


def cap_request(text: str, cap: int) -> str:
    """A user request verbatim up to ``cap`` characters, then a truncation marker."""
    text = text.strip()
    if cap <= 0 or len(text) <= cap:
        return text
    kept = cut_at_word(text, cap)
    return f"{kept} [... {len(text) - len(kept)} more chars]"


def _merge_files(
    previous: CompactionDigest | None, reads: Iterable[str], modified: Iterable[str]
) -> tuple[list[str], list[str]]:
    read_set: dict[str, None] = dict.fromkeys(previous.read_files if previous else ())
    mod_set: dict[str, None] = dict.fromkeys(previous.modified_files if previous else ())
    read_set.update(dict.fromkeys(reads))
    mod_set.update(dict.fromkeys(modified))
    return sorted(p for p in read_set if p not in mod_set), sorted(mod_set)


def build_digest(
    blocks: Sequence[Block],
    previous: CompactionDigest | None,
    *,
    tool_classification: Mapping[str, str] | None = None,
    user_prompt_cap_chars: int = 600,
    max_user_requests: int = 60,
) -> CompactionDigest:
    """The digest of ``blocks`` (the compacted window), merged with ``previous``.

    At most ``max_user_requests`` requests are carried: the first (the goal) and the
    newest; the ones between are counted in ``user_requests_omitted``."""
    calls: dict[str, Block] = {}
    results: dict[str, list[Block]] = {}
    artifacts: list[Artifact] = []
    streamed: list[Artifact] = []
    hidden: list[HiddenBlock] = []
    requests: list[str] = list(previous.user_requests) if previous else []
    tagged: list[str] = list(previous.tagged_notes) if previous else []
    plans: list[PlanRecord] = list(previous.plans) if previous else []
    for block in blocks:
        kind = block.type
        if kind == CONV_RANGE_SUMMARY:
            continue
        if block.hidden:
            hidden.append(HiddenBlock(block.path, block.replacement_text))
        if kind == REACT_TOOL_CALL:
            if block.call_id:
                calls[block.call_id] = block
        elif kind == REACT_TOOL_RESULT:
            if block.call_id:
                results.setdefault(block.call_id, []).append(block)
                parsed = _json(block.text)
                if parsed is not None:
                    found, found_streamed = _artifacts_from_result(block, parsed)
                    artifacts += found
                    streamed += found_streamed
        elif kind in (USER_PROMPT, ASSISTANT_COMPLETION):
            if kind == USER_PROMPT and has_text(block.text):
                requests.append(cap_request(block.text, user_prompt_cap_chars))
            if "[" in block.text:
                tagged += [t for t in tagged_lines(block.text) if t not in tagged]
        elif kind == PLAN:
            plans.append(PlanRecord(block.id, block.path, block.turn_id, block.text))
        if kind == USER_ATTACHMENT or (block.meta and block.meta.get("artifact")):
            artifact = Artifact(
                path=block.path,
                mime=block.mime,
                visibility="hidden" if block.hidden else "visible",
                sources_used=[str(s) for s in block.meta.get("sources_used", ())],
            )
            (streamed if block.meta.get("streamed") else artifacts).append(artifact)

    ops: dict[str, list[FileOp]] = {"read": [], "write": [], "patch": []}
    execs: list[ExecOutput] = []
    memory: list[MemoryHit] = []
    searches: list[SearchRecord] = list(previous.searches) if previous else []
    for call_id, call in calls.items():
        category = classify_tool(call.tool_id, tool_classification)
        params = _params(call)
        outs = results.get(call_id, [])
        if category in ops:
            for path in _paths_of(params):
                ops[category].append(
                    FileOp(path, category, call.tool_id or "", call.turn_id, call_id)
                )
        elif category == "exec":
            output = "\n".join(r.text[:EXEC_OUTPUT_HEAD_CHARS] for r in outs)
            execs.append(
                ExecOutput(
                    command=_command_of(params),
                    tool=call.tool_id or "",
                    turn_id=call.turn_id,
                    call_id=call_id,
                    output_head=output[:EXEC_OUTPUT_HEAD_CHARS],
                    is_error=any(bool(r.meta.get("is_error")) for r in outs),
                )
            )
        elif category == "search":
            searches.append(_search_record(call, params, outs))
        elif category == "memory_read":
            hit_paths: list[str] = []
            hit_turns: list[str] = []
            for result in outs:
                for hit in result.meta.get("hits", ()):
                    if isinstance(hit, Mapping):
                        hit_paths.append(str(hit.get("path", "")))
                        hit_turns.append(str(hit.get("turn_id", "")))
            memory.append(MemoryHit(str(params.get("query", "")), hit_paths, hit_turns))

    omitted = previous.user_requests_omitted if previous else 0
    if max_user_requests > 1 and len(requests) > max_user_requests:
        dropped = len(requests) - max_user_requests
        requests = requests[:1] + requests[1 + dropped :]
        omitted += dropped
    read_files, modified_files = _merge_files(
        previous,
        (op.path for op in ops["read"]),
        (op.path for op in ops["write"] + ops["patch"]),
    )
    return CompactionDigest(
        artifacts=artifacts,
        streamed_artifacts=streamed,
        file_reads=ops["read"],
        file_writes=ops["write"],
        file_patches=ops["patch"],
        exec_outputs=execs,
        memory_reads=memory,
        hidden_blocks=hidden,
        read_files=read_files,
        modified_files=modified_files,
        user_requests=requests,
        user_requests_omitted=omitted,
        searches=searches[-MAX_SEARCHES:],
        tagged_notes=tagged,
        plans=plans,
    )


_latest: tuple[Any, CompactionDigest] | None = None


def digest_meta(digest: CompactionDigest) -> dict[str, Any]:
    """``digest`` as plain data for a summary block's meta. The newest one is kept with
    its digest, so the next compaction reads it back without converting it (blocks are
    immutable: their meta is never changed in place)."""
    global _latest
    raw: dict[str, Any] = msgspec.to_builtins(digest)
    _latest = (raw, digest)
    return raw


def digest_from_meta(meta: Mapping[str, Any]) -> CompactionDigest | None:
    """The digest stored in a summary block's meta, or None when absent or unreadable."""
    raw = meta.get("compaction_digest")
    if raw is None:
        return None
    latest = _latest
    if latest is not None and latest[0] is raw:
        return latest[1]
    try:
        return msgspec.convert(raw, CompactionDigest)
    except msgspec.ValidationError:
        return None
