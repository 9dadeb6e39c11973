"""Tool definitions inside the budget (``timeline._model.tools``): ``render(tools=...)``
counts them, every payload method sends them in the provider's own form, and a bad
definition is refused at the call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import (
    BudgetError,
    CompactionPolicy,
    HeuristicCounter,
    InvalidBlockError,
    Timeline,
    ToolSpec,
    blocks,
    tool_specs,
)
from timeline._tokens.payload import payload_tokens

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "the file's path"}},
    "required": ["path"],
}
READ = {
    "name": "read_file",
    "description": "Read a file of the repository.",
    "input_schema": SCHEMA,
}
MANY = [
    {"name": f"tool_{i}", "description": f"Tool number {i}. " + "It does things. " * 80,
     "input_schema": SCHEMA}
    for i in range(12)
]  # fmt: skip


def session(budget: int | None = 6_000, turns: int = 3) -> Timeline:
    tl = Timeline("t", policy=CompactionPolicy(max_tokens=budget), token_counter=HeuristicCounter())
    for i in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Task {i}: look at a{i}.py"))
        call = tl.append(blocks.tool_call("read_file", {"path": f"a{i}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "x = 1\n" * 80, tool_id="read_file"))
        tl.append(blocks.assistant_completion(f"Done with a{i}.py."))
    return tl


def test_the_tools_are_part_of_the_prompts_tokens() -> None:
    """``view.tokens`` is the system prompt, the tools and the messages: the tools' tokens
    (their definitions and the provider's tool-use instructions) add to the same render."""
    tl = session(budget=None)
    bare = tl.render("sys")
    view = tl.render("sys", tools=[READ])
    assert view.tools_tokens > 346
    assert view.tokens == bare.tokens + view.tools_tokens
    assert view.tokens == view.system_tokens + view.framing_tokens + view.tools_tokens + sum(
        view.block_tokens
    )


def test_tools_count_against_the_budget() -> None:
    """A conversation that fits without tools compacts when its tools would push it over
    the trigger, and the prompt with its tools stays within the budget."""
    tl = session(budget=9_000, turns=24)
    bare = tl.render("sys")
    assert bare.compaction is None and bare.tokens < 8_100  # under the trigger
    view = tl.render("sys", tools=MANY)
    assert view.compaction is not None
    assert view.tokens <= 9_000
    for payload in (view.to_anthropic(), view.to_openai(), view.to_openai_responses()):
        assert payload_tokens(payload, HeuristicCounter()) <= view.tokens


def test_each_payload_sends_the_tools_in_its_providers_form() -> None:
    """Anthropic gets ``tools`` with a cache checkpoint on the last one; Chat Completions
    and Responses get the request's keyword arguments with their function tools; each
    passes the SDK types and the provider rules."""
    view = session().render("sys", tools=[READ, {"name": "list_files"}])
    anthropic = view.to_anthropic()
    assert [t["name"] for t in anthropic["tools"]] == ["read_file", "list_files"]
    assert anthropic["tools"][0]["input_schema"] == SCHEMA
    assert "cache_control" not in anthropic["tools"][0]
    assert anthropic["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    chat = view.to_openai()
    assert isinstance(chat, dict) and set(chat) == {"messages", "tools"}
    assert chat["tools"][0] == {
        "type": "function",
        "function": {"name": "read_file", "description": READ["description"], "parameters": SCHEMA},
    }
    responses = view.to_openai_responses()
    assert isinstance(responses, dict) and set(responses) == {"input", "tools"}
    assert responses["tools"][1] == {
        "type": "function",
        "name": "list_files",
        "parameters": {"type": "object"},
        "strict": False,
    }
    assert anthropic_errors(anthropic) == []
    assert anthropic_errors(view.to_document()) == []
    assert chat_errors(chat) == []
    assert responses_errors(responses) == []


def test_without_tools_the_payloads_are_as_before() -> None:
    """No tools: Chat and Responses payloads stay lists, Anthropic's has no ``tools``."""
    view = session().render("sys")
    assert "tools" not in view.to_anthropic()
    assert isinstance(view.to_openai(), list)
    assert isinstance(view.to_openai_responses(), list)


def test_the_tools_checkpoint_leaves_the_limit_of_four() -> None:
    """With the system prompt's and the last tool's checkpoints, the conversation gets at
    most two, and the tools' TTL is never shorter than a later one."""
    tl = session(budget=None, turns=30)
    views = [tl.render("sys", tools=[READ])]
    for i in range(3):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"more {i} " * 200))
        views.append(tl.render("sys", tools=[READ]))
    for view in views:
        payload = view.to_anthropic(cache_ttl={"tools": "5m", "system": "1h"})
        assert anthropic_errors(payload) == []
        assert payload["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
        assert len(view.cache_points) <= 2


@pytest.mark.parametrize(
    ("tools", "where"),
    [
        ([{"name": "read file"}], r"tools\[0\]\.name"),
        ([READ, {"name": "read_file"}], r"tools\[1\]\.name: 'read_file' is defined twice"),
        ([{"name": "x", "input_schema": {"type": "array"}}], r"tools\[0\]\.input_schema"),
        ([{"name": "x", "parametres": {}}], r"tools\[0\]\.parametres: unknown key"),
        ([{"type": "web_search_20250305", "name": "web_search"}], r"tools\[0\]\.type"),
        ([{"name": "x", "input_schema": {"type": "object", "default": float("nan")}}], "NaN"),
        ({"name": "x"}, "a list of tool definitions"),
        (["read_file"], r"tools\[0\]: expected a tool definition"),
    ],
)
def test_a_bad_definition_is_refused_at_the_render(tools: Any, where: str) -> None:
    """A bad definition is an InvalidBlockError naming it; the timeline is unchanged."""
    tl = session()
    before = tl.snapshot()
    with pytest.raises(InvalidBlockError, match=where):
        tl.render("sys", tools=tools)
    assert tl.snapshot() == before


def test_definitions_are_counted_once() -> None:
    """The same tools at every render are tokenized once: a render with them again (the
    same checked specs, or an equal list) asks the counter nothing more."""
    tl = session(budget=None)
    specs = tool_specs(MANY)
    tl.render("sys", tools=specs)
    calls = tl.token_memo.calls
    tl.render("sys", tools=specs)
    tl.render("sys", tools=[dict(t) for t in MANY])
    assert tl.token_memo.calls == calls


def test_a_spec_keeps_the_schema_as_given() -> None:
    """A checked spec holds the schema in the caller's key order, and hands out new
    dicts: changing one changes neither the spec nor a payload."""
    (spec,) = tool_specs([{**READ, "input_schema": {"required": ["path"], **SCHEMA}}])
    assert isinstance(spec, ToolSpec)
    assert list(json.loads(spec.schema_json)) == ["required", "type", "properties"]
    spec.input_schema["type"] = "array"
    assert spec.input_schema["type"] == "object"


def test_the_system_prompt_figure_is_the_system_prompt_alone() -> None:
    """An empty system prompt costs 0 tokens; the prompt's framing is its own figure,
    the same with or without a system prompt, and a budget error names each."""
    tl = session(budget=None)
    empty = tl.render("")
    prompted = tl.render("You are a careful coding agent.")
    assert empty.system_tokens == 0 and empty.framing_tokens > 0
    assert prompted.framing_tokens == empty.framing_tokens
    assert prompted.system_tokens > 0
    assert prompted.tokens - empty.tokens == prompted.system_tokens
    long = "You are a careful coding agent. " * 40
    alone = session(budget=None, turns=1).render(long).system_tokens
    with pytest.raises(BudgetError) as err:
        session(budget=100, turns=1).render(long)
    assert err.value.required == alone + empty.framing_tokens
    assert f"system prompt ({alone}) and the prompt's framing ({empty.framing_tokens})" in str(
        err.value
    )
