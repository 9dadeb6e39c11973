"""A LangChain v1 agent whose every model call gets a bounded, compacted context.

Runs offline: a scripted chat model stands in for a real one (swap in
``ChatAnthropic(model=...)`` and the cache checkpoints travel as ``cache_control``).

    pip install -e '.[langchain]'   # in a checkout of block-timeline
    python examples/langchain_agent.py
"""

from __future__ import annotations

# the adapter first: without the extra it says what to install (MissingExtraError)
from timeline.integrations.langchain import TimelineMiddleware

# isort: split
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from timeline import CompactionPolicy


@tool
def read_log(service: str) -> str:
    """Read a service's recent log lines."""
    return f"{service}: " + "GET /health 200 12ms; " * 60


class ScriptedModel(BaseChatModel):
    """Reads one log per user message, then answers; prints what it was sent."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content="The service looks healthy.")
        else:
            print(f"model sees {len(messages):3d} messages")
            service = last.text.split()[-1]
            call = {"name": "read_log", "args": {"service": service}, "id": f"call-{service}"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def main() -> None:
    middleware = TimelineMiddleware(
        "sqlite:///langchain_example.db", CompactionPolicy(max_tokens=3000)
    )
    agent = create_agent(
        ScriptedModel(),
        [read_log],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
        system_prompt="You are an SRE assistant.",
    )
    config = {"configurable": {"thread_id": "incident-7"}}
    for i in range(12):
        agent.invoke({"messages": [("user", f"check service-{i}")]}, config)
    hits = middleware.store.search("incident-7", "service-1")
    print(f"{len(hits)} hits for service-1; version {middleware.timeline('incident-7').version}")


if __name__ == "__main__":
    main()
