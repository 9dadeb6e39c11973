"""What the digest reads out of tool calls and results: parameters, file paths, commands,
artifacts named by JSON results and search hit counts."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from timeline._compaction.digest_records import Artifact, SearchRecord
from timeline._model import Block

__all__ = [
    "artifacts_from_result",
    "call_params",
    "command_of",
    "json_value",
    "paths_of",
    "search_record",
]

_PATH_KEYS: Final = ("path", "file_path", "filepath", "filename", "file", "target_file")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_HIT_LISTS: Final = ("hits", "results", "matches", "items", "files")
_HIT_COUNTS: Final = ("count", "total", "total_hits", "num_results", "hit_count")
_QUERY_KEYS: Final = ("query", "q", "pattern", "regex", "glob", "search")


def call_params(block: Block) -> dict[str, Any]:
    """A tool call's parameters (``{}`` when its text is not a JSON object)."""
    try:
        value = msgspec.json.decode(block.text)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def paths_of(params: Mapping[str, Any]) -> list[str]:
    """The file paths a call names: a path key, the files of a patch, or ``paths``."""
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


def command_of(params: Mapping[str, Any]) -> str:
    """The command an exec call ran (its parameters as JSON when none is named)."""
    for key in ("command", "cmd", "script", "code"):
        value = params.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
    return msgspec.json.encode(params, order="sorted").decode()


def json_value(text: str) -> Any:
    """``text`` decoded when it is a JSON object or array, else None."""
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


def artifacts_from_result(result: Block, parsed: Any) -> tuple[list[Artifact], list[Artifact]]:
    """The artifacts a JSON tool result names: (visible, streamed)."""
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
        parsed = json_value(out.text)
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


def search_record(call: Block, params: Mapping[str, Any], outs: Sequence[Block]) -> SearchRecord:
    """A search call with its query, parameters and hit count."""
    query = next((params[k] for k in _QUERY_KEYS if isinstance(params.get(k), str)), "")
    return SearchRecord(
        tool=call.tool_id or "",
        query=query,
        params=dict(params),
        hits=_hit_count(outs),
        turn_id=call.turn_id,
    )
