"""A pydantic-ai agent whose history is a persisted, compacted timeline.

Runs offline: ``FunctionModel`` stands in for a real model.

    pip install -e '.[pydantic-ai]'   # in a checkout of block-timeline
    python examples/pydantic_ai_agent.py
"""

from __future__ import annotations

# the adapter first: without the extra it says what to install (MissingExtraError)
from timeline.integrations.pydantic_ai import TimelineHistory

# isort: split
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from timeline import CompactionPolicy


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Reads one log per user prompt, then answers; prints what it was sent."""
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse([TextPart("The service looks healthy.")])
    print(f"model sees {len(messages):3d} messages")
    service = str(getattr(last, "content", "")).split()[-1]
    return ModelResponse([ToolCallPart("read_log", {"service": service})])


def read_log(service: str) -> str:
    """Read a service's recent log lines."""
    return f"{service}: " + "GET /health 200 12ms; " * 60


def main() -> None:
    history = TimelineHistory(
        "incident-7", "sqlite:///pydantic_ai_example.db", CompactionPolicy(max_tokens=3000)
    )
    agent = Agent(
        FunctionModel(scripted),
        capabilities=[ProcessHistory(history)],
        system_prompt="You are an SRE assistant.",
    )
    agent.tool_plain(read_log)
    messages: list[ModelMessage] | None = None
    for i in range(12):
        messages = agent.run_sync(f"check service-{i}", message_history=messages).all_messages()
    history.flush(messages or [])  # the last answer, which no later request saw
    print(f"{len(history.store.search('incident-7', 'service-1'))} hits for service-1")


if __name__ == "__main__":
    main()
