"""The ``compact_context`` tool: the agent compacts its own context, with a focus, at a
moment it chooses; offered with the other context tools by ``memory_tools``."""

from __future__ import annotations

from typing import Any

import pytest

import index_store
from tests.helpers.payload_checks import check_anthropic
from timeline import ClearingPolicy, CompactionPolicy, SummaryRequest, Timeline, blocks
from timeline._driver import ModelReply, ReactDriver, ToolCallRequest
from timeline._driver.memory_tools import TOOL_SPECS, compact_context_tool, memory_tools
from timeline._driver.scripted import ScriptedModel
from timeline._render.context import RenderedContext

SYSTEM = "You are a coding agent."


class Recording:
    """A summarizer that records its requests."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return f"Summary of {len(request.blocks)} blocks."


def history(tl: Timeline, turns: int) -> None:
    for i in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Task {i}: " + "look at the parser module. " * 8))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{i}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "def f():\n    pass\n" * 40))
        tl.append(blocks.assistant_completion(f"Done with task {i}: " + "it works. " * 10))


def test_the_agent_compacts_between_tasks_with_a_focus() -> None:
    """The model calls compact_context with a focus: the timeline compacts there, the
    summarizer gets the focus, the tool says what it did, and the model's next request
    (a valid payload) starts from the summary."""
    summarizer = Recording()
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=50_000), summarizer=summarizer)
    history(tl, 10)
    focus = "the parser's open bug in src/m3.py"

    def script(view: RenderedContext, index: int) -> ModelReply:
        if index == 0:
            call = ToolCallRequest("compact_context", {"focus": focus}, "call_compact")
            return ModelReply(tool_calls=(call,))
        return ModelReply(text="Starting the next task.")

    model = ScriptedModel(script)
    driver = ReactDriver(tl, model, memory_tools(tl, system=SYSTEM), system=SYSTEM)
    driver.run_turn("Task 10 is unrelated: compact first, then start it.")
    (request,) = summarizer.requests
    assert request.focus is not None and request.focus.endswith(focus)
    (result,) = [b for b in tl.blocks if b.type == "react.tool.result"][-1:]
    assert result.text.startswith("compacted ") and focus in result.text
    before, after = model.sent_tokens
    assert after < 0.6 * before  # the tool definitions are sent with both
    check_anthropic(model.received[1], 0)
    assert model.received[1]["messages"][0]["content"][0]["text"].count("Summary of") == 1


def test_nothing_to_compact_is_said_not_failed() -> None:
    """Called on a short conversation, the tool says nothing was compacted and why,
    without an error."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=50_000), summarizer=Recording())
    tl.begin_turn()
    tl.append(blocks.user_prompt("Hello."))
    out = compact_context_tool(tl, SYSTEM)({"focus": "anything"})
    assert out.text.startswith("nothing compacted") and not out.is_error


@pytest.mark.parametrize("with_store", [False, True])
def test_memory_tools_are_the_tools_the_specs_describe(with_store: bool) -> None:
    """memory_tools offers compact_context and read_path always, memory_read with a
    store, each described by TOOL_SPECS under its own name."""
    tl = Timeline("c")
    store: Any = index_store.open("memory://") if with_store else None
    tools = memory_tools(tl, store, system=SYSTEM)
    expected = ["read_path", "compact_context"]
    assert sorted(tools) == sorted(["memory_read", *expected] if with_store else expected)
    assert all(TOOL_SPECS[name]["name"] == name for name in tools)


def test_a_compaction_the_clear_tier_was_enough_for_says_so() -> None:
    """When clearing old tool output frees enough (no summary made), the tool says what
    was cleared and how to read it back, and that the focus went unused."""
    policy = CompactionPolicy(
        max_tokens=8_000, clearing=ClearingPolicy(keep_tool_results=1, clear_at_least_tokens=0)
    )
    summarizer = Recording()
    tl = Timeline("c", policy=policy, summarizer=summarizer)
    history(tl, 8)
    out = compact_context_tool(tl, SYSTEM)({"focus": "the parser"}).text
    assert summarizer.requests == []
    assert out.startswith("cleared 7 old blocks") and "read_path" in out
    assert "no summary was needed" in out and "summary (focus" not in out


def test_the_tools_the_requests_carry_count_against_the_budget() -> None:
    """compact_context given the agent's tools compacts against what the requests really
    hold: the tokens it reports before compacting are the render's with those tools, more
    than without them."""
    tools = [
        {
            "name": f"tool_{i}",
            "description": "Reads one file of the repository and returns it. " * 6,
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
        for i in range(12)
    ]
    told = []
    for given in ((), tools):
        tl = Timeline("c", policy=CompactionPolicy(max_tokens=50_000))
        history(tl, 10)
        expected = tl.render(SYSTEM, tools=given).tokens
        stats = tl.compact(SYSTEM, tools=given, dry_run=True)
        assert stats.tokens_before == expected
        out = compact_context_tool(tl, SYSTEM, given)({"focus": ""})
        told.append(out.text)
    assert f"{expected:,}" in told[1]
    assert told[0] != told[1]
