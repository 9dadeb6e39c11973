"""Models that reuse tool-call ids (``call_0`` in every turn) never stop an agent in a
framework adapter: LangChain's ``create_agent`` with ``TimelineMiddleware``, pydantic-ai
with ``TimelineHistory.process``, the Agents SDK session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import index_store
from timeline import CompactionPolicy, HeuristicCounter
from timeline._model.call_ids import given_call_id

RESULT = "runbook line. " * 120
"""A tool output large enough that a small budget truncates it in the request."""


def _langchain_model() -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import Field

    class Reusing(BaseChatModel):
        """Calls ``lookup`` with id ``call_0`` once per user message, then answers."""

        seen: list[list[BaseMessage]] = Field(default_factory=list)

        @property
        def _llm_type(self) -> str:
            return "reusing"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Reusing:
            return self

        def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
            self.seen.append(list(messages))
            if isinstance(messages[-1], ToolMessage):
                reply = AIMessage(content=f"done {len(self.seen)}")
            else:
                call = {"name": "lookup", "args": {"topic": "x"}, "id": "call_0"}
                reply = AIMessage(content="", tool_calls=[call])
            return ChatResult(generations=[ChatGeneration(message=reply)])

    return Reusing()


def _langchain_pairs(messages: list[Any]) -> None:
    """Every ToolMessage answers a call of the AI message right before its run."""
    from langchain_core.messages import AIMessage, ToolMessage

    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in open_calls, (m.tool_call_id, open_calls)
            open_calls.discard(m.tool_call_id)
        else:
            assert not open_calls
            if isinstance(m, AIMessage):
                open_calls = {c["id"] for c in m.tool_calls}
    assert not open_calls


@pytest.mark.parametrize("budget", [None, 1_500])
def test_langchain_agent_whose_model_reuses_call_ids(budget: int | None) -> None:
    """create_agent + TimelineMiddleware: three turns whose model calls ``call_0`` each
    time all finish; with a small budget (results truncated and compacted) every
    request still pairs each ToolMessage with its call by the model's own id."""
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from timeline.integrations.langchain import TimelineMiddleware

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return RESULT

    policy = CompactionPolicy(max_tokens=budget, keep_recent_tokens=300) if budget else None
    mw = TimelineMiddleware(index_store.open("memory://"), policy, token_counter=HeuristicCounter())
    model = _langchain_model()
    agent = create_agent(model, [lookup], middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    for i in range(3):
        out = agent.invoke({"messages": [HumanMessage(f"question {i}")]}, config)
        assert out["messages"][-1].text.startswith("done")
    assert len(model.seen) == 6
    for request in model.seen:
        _langchain_pairs(request)
    calls = [b for b in mw.timeline("t").blocks if b.type == "react.tool.call"]
    assert {given_call_id(c) for c in calls} == {"call_0"}


def test_pydantic_ai_history_whose_model_reuses_call_ids() -> None:
    """pydantic-ai with ``ProcessHistory(history.process)``: runs whose model calls
    ``call_0`` every time all finish, each return paired with its call."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from timeline.integrations.pydantic_ai import TimelineHistory

    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            return ModelResponse([TextPart(f"done {len(seen)}")])
        return ModelResponse([ToolCallPart("lookup", {"topic": "x"}, tool_call_id="call_0")])

    history = TimelineHistory(
        "p", "memory://", CompactionPolicy(max_tokens=1_500), token_counter=HeuristicCounter()
    )
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history.process)])

    @agent.tool_plain
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return RESULT

    msgs = None
    for i in range(3):
        result = agent.run_sync(f"question {i}", message_history=msgs)
        assert result.output.startswith("done")
        msgs = result.all_messages()
    for request in seen:
        open_calls: set[str] = set()
        for m in request:
            if isinstance(m, ModelResponse):
                open_calls = {p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)}
            else:
                returns = {p.tool_call_id for p in m.parts if isinstance(p, ToolReturnPart)}
                assert returns == open_calls
                open_calls = set()


def test_agents_session_keeps_reused_call_ids_as_tool_calls() -> None:
    """The Agents SDK session: a reused call id is held as a tool call with its output
    (not an opaque item), and the items come back exactly as added."""
    pytest.importorskip("agents")
    from timeline.integrations.openai_agents import TimelineSession

    session = TimelineSession("s", "memory://", token_counter=HeuristicCounter())
    items: list[Any] = []
    for i in range(2):
        items += [
            {"role": "user", "content": f"question {i}"},
            {
                "type": "function_call",
                "call_id": "call_0",
                "name": "lookup",
                "arguments": '{"topic":"x"}',
            },
            {"type": "function_call_output", "call_id": "call_0", "output": f"value {i}"},
        ]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    tl = session.timeline
    calls = [b for b in tl.blocks if b.type == "react.tool.call"]
    results = [b for b in tl.blocks if b.type == "react.tool.result"]
    assert [r.call_id for r in results] == [c.call_id for c in calls]
    assert [given_call_id(c) for c in calls] == ["call_0", "call_0"]


def _reused_timeline() -> Any:
    from timeline import Timeline, blocks

    tl = Timeline("conv", token_counter=HeuristicCounter())
    for i in range(2):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"question {i}"))
        tl.append(blocks.tool_call("lookup", {"topic": "x"}, call_id="call_0"))
        tl.append(blocks.tool_result("call_0", "value"))
        tl.append(blocks.assistant_completion(f"done {i}"))
    tl.begin_turn()
    tl.append(blocks.user_prompt("and now?"))
    return tl


def test_langchain_converter_gives_the_framework_its_own_call_ids() -> None:
    """``to_langchain`` names a renamed call and its result by the id the framework
    gave them, as the agent state it passes through unchanged does."""
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, ToolMessage

    from timeline.integrations.langchain import to_langchain

    out = to_langchain(_reused_timeline().render("sys"))
    calls = [c["id"] for m in out if isinstance(m, AIMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in out if isinstance(m, ToolMessage)]
    assert calls == results == ["call_0", "call_0"]


def test_pydantic_ai_rendered_messages_use_the_framework_call_ids() -> None:
    """pydantic-ai messages rendered from blocks name a renamed call and its return by
    the id pydantic-ai gave them."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart

    from timeline.integrations.pydantic_ai import to_pydantic_ai

    out = to_pydantic_ai(_reused_timeline().render("sys"))
    parts = [p for m in out for p in m.parts if isinstance(p, ToolCallPart | ToolReturnPart)]
    assert [p.tool_call_id for p in parts] == ["call_0"] * 4


def test_agents_rendered_items_use_the_sdk_call_ids() -> None:
    """A renamed call that the render changes (hidden behind a note) reaches the model
    through the session's input filter under the call id the SDK gave it, which its
    stored output names."""
    pytest.importorskip("agents")
    from agents import Agent
    from agents.run_config import CallModelData, ModelInputData

    from timeline import Timeline
    from timeline.integrations.openai_agents import TimelineSession

    session = TimelineSession("s", "memory://", token_counter=HeuristicCounter())
    items: list[Any] = []
    for i in range(2):
        items += [
            {"role": "user", "content": f"question {i}"},
            {"type": "function_call", "call_id": "call_0", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": f"value {i}"},
        ]
    asyncio.run(session.add_items(items))
    tl: Timeline = session.timeline
    renamed = [b for b in tl.blocks if b.type == "react.tool.call"][-1]
    assert renamed.call_id == "call_0#2"
    tl.hide([renamed.path], "(call hidden)")
    data = CallModelData(ModelInputData(input=items, instructions=None), Agent(name="a"), None)
    sent = asyncio.run(session.input_filter(data)).input
    calls = [i for i in sent if i.get("type") == "function_call"]
    assert calls[-1]["call_id"] == "call_0" and "hidden" in calls[-1]["arguments"]
    outputs = [i for i in sent if i.get("type") == "function_call_output"]
    assert outputs[-1] == items[-1]  # its output, as stored, names the same id
