"""``compaction_digest``: an inventory of what a compacted window did.

Artifacts, file reads/writes/patches and exec outputs (by tool classification),
``memory_read`` hits, hidden blocks, and cumulative read/modified file lists merged with
the previous digest (a file read and later modified counts as modified only). It is
plain data (a msgspec Struct, see :mod:`~timeline._compaction.digest_records`) stored in
the summary block's ``meta``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from timeline._compaction.digest_records import (
    DEFAULT_TOOL_CLASSIFICATION,
    Artifact,
    CompactionDigest,
    ExecOutput,
    FileOp,
    HiddenBlock,
    MemoryHit,
    PlanRecord,
    SearchRecord,
    ToolCategory,
    classify_tool,
    digest_from_meta,
    digest_meta,
)
from timeline._compaction.digest_tools import (
    artifacts_from_result,
    call_params,
    command_of,
    json_value,
    paths_of,
    search_record,
)
from timeline._compaction.textscan import has_text
from timeline._compaction.truncation import cut_at_word
from timeline._model import (
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
    "cap_request",
    "classify_tool",
    "digest_from_meta",
    "digest_meta",
    "fold_requests",
    "tagged_lines",
]

EXEC_OUTPUT_HEAD_CHARS: Final = 240
USER_REQUEST_MIN_CHARS: Final = 60
MAX_SEARCHES: Final = 40
"""Searches carried in the cumulative digest (the newest)."""
_TAG = re.compile(r"\[(?:P|D|S)\]")
PLAN: Final = REACT_PLAN
PLAN_HISTORY: Final = REACT_PLAN_HISTORY


def tagged_lines(text: str) -> list[str]:
    """The lines of ``text`` carrying a ``[P]``, ``[D]`` or ``[S]`` tag, verbatim."""
    if "[" not in text:
        return []
    return [line.strip() for line in text.splitlines() if _TAG.search(line)]


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


@attrs.define
class _Window:
    """What one pass over the compacted blocks collects (the cumulative lists start from
    the previous digest)."""

    requests: list[str]
    tagged: list[str]
    plans: list[PlanRecord]
    calls: dict[str, Block] = attrs.Factory(dict)
    results: dict[str, list[Block]] = attrs.Factory(dict)
    artifacts: list[Artifact] = attrs.Factory(list)
    streamed: list[Artifact] = attrs.Factory(list)
    hidden: list[HiddenBlock] = attrs.Factory(list)


def _attachment(block: Block) -> Artifact:
    """An attachment or a block marked as an artifact."""
    return Artifact(
        path=block.path,
        mime=block.mime,
        visibility="hidden" if block.hidden else "visible",
        sources_used=[str(s) for s in block.meta.get("sources_used", ())],
    )


def _scan(blocks: Sequence[Block], previous: CompactionDigest | None, cap: int) -> _Window:
    """One pass over the compacted blocks (a single loop: it runs at every compaction)."""
    w = _Window(
        requests=list(previous.user_requests) if previous else [],
        tagged=list(previous.tagged_notes) if previous else [],
        plans=list(previous.plans) if previous else [],
    )
    for block in blocks:
        kind = block.type
        if kind == CONV_RANGE_SUMMARY:
            continue
        if block.hidden:
            w.hidden.append(HiddenBlock(block.path, block.replacement_text))
        if kind == REACT_TOOL_CALL:
            if block.call_id:
                w.calls[block.call_id] = block
        elif kind == REACT_TOOL_RESULT:
            if block.call_id:
                w.results.setdefault(block.call_id, []).append(block)
                parsed = json_value(block.text)
                if parsed is not None:
                    found, found_streamed = artifacts_from_result(block, parsed)
                    w.artifacts += found
                    w.streamed += found_streamed
        elif kind in (USER_PROMPT, ASSISTANT_COMPLETION):
            if kind == USER_PROMPT and has_text(block.text):
                w.requests.append(cap_request(block.text, cap))
            if "[" in block.text:
                w.tagged += [t for t in tagged_lines(block.text) if t not in w.tagged]
        elif kind == PLAN:
            w.plans.append(PlanRecord(block.id, block.path, block.turn_id, block.text))
        if kind == USER_ATTACHMENT or (block.meta and block.meta.get("artifact")):
            (w.streamed if block.meta.get("streamed") else w.artifacts).append(_attachment(block))
    return w


@attrs.define
class _Calls:
    """What the compacted tool calls did, by category."""

    ops: dict[str, list[FileOp]]
    execs: list[ExecOutput]
    memory: list[MemoryHit]
    searches: list[SearchRecord]


def _exec_output(
    call: Block, call_id: str, params: Mapping[str, object], outs: list[Block]
) -> ExecOutput:
    output = "\n".join(r.text[:EXEC_OUTPUT_HEAD_CHARS] for r in outs)
    return ExecOutput(
        command=command_of(params),
        tool=call.tool_id or "",
        turn_id=call.turn_id,
        call_id=call_id,
        output_head=output[:EXEC_OUTPUT_HEAD_CHARS],
        is_error=any(bool(r.meta.get("is_error")) for r in outs),
    )


def _memory_hit(params: Mapping[str, object], outs: list[Block]) -> MemoryHit:
    hit_paths: list[str] = []
    hit_turns: list[str] = []
    for result in outs:
        for hit in result.meta.get("hits", ()):
            if isinstance(hit, Mapping):
                hit_paths.append(str(hit.get("path", "")))
                hit_turns.append(str(hit.get("turn_id", "")))
    return MemoryHit(str(params.get("query", "")), hit_paths, hit_turns)


def _classify_calls(
    window: _Window, previous: CompactionDigest | None, classification: Mapping[str, str] | None
) -> _Calls:
    done = _Calls(
        ops={"read": [], "write": [], "patch": []},
        execs=[],
        memory=[],
        searches=list(previous.searches) if previous else [],
    )
    for call_id, call in window.calls.items():
        category = classify_tool(call.tool_id, classification)
        params = call_params(call)
        outs = window.results.get(call_id, [])
        if category in done.ops:
            for path in paths_of(params):
                op = FileOp(path, category, call.tool_id or "", call.turn_id, call_id)
                done.ops[category].append(op)
        elif category == "exec":
            done.execs.append(_exec_output(call, call_id, params, outs))
        elif category == "search":
            done.searches.append(search_record(call, params, outs))
        elif category == "memory_read":
            done.memory.append(_memory_hit(params, outs))
    return done


def fold_requests(requests: list[str], most: int) -> tuple[list[str], int]:
    """At most ``most`` of ``requests``: the first (the goal) and the newest; with how
    many between were left out (``most`` under 2: all kept)."""
    if most < 2 or len(requests) <= most:
        return requests, 0
    dropped = len(requests) - most
    return requests[:1] + requests[1 + dropped :], dropped


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
    window = _scan(blocks, previous, user_prompt_cap_chars)
    calls = _classify_calls(window, previous, tool_classification)
    requests, dropped = fold_requests(window.requests, max_user_requests)
    omitted = (previous.user_requests_omitted if previous else 0) + dropped
    ops = calls.ops
    read_files, modified_files = _merge_files(
        previous,
        (op.path for op in ops["read"]),
        (op.path for op in ops["write"] + ops["patch"]),
    )
    return CompactionDigest(
        artifacts=window.artifacts,
        streamed_artifacts=window.streamed,
        file_reads=ops["read"],
        file_writes=ops["write"],
        file_patches=ops["patch"],
        exec_outputs=calls.execs,
        memory_reads=calls.memory,
        hidden_blocks=window.hidden,
        read_files=read_files,
        modified_files=modified_files,
        user_requests=requests,
        user_requests_omitted=omitted,
        searches=calls.searches[-MAX_SEARCHES:],
        tagged_notes=window.tagged,
        plans=window.plans,
    )
