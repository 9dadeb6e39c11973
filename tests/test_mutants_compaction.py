"""Edges of ``timeline.compaction`` (the summarizers' transcript lines, the clearing
tier's placeholders, what the digest remembers of a search), written against mutants of
the sampled mutation campaign (docs/testing.md, "Sampled campaign") that the broader
tests let through; each was checked to fail with its mutant applied."""

from __future__ import annotations

import json

from timeline import blocks
from timeline.compaction.clearing import _signature
from timeline.compaction.digest_records import classify_tool
from timeline.compaction.digest_tools import search_record
from timeline.compaction.summarizers.base import block_line
from timeline.compaction.summarizers.cache_warm import _quote


def test_a_tool_result_line_names_its_tool() -> None:
    """A result reads ``tool -> text`` in a summarizer's transcript ("tool" when the
    result names none), so the summary can tell which tool said what."""
    assert block_line(blocks.tool_result("c1", "ok", tool_id="grep")) == "[Tool]: grep -> ok"
    assert block_line(blocks.tool_result("c1", "ok")) == "[Tool]: tool -> ok"


def test_a_cleared_placeholder_without_tool_or_call_says_tool() -> None:
    assert _signature(None, None) == "tool()"
    assert _signature(None, " read  file ") == "read file()"


def test_a_search_count_field_wins_over_its_hit_list() -> None:
    """A search result with a count field and a (first page of a) hit list reports the
    count: the list may be truncated, the count is the tool's own figure."""
    call = blocks.tool_call("search", {"query": "TODO"})
    out = blocks.tool_result("c", json.dumps({"hits": ["a.py", "b.py"], "total": 57}))
    assert search_record(call, {"query": "TODO"}, [out]).hits == 57
    listed = blocks.tool_result("c", json.dumps({"hits": ["a.py", "b.py"]}))
    assert search_record(call, {"query": "TODO"}, [listed]).hits == 2


def test_the_cache_warm_instruction_names_a_blank_block_by_its_type() -> None:
    """A block with no text to quote is named by its type in the instruction."""
    assert _quote(blocks.user_prompt(" \n ")) == "the user.prompt block"
    assert _quote(blocks.user_prompt("\n fix the build \n")) == (
        'the message that starts "fix the build"'
    )


def test_a_call_without_a_tool_name_is_classified_other() -> None:
    """As documented: overrides, then the defaults, else "other" (a nameless call too)."""
    assert classify_tool(None) == "other"
    assert classify_tool("", {"": "read"}) == "other"
    assert classify_tool("fetch_page", {"fetch_page": "read"}) == "read"
