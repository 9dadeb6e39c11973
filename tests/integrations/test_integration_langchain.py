"""TimelineMiddleware in a real LangChain v1 agent loop, and the message converters."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

import index_store
from tests.helpers.samples import PNG_1x1
from timeline import CompactionPolicy, TiktokenCounter, Timeline, blocks
from timeline.integrations import IntegrationError
from timeline.integrations.langchain import TimelineMiddleware, from_langchain, to_langchain

BUDGET = 4_000
POLICY = CompactionPolicy(max_tokens=BUDGET, keep_recent_turns=2)
SUMMARY = "Here is a summary of the conversation to date:"
"""How the summary message opens (SummarizationMiddleware's shape, #25 item 8)."""
COUNTER = TiktokenCounter()


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the runbook."""
    fact = " The deploy key lives in vault zebrafish." if topic == "topic-2" else ""
    return f"Runbook for {topic}:{fact} " + f"step {topic} checks the gateway logs. " * 30


class ScriptedChat(BaseChatModel):
    """Calls ``lookup`` once per user message, then answers; records what it received."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"Done with {last.tool_call_id}.")
        else:
            topic = str(last.content if isinstance(last.content, str) else last.text).split()[-1]
            n = len(self.seen)
            reply = AIMessage(
                content="",
                tool_calls=[{"name": "lookup", "args": {"topic": topic}, "id": f"call_{n}"}],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


def tokens_received(messages: list[BaseMessage]) -> int:
    """Tokens of everything the model was sent: text, tool calls, tool results."""
    total = 0
    for m in messages:
        total += COUNTER.count(m.text) + 4
        for call in getattr(m, "tool_calls", []) or []:
            total += COUNTER.count(call["name"] + json.dumps(call["args"]))
    return total


def is_summary(message: BaseMessage) -> bool:
    """A summary message as SummarizationMiddleware marks it."""
    return isinstance(message, HumanMessage) and (
        message.additional_kwargs.get("lc_source") == "summarization"
    )


def check_pairs(messages: list[BaseMessage]) -> None:
    """Every tool call is answered right after its AI message; no orphan results."""
    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in open_calls, m.tool_call_id
            open_calls.discard(m.tool_call_id)
        else:
            assert not open_calls, f"calls {open_calls} unanswered before {m.type}"
            if isinstance(m, AIMessage):
                open_calls = {c["id"] for c in m.tool_calls if c["id"]}
    assert not open_calls


def run_turns(agent: Any, thread: str, turns: range, *, asynchronous: bool = False) -> None:
    config = {"configurable": {"thread_id": thread}}

    async def arun() -> None:
        for i in turns:
            await agent.ainvoke({"messages": [HumanMessage(f"check topic-{i}")]}, config)

    if asynchronous:
        asyncio.run(arun())
        return
    for i in turns:
        agent.invoke({"messages": [HumanMessage(f"check topic-{i}")]}, config)


@pytest.mark.slow
def test_sixty_tool_turns_stay_within_budget(tmp_path: Path) -> None:
    """64 tool-using turns (sync then async) at a 4,000-token budget: every request fits,
    pairs intact, one summary once needed, turn 2's fact searchable, and a new
    middleware on the same store and thread continues the conversation."""
    store = index_store.open(f"sqlite:///{tmp_path / 'lc.db'}")
    model = ScriptedChat()
    saver = InMemorySaver()
    mw = TimelineMiddleware(store, POLICY)
    agent = create_agent(model, [lookup], middleware=[mw], checkpointer=saver, system_prompt="ops")
    run_turns(agent, "t-1", range(0, 40))
    run_turns(agent, "t-1", range(40, 56), asynchronous=True)
    state = agent.get_state({"configurable": {"thread_id": "t-1"}}).values["messages"]
    # the state is compacted as SummarizationMiddleware compacts it: the summary first
    assert state[0].additional_kwargs.get("lc_source") == "summarization"
    assert tokens_received(state) <= BUDGET
    held = store.turn_log("t-1")  # every message stays in the store
    assert sum(COUNTER.count(b.text) for b in held) > 4 * BUDGET  # it could never fit

    again = TimelineMiddleware(store, POLICY)
    model2 = ScriptedChat()
    agent2 = create_agent(model2, [lookup], middleware=[again], checkpointer=saver)
    run_turns(agent2, "t-1", range(56, 64))
    run_turns(agent2, "t-1", range(64, 66), asynchronous=True)

    requests = model.seen + model2.seen
    assert len(requests) == 2 * 66
    for messages in requests:
        assert tokens_received(messages) <= BUDGET
        check_pairs(messages)
        summaries = [m for m in messages if SUMMARY in m.text]
        assert len(summaries) <= 1
        assert all(m.text.count(SUMMARY) == 1 for m in summaries)
        assert all(is_summary(m) == (m in summaries) for m in messages)
    assert not any(SUMMARY in m.text for m in model.seen[0])
    assert all(any(SUMMARY in m.text for m in r) for r in requests[40:])
    assert "check topic-56" in model2.seen[0][-1].text
    assert any(SUMMARY in m.text for m in model2.seen[0])
    tl = again.timeline("t-1")
    assert tl.version == 2 * 66
    hits = store.search("t-1", "zebrafish")
    assert hits and "topic-2" in hits[0].block.text
    assert store.search("t-1", "topic-65")


def test_tool_messages_and_ids_mirror_idempotently() -> None:
    """The same state mirrored twice appends nothing the second time."""
    from timeline.integrations.langchain import mirror

    tl = Timeline("m", policy=POLICY)
    state = [
        HumanMessage("hi", id="h1"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}], id="a1"),
        ToolMessage("out", tool_call_id="c1", name="f", id="t1"),
    ]
    assert mirror(tl, state) == 3
    before = len(tl.blocks)
    assert mirror(tl, state) == 0
    assert len(tl.blocks) == before


def test_converters_round_trip_calls_results_images_and_thinking() -> None:
    """from_langchain then to_langchain keeps text, tool calls with args, tool results
    (errors too), images and thinking blocks."""
    png = base64.b64encode(PNG_1x1).decode()
    messages: list[BaseMessage] = [
        HumanMessage(
            [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
            ],
            id="h1",
        ),
        AIMessage(
            [
                {"type": "thinking", "thinking": "look closer", "signature": "sig"},
                {"type": "text", "text": "Let me zoom."},
            ],
            tool_calls=[{"name": "zoom", "args": {"x": 2}, "id": "c1"}],
            id="a1",
        ),
        ToolMessage("failed", tool_call_id="c1", name="zoom", status="error", id="t1"),
        AIMessage("A cat.", id="a2"),
    ]
    tl = Timeline("conv", policy=POLICY)
    tl.begin_turn()
    tl.extend(from_langchain(messages))
    out = to_langchain(tl.render("sys"), provider="anthropic")
    assert isinstance(out[0], SystemMessage)
    human, ai, result, answer = out[1:]
    assert isinstance(human, HumanMessage)
    assert human.content[0] == {"type": "text", "text": "what is this?"}
    assert human.content[1]["base64"] == png and human.content[1]["mime_type"] == "image/png"
    assert isinstance(ai, AIMessage) and ai.id == "a1"
    assert ai.content[0] == {"type": "thinking", "thinking": "look closer", "signature": "sig"}
    assert ai.tool_calls[0]["args"] == {"x": 2} and ai.tool_calls[0]["id"] == "c1"
    assert isinstance(result, ToolMessage) and result.status == "error"
    assert result.tool_call_id == "c1" and result.text == "failed"
    assert isinstance(answer, AIMessage) and answer.text == "A cat."
    assert [b.id for b in from_langchain(messages)] == [b.id for b in tl.blocks[1:]]
    assert tl.blocks[3].type == "assistant.thinking"  # counted in the budget, sent unchanged
    plain = to_langchain(tl.render("sys"))  # other providers never get Anthropic thinking
    assert all(part.get("type") != "thinking" for part in plain[2].content)


def test_chat_anthropic_sends_the_cache_checkpoints() -> None:
    """The real ChatAnthropic request payload carries cache_control on the same messages
    as the view's own Anthropic payload (no network: the payload is built, not sent)."""
    anthropic = pytest.importorskip("langchain_anthropic")
    tl = Timeline("cache", policy=POLICY)
    for i in range(12):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"check topic-{i}"))
        call = tl.append(blocks.tool_call("lookup", {"topic": f"topic-{i}"}))
        tl.append(blocks.tool_result(call.call_id or "", lookup.invoke(f"topic-{i}")))
        tl.append(blocks.assistant_completion(f"Done {i}."))
    view = tl.render("ops")
    assert view.cache_points
    model = anthropic.ChatAnthropic(model="claude-sonnet-4-5", api_key="test-key")
    payload = model._get_request_payload(to_langchain(view, cache_control=True))
    expected = view.to_anthropic()

    def marks(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
        return [
            (i, part["type"])
            for i, m in enumerate(messages)
            for part in (m["content"] if isinstance(m["content"], list) else [])
            if "cache_control" in part
        ]

    assert marks(payload["messages"]) == marks(expected["messages"])
    assert len(payload["messages"]) == len(expected["messages"])


def test_no_thread_id_is_a_clear_error() -> None:
    """An agent run without a thread id and no default fails with IntegrationError."""
    agent = create_agent(
        ScriptedChat(), [lookup], middleware=[TimelineMiddleware("memory://", POLICY)]
    )
    with pytest.raises(IntegrationError, match="thread_id"):
        agent.invoke({"messages": [HumanMessage("check topic-1")]})


def test_a_checkpoint_on_a_tool_call_moves_to_its_result() -> None:
    """ChatAnthropic drops cache_control on tool_use, so a checkpoint on a call is sent on
    the result right after it (the prefix still ends inside the same exchange)."""
    anthropic = pytest.importorskip("langchain_anthropic")
    from timeline import RenderedContext

    tl = Timeline("cc", policy=POLICY)
    tl.begin_turn()
    tl.append(blocks.user_prompt("check topic-1"))
    call = tl.append(blocks.tool_call("lookup", {"topic": "topic-1"}))
    tl.append(blocks.tool_result(call.call_id or "", "fine"))
    shown = tuple(tl.blocks)
    view = RenderedContext("ops", shown, (2,), lambda: 0, None, len(shown))
    model = anthropic.ChatAnthropic(model="claude-sonnet-4-5", api_key="test-key")
    payload = model._get_request_payload(to_langchain(view, cache_control=True))
    marked = [
        (m["role"], part["type"])
        for m in payload["messages"]
        for part in m["content"]
        if isinstance(part, dict) and "cache_control" in part
    ]
    assert marked == [("user", "tool_result")]
    assert to_langchain(view)[-1].content[0] == {"type": "text", "text": "fine"}


def test_core_never_imports_a_framework() -> None:
    """Importing timeline and index_store loads no framework module."""
    import subprocess
    import sys

    code = (
        "import sys, timeline, index_store, timeline.integrations\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph', 'pydantic_ai', 'agents')]\n"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the framework the adapter's import fails with the pip install line."""
    import importlib
    import sys

    from timeline.integrations import MissingExtraError

    for name, module, extra in (
        ("timeline.integrations.langchain", "langchain.agents.middleware", "langchain"),
        ("timeline.integrations.pydantic_ai", "pydantic_ai.messages", "pydantic-ai"),
        ("timeline.integrations.openai_agents", "agents.run_config", "openai-agents"),
    ):
        monkeypatch.setitem(sys.modules, module, None)
        monkeypatch.delitem(sys.modules, name, raising=False)
        with pytest.raises(MissingExtraError, match=rf"pip install -e .*\[{extra}\]'"):
            importlib.import_module(name)


def test_the_tools_bound_to_the_model_are_counted() -> None:
    """The tools the agent binds to each model call count against the budget: the
    render records their definitions."""
    mw = TimelineMiddleware("memory://", POLICY)
    agent = create_agent(ScriptedChat(), [lookup], middleware=[mw], system_prompt="ops")
    run_turns(agent, "t-tools", range(1))
    (spec,) = mw.timeline("t-tools").snapshot().state.last_render.tools
    assert (spec.name, spec.description) == ("lookup", "Look a topic up in the runbook.")
    assert spec.input_schema["properties"] == {"topic": {"type": "string"}}
