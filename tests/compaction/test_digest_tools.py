"""Edges of what the compaction digest reads out of JSON tool results
(``timeline._compaction.digest_tools``): where artifact records are found, how deep, and
the defaults of the fields a record leaves out. The digest is what a summary remembers
of the files a tool produced. Written against mutants the broader tests let through."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.conversations import coding_turn
from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    InventorySummarizer,
    SummaryRequest,
    Timeline,
    blocks,
)
from timeline._compaction.digest import build_digest
from timeline._compaction.digest_records import Artifact, classify_tool
from timeline._compaction.digest_tools import command_of, search_record


def digest_of(result: Any) -> tuple[list[Artifact], list[Artifact]]:
    """(visible, streamed) artifacts of one tool result holding ``result`` as JSON."""
    tl = Timeline("d")
    tl.begin_turn()
    call = tl.append(blocks.tool_call("render_report", {"title": "q3"}))
    tl.append(blocks.tool_result(call.call_id or "", json.dumps(result)))
    digest = build_digest(tl.blocks, None)
    return digest.artifacts, digest.streamed_artifacts


def paths(result: Any) -> list[str]:
    visible, streamed = digest_of(result)
    return [a.path for a in visible + streamed]


def rec(name: str) -> dict[str, str]:
    return {"artifact_path": f"fi:{name}"}


@pytest.mark.parametrize("key", ["artifacts", "files", "outputs"])
def test_records_under_each_container_key(key: str) -> None:
    """Records are found in a list or a single mapping under artifacts/files/outputs."""
    assert paths({key: [rec("a"), rec("b")]}) == ["fi:a", "fi:b"]
    assert paths({key: rec("c")}) == ["fi:c"]
    assert paths({"other": [rec("d")]}) == []


def test_a_record_and_its_nested_records_are_all_kept() -> None:
    """A record that names nested ones, under several keys: all of them, in order."""
    result = {
        **rec("top"),
        "artifacts": [rec("a")],
        "files": [rec("f")],
        "outputs": rec("o"),
    }
    assert paths(result) == ["fi:top", "fi:a", "fi:f", "fi:o"]


@pytest.mark.parametrize(
    ("result", "found"),
    [
        (rec("x"), True),  # the result itself
        ([rec("x")], True),  # a list of records
        ([[rec("x")]], True),
        ({"artifacts": [rec("x")]}, True),
        ({"artifacts": {"files": rec("x")}}, True),
        # three levels below the result: too deep
        ([[[rec("x")]]], False),
        ({"artifacts": [[rec("x")]]}, False),
        ({"artifacts": {"files": {"outputs": rec("x")}}}, False),
        ({"artifacts": [{"files": [rec("x")]}]}, False),
    ],
)
def test_records_are_looked_for_two_levels_deep(result: Any, found: bool) -> None:
    """The result, and containers down to two levels below it; deeper records are not
    artifacts the tool reports (they are data it returned)."""
    assert paths(result) == (["fi:x"] if found else [])


def test_missing_fields_take_their_defaults() -> None:
    """A record with only a path: mime application/octet-stream, visible, no sources,
    no kind, no physical path."""
    visible, streamed = digest_of(rec("bare"))
    assert streamed == []
    assert visible == [
        Artifact(
            path="fi:bare",
            mime="application/octet-stream",
            visibility="visible",
            sources_used=[],
            kind="",
            physical_path="",
        )
    ]
    assert visible[0].physical_path == "" and visible[0].kind == ""


def test_every_field_is_read() -> None:
    """All fields of a full record, sources as strings; 'external' makes it streamed."""
    full = {
        "artifact_path": "fi:t1.report.pdf",
        "physical_path": "/out/report.pdf",
        "mime": "application/pdf",
        "visibility": "external",
        "sources_used": ["fi:t1.data.csv", 7],
        "kind": "report",
    }
    visible, streamed = digest_of([full, {**full, "visibility": "internal"}])
    expected = Artifact(
        path="fi:t1.report.pdf",
        mime="application/pdf",
        visibility="external",
        sources_used=["fi:t1.data.csv", "7"],
        kind="report",
        physical_path="/out/report.pdf",
    )
    assert streamed == [expected]
    assert visible == [
        Artifact(
            path="fi:t1.report.pdf",
            mime="application/pdf",
            visibility="internal",
            sources_used=["fi:t1.data.csv", "7"],
            kind="report",
            physical_path="/out/report.pdf",
        )
    ]


def test_sources_that_are_not_a_list_are_dropped() -> None:
    """``sources_used`` other than a list (one string here) gives no sources."""
    visible, _ = digest_of({**rec("s"), "sources_used": "fi:one"})
    assert visible[0].sources_used == []


def test_the_physical_path_stands_in_for_an_empty_logical_one() -> None:
    """An empty ``artifact_path`` falls back to ``physical_path``."""
    visible, _ = digest_of({"artifact_path": "", "physical_path": "/out/a.png"})
    assert [(a.path, a.physical_path) for a in visible] == [("/out/a.png", "/out/a.png")]


def test_records_without_a_usable_path_are_skipped_not_the_rest() -> None:
    """Records whose paths are empty or not strings are skipped; the records after them
    are still read."""
    result = [
        {"artifact_path": "", "physical_path": ""},
        {"physical_path": 5},
        {"artifact_path": None, "physical_path": ["a"]},
        rec("after"),
    ]
    assert paths(result) == ["fi:after"]


def test_a_search_count_field_wins_over_its_hit_list() -> None:
    """A search result with a count field and a (first page of a) hit list reports the
    count: the list may be truncated, the count is the tool's own figure."""
    call = blocks.tool_call("search", {"query": "TODO"})
    out = blocks.tool_result("c", json.dumps({"hits": ["a.py", "b.py"], "total": 57}))
    assert search_record(call, {"query": "TODO"}, [out]).hits == 57
    listed = blocks.tool_result("c", json.dumps({"hits": ["a.py", "b.py"]}))
    assert search_record(call, {"query": "TODO"}, [listed]).hits == 2


def test_a_call_without_a_tool_name_is_classified_other() -> None:
    """As documented: overrides, then the defaults, else "other" (a nameless call too)."""
    assert classify_tool(None) == "other"
    assert classify_tool("", {"": "read"}) == "other"
    assert classify_tool("fetch_page", {"fetch_page": "read"}) == "read"


@pytest.mark.parametrize("key", ["command", "cmd", "script", "code"])
def test_an_exec_command_is_read_under_each_key(key: str) -> None:
    assert command_of({key: "make test", "timeout": 60}) == "make test"
    assert command_of({key: ["pytest", "-q"]}) == "pytest -q"
    assert command_of({"timeout": 60, "cwd": "/"}) == '{"cwd":"/","timeout":60}'


def test_an_attachment_artifact_keeps_the_sources_it_used() -> None:
    tl = Timeline("a")
    tl.begin_turn()
    tl.append(
        blocks.user_attachment(
            name="r.pdf", mime="application/pdf", data=b"%PDF", sources_used=["s1", 2]
        )
    )
    artifacts = build_digest(tl.blocks, None).artifacts
    assert [a.sources_used for a in artifacts] == [["s1", "2"]]


def test_a_tool_nobody_classified_is_other() -> None:
    assert classify_tool("frobnicate") == "other"
    assert classify_tool("frobnicate", {"bash": "shell"}) == "other"


def test_a_memory_hit_without_a_path_records_an_empty_path() -> None:
    """A memory search hit that carries no path reaches the summarizer's digest with an
    empty path (not a made-up one such as "None") and its turn."""
    asked: list[SummaryRequest] = []

    class Capture:
        name = "capture"

        def summarize(self, request: SummaryRequest) -> str:
            asked.append(request)
            return InventorySummarizer().summarize(request)

    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    tl = Timeline("m", policy=policy, token_counter=HeuristicCounter(), summarizer=Capture())
    tl.begin_turn()
    tl.append(blocks.user_prompt("Look up the retry notes."))
    call = tl.append(blocks.tool_call("memory_read", {"query": "retry"}))
    hits = [{"turn_id": "t3"}]
    tl.append(blocks.tool_result(call.call_id or "", "1 hit", tool_id="memory_read", hits=hits))
    for i in range(8):
        coding_turn(tl, i)
    tl.render("sys")
    assert asked
    [hit] = asked[0].digest.memory_reads
    assert (hit.query, hit.paths, hit.turn_ids) == ("retry", [""], ["t3"])
