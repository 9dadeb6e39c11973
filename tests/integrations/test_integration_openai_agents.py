"""TimelineSession with the real OpenAI Agents SDK Runner and a scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse, TResponseInputItem
from agents.memory import Session
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import TypeAdapter

import index_store
from timeline import CompactionPolicy, TiktokenCounter
from timeline.integrations.openai_agents import TimelineSession

BUDGET = 4_000
POLICY = CompactionPolicy(max_tokens=BUDGET, keep_recent_turns=2)
SUMMARY = "[CONVERSATION SUMMARY]"
COUNTER = TiktokenCounter()
ITEM = TypeAdapter(TResponseInputItem)


@function_tool
def lookup(topic: str) -> str:
    """Look a topic up in the runbook."""
    fact = " The deploy key lives in vault zebrafish." if topic == "topic-2" else ""
    return f"Runbook for {topic}:{fact} " + f"step {topic} checks the gateway logs. " * 30


def text_of(item: Any) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content)
    return str(item.get("output", "")) + str(item.get("arguments", "")) + str(item.get("name", ""))


class Scripted(Model):
    """Calls ``lookup`` once per user message, then answers; records what it received."""

    def __init__(self, calls_per_turn: int = 1) -> None:
        self.seen: list[tuple[str | None, list[Any]]] = []
        self.calls_per_turn = calls_per_turn

    async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any) -> Any:
        items = [dict(i) for i in input]
        self.seen.append((system_instructions, items))
        n = len(self.seen)
        since_user = 0
        for item in reversed(items):
            if item.get("role") == "user":
                topic = text_of(item).split()[-1]
                break
            since_user += item.get("type") == "function_call"
        if since_user >= self.calls_per_turn:
            text = ResponseOutputText(type="output_text", text=f"Done {n}.", annotations=[])
            out: Any = ResponseOutputMessage(
                id=f"msg_{n}", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            out = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{n}",
                name="lookup",
                arguments=json.dumps({"topic": topic}),
                id=f"fc_{n}",
            )
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *a: Any, **k: Any) -> Any:
        raise NotImplementedError


def tokens_received(system: str | None, items: list[Any]) -> int:
    return COUNTER.count(system or "") + sum(COUNTER.count(text_of(i)) + 4 for i in items)


def check_pairs(items: list[Any]) -> None:
    """Every function call has its output and no output lacks its call."""
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs)
    for i, item in enumerate(items):
        if item.get("type") == "function_call_output":
            assert any(p.get("call_id") == item["call_id"] for p in items[:i])


async def run_turns(agent: Agent[Any], session: TimelineSession, turns: range) -> None:
    config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)
    for i in turns:
        await Runner.run(agent, f"check topic-{i}", session=session, run_config=config)


@pytest.mark.slow
def test_sixty_tool_turns_stay_within_budget(tmp_path: Path) -> None:
    """66 runs of three tool calls each at a 4,000-token budget: every model call inside
    every run fits (the filter), items valid for the SDK types, pairs intact, one summary
    once needed and never nested, turn 2's fact searchable, a new session on the same
    store and id continues."""
    store = index_store.open(f"sqlite:///{tmp_path / 'oa.db'}")
    model = Scripted(calls_per_turn=3)
    agent = Agent(name="ops", instructions="You run the gateway.", model=model, tools=[lookup])
    session = TimelineSession("s-1", store, POLICY)
    assert isinstance(session, Session)
    asyncio.run(run_turns(agent, session, range(0, 56)))
    items = asyncio.run(session.get_items())
    for item in items:
        ITEM.validate_python(item)
    assert sum(text_of(i).count(SUMMARY) for i in items) == 1

    model2 = Scripted(calls_per_turn=3)
    agent2 = Agent(name="ops", instructions="You run the gateway.", model=model2, tools=[lookup])
    again = TimelineSession("s-1", store, POLICY)
    asyncio.run(run_turns(agent2, again, range(56, 66)))

    requests = model.seen + model2.seen
    assert len(requests) == 4 * 66
    for system, sent in requests:
        assert system == "You run the gateway."
        assert tokens_received(system, sent) <= BUDGET
        check_pairs(sent)
        assert sum(text_of(i).count(SUMMARY) for i in sent) <= 1
    assert all(any(SUMMARY in text_of(i) for i in sent) for _, sent in requests[60:])
    assert any("topic-55" in text_of(i) for i in model2.seen[0][1])
    assert store.search("s-1", "zebrafish")
    assert store.search("s-1", "Done")
    assert again.timeline.version > session.timeline.version


def test_session_protocol_without_the_filter() -> None:
    """Without the filter the session still bounds what each run starts from, and
    pop_item / clear_session work on the live history."""
    model = Scripted()
    agent = Agent(name="ops", model=model, tools=[lookup])
    session = TimelineSession("plain", "memory://", POLICY)

    async def main() -> None:
        for i in range(30):
            await Runner.run(agent, f"check topic-{i}", session=session)
        items = await session.get_items()
        assert any(SUMMARY in text_of(i) for i in items)
        assert len(await session.get_items(limit=3)) <= 3
        last = await session.pop_item()
        assert last is not None and last.get("role") == "assistant"
        assert text_of(last) == "Done 60."
        assert "Done 60." not in [text_of(i) for i in await session.get_items()]
        await session.clear_session()
        assert await session.get_items() == []

    asyncio.run(main())
    first_sent = model.seen[0][1]
    assert [text_of(i) for i in first_sent] == ["check topic-0"]
    assert session.store.search("plain", "topic-29")  # type: ignore[attr-defined]


class Reasoning(Scripted):
    """Thinks (a reasoning item) before each tool call."""

    async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any) -> Any:
        from openai.types.responses import ResponseReasoningItem

        response = await super().get_response(system_instructions, input, *a, **k)
        if response.output[0].type == "function_call":
            n = len(self.seen)
            item = ResponseReasoningItem(id=f"rs_{n}", type="reasoning", summary=[])
            response.output.insert(0, item)
        return response


def test_reasoning_items_go_back_unchanged() -> None:
    """A reasoning item the model produced is in the next request and in get_items,
    right before its call, and valid input for the SDK."""
    model = Reasoning()
    agent = Agent(name="ops", model=model, tools=[lookup])
    session = TimelineSession("think", "memory://", POLICY)
    config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)

    async def main() -> list[Any]:
        await Runner.run(agent, "check topic-1", session=session, run_config=config)
        return await session.get_items()

    items = asyncio.run(main())
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output", "message"]
    assert items[1] == {"id": "rs_1", "type": "reasoning", "summary": []}
    assert dict(model.seen[1][1][1]) == items[1]
    for item in items:
        ITEM.validate_python(item)


def test_mutating_returned_items_leaves_the_next_get_items_intact() -> None:
    """Items from get_items are the caller's own: changing them in place (as an SDK
    might) does not change what the next get_items returns."""
    model = Scripted()
    agent = Agent(name="ops", model=model, tools=[lookup])
    session = TimelineSession("mutate", "memory://", POLICY)

    async def main() -> tuple[list[Any], list[Any]]:
        await Runner.run(agent, "check topic-1", session=session)
        first = await session.get_items()
        expected = json.loads(json.dumps(first))
        for item in first:
            content = item.get("content")
            for part in content if isinstance(content, list) else ():
                part["text"] = "changed"
            for key in list(item):
                item[key] = "changed"
        return expected, await session.get_items()

    expected, again = asyncio.run(main())
    assert again == expected
    assert any(isinstance(i.get("content"), list) for i in expected)


def test_the_filter_counts_the_agents_function_tools() -> None:
    """The input filter counts the agent's function tools against the budget (the
    render records their definitions)."""
    session = TimelineSession("tools", "memory://", POLICY)
    agent = Agent(name="ops", model=Scripted(), tools=[lookup])
    asyncio.run(run_turns(agent, session, range(1)))
    (spec,) = session.timeline.snapshot().state.last_render.tools
    assert (spec.name, spec.description) == ("lookup", "Look a topic up in the runbook.")
