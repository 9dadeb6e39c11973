"""``TimelineMiddleware.compact_context_tool()``: a LangChain agent compacts its own
thread with a focus, at a moment it chooses; the next request starts with the summary and
is one a provider accepts."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.helpers.langchain import LOREM, check_request, recording, search
from timeline import CompactionPolicy
from timeline.integrations.langchain import TimelineMiddleware


def _script() -> list[AIMessage]:
    steps = [
        AIMessage(
            f"step {i}" + LOREM * 300,
            tool_calls=[{"name": "search", "args": {"i": i}, "id": f"s{i}"}],
        )
        for i in range(6)
    ]
    focus = {"focus": "the search results"}
    steps.append(AIMessage("", tool_calls=[{"name": "compact_context", "args": focus, "id": "k"}]))
    steps.append(AIMessage("go on", tool_calls=[{"name": "search", "args": {"i": 9}, "id": "s9"}]))
    steps.append(AIMessage("done"))
    return steps


def test_the_agent_compacts_its_thread_when_it_asks() -> None:
    """Far under the budget nothing compacts on its own; after the tool call the request
    opens with the summary, holds fewer messages, and every tool message answers a call."""
    mw = TimelineMiddleware("memory://", CompactionPolicy(max_tokens=50_000))
    model = recording(*_script())
    tool = mw.compact_context_tool()
    assert tool.name == "compact_context"
    agent = create_agent(model, [search, tool], middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [HumanMessage("q" + LOREM * 100)]}, config)["messages"]
    before, after = model.seen[6], model.seen[7]
    assert not before[0].additional_kwargs.get("lc_source")
    assert after[0].additional_kwargs == {"lc_source": "summarization"}
    assert len(after) < len(before)
    for request in model.seen:
        check_request(request)
    answer = next(m for m in state if getattr(m, "tool_call_id", None) == "k")
    assert answer.text.startswith("compacted") and "the search results" in answer.text
    summaries = [b for b in mw.timeline("t").blocks if b.type.endswith("summary")]
    assert len(summaries) == 1
    assert state[-1].text == "done"
