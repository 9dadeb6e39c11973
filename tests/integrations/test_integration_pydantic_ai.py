"""TimelineHistory in a real pydantic-ai agent loop (ProcessHistory capability)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import index_store
from timeline import CompactionPolicy, TiktokenCounter
from timeline.integrations.pydantic_ai import TimelineHistory

BUDGET = 4_000
POLICY = CompactionPolicy(max_tokens=BUDGET, keep_recent_turns=2)
SUMMARY = "[CONVERSATION SUMMARY]"
COUNTER = TiktokenCounter()


def lookup(topic: str) -> str:
    """Look a topic up in the runbook."""
    fact = " The deploy key lives in vault zebrafish." if topic == "topic-2" else ""
    return f"Runbook for {topic}:{fact} " + f"step {topic} checks the gateway logs. " * 30


class Scripted:
    """Calls ``lookup`` once per user prompt, then answers; records what it received."""

    def __init__(self) -> None:
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse([TextPart(f"Done with {last.tool_call_id}.")])
        assert isinstance(last, UserPromptPart)
        topic = str(last.content).split()[-1]
        return ModelResponse([ToolCallPart("lookup", {"topic": topic})])


def make_agent(model: Scripted, history: TimelineHistory) -> Agent[None, str]:
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history)], system_prompt="ops")
    agent.tool_plain(lookup)
    return agent


def texts(messages: list[ModelMessage]) -> list[str]:
    out = []
    for m in messages:
        for p in m.parts:
            content = getattr(p, "content", None)
            if isinstance(p, ToolCallPart):
                out.append(p.tool_name + p.args_as_json_str())
            elif content is not None:
                out.append(str(content))
    return out


def tokens_received(messages: list[ModelMessage]) -> int:
    return sum(COUNTER.count(t) + 4 for t in texts(messages))


def check_pairs(messages: list[ModelMessage]) -> None:
    """Every tool call is answered by the next request; no orphan returns."""
    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, ModelResponse):
            assert not open_calls
            open_calls = {p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)}
        else:
            returns = {p.tool_call_id for p in m.parts if isinstance(p, ToolReturnPart)}
            assert returns == open_calls, (returns, open_calls)
            open_calls = set()


def run_turns(
    agent: Agent[None, str], turns: range, history: list[ModelMessage] | None, *, aio: bool = False
) -> list[ModelMessage] | None:
    async def arun(msgs: list[ModelMessage] | None) -> list[ModelMessage] | None:
        for i in turns:
            msgs = (await agent.run(f"check topic-{i}", message_history=msgs)).all_messages()
        return msgs

    if aio:
        return asyncio.run(arun(history))
    for i in turns:
        history = agent.run_sync(f"check topic-{i}", message_history=history).all_messages()
    return history


@pytest.mark.slow
def test_sixty_tool_turns_stay_within_budget(tmp_path: Path) -> None:
    """64 tool-using runs (sync then async) at a 4,000-token budget with the processed
    history fed back every run: every request fits, pairs intact, one summary once
    needed and never nested, turn 2's fact searchable, and a new TimelineHistory on the
    same store and id continues the conversation."""
    store = index_store.open(f"sqlite:///{tmp_path / 'pai.db'}")
    model = Scripted()
    history = TimelineHistory("p-1", store, POLICY)
    agent = make_agent(model, history)
    msgs = run_turns(agent, range(0, 40), None)
    msgs = run_turns(agent, range(40, 56), msgs, aio=True)
    assert msgs is not None and sum(t.count(SUMMARY) for t in texts(msgs)) == 1

    model2 = Scripted()
    again = TimelineHistory("p-1", store, POLICY)
    agent2 = make_agent(model2, again)
    run_turns(agent2, range(56, 64), None)
    final = run_turns(agent2, range(64, 66), None, aio=True)
    assert final is not None
    asyncio.run(again.aflush(final))

    requests = model.seen + model2.seen
    assert len(requests) == 2 * 66
    for messages in requests:
        assert isinstance(messages[-1], ModelRequest)
        assert tokens_received(messages) <= BUDGET
        check_pairs(messages)
        assert sum(t.count(SUMMARY) for t in texts(messages)) <= 1
    assert sum(tokens_received(m) for m in model.seen[:2]) < BUDGET  # the start was small
    assert all(any(SUMMARY in t for t in texts(r)) for r in requests[40:])
    assert any("topic-55" in t for t in texts(model2.seen[0]))  # the store's context came back
    assert all(SUMMARY not in b.text for b in store.summaries("p-1"))
    assert store.search("p-1", "zebrafish")
    assert store.search("p-1", "Done with")  # final answers were recorded
    assert again.timeline.version > history.timeline.version


def test_a_timeline_can_start_from_an_existing_summary() -> None:
    """seed_summary: the first request opens with that summary, labelled once."""
    model = Scripted()
    history = TimelineHistory("seeded", "memory://", POLICY)
    history.seed_summary("The user prefers terse answers; project codename heron.")
    make_agent(model, history).run_sync("check topic-1")
    first = texts(model.seen[0])
    assert any(t.startswith(SUMMARY) and "heron" in t for t in first)
    assert sum(t.count(SUMMARY) for t in first) == 1


def test_sync_processor_and_fed_back_output_mirror_once() -> None:
    """The sync processor (history.process) gives the run's messages back as they were
    (no mark, ``run_id`` kept); feeding them back appends nothing twice."""
    history = TimelineHistory("sync", "memory://", POLICY)
    model = Scripted()
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history.process)])
    agent.tool_plain(lookup)
    out = agent.run_sync("check topic-1").all_messages()
    count = len(history.timeline.blocks)
    assert history.mirror(out[:-1]) == 0
    assert history.mirror(out) == 1  # only the final answer is new
    assert len(history.timeline.blocks) == count + 1
    assert out[0].metadata is None
    assert out[0].run_id is not None and {m.run_id for m in out} == {out[0].run_id}


def test_multi_step_tool_run_new_messages_are_whole() -> None:
    """Item 11: a run of five tool steps under the budget: the processor gives the run's
    own messages back (``run_id`` and every field kept), so ``new_messages()`` is the
    whole run (12 messages), equal to a run without the processor."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        steps = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        if steps < 5:
            return ModelResponse([ToolCallPart("lookup", {"topic": f"t{steps}"}, f"c{steps}")])
        return ModelResponse([TextPart("All checked.")])

    def run(capabilities: list[Any]) -> Any:
        agent = Agent(FunctionModel(model), capabilities=capabilities, system_prompt="ops")
        agent.tool_plain(lookup)
        return agent.run_sync("check everything")

    plain = run([])
    history = TimelineHistory("steps", "memory://", CompactionPolicy(max_tokens=100_000))
    result = run([ProcessHistory(history)])
    new = result.new_messages()
    assert len(new) == 12
    assert all(m.run_id == result.run_id for m in new)
    assert texts(new) == texts(plain.new_messages())
    assert all(m.metadata is None for m in new)
    history.flush(new)  # the final answer, which no request of the run saw
    again = TimelineHistory("steps", history.store, CompactionPolicy(max_tokens=100_000))
    follow_up = ModelRequest([UserPromptPart("and now?")])
    assert again.process([follow_up]) == [*new, follow_up]  # as stored, from the store


def test_the_capability_counts_the_agents_tools() -> None:
    """``history.capability()`` counts each request's tool definitions against the
    budget (the render records them); the plain processor sees none."""
    history = TimelineHistory("tools", "memory://", POLICY)
    agent = Agent(FunctionModel(Scripted()), capabilities=[history.capability()])
    agent.tool_plain(lookup)
    agent.run_sync("check topic-1")
    (spec,) = history.timeline.snapshot().state.last_render.tools
    assert (spec.name, spec.description) == ("lookup", "Look a topic up in the runbook.")
    plain = TimelineHistory("plain", "memory://", POLICY)
    make_agent(Scripted(), plain).run_sync("check topic-1")
    assert plain.timeline.snapshot().state.last_render.tools == ()
