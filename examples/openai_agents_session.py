"""An OpenAI Agents SDK agent on a TimelineSession, bounded inside each run too.

Runs offline: a scripted ``Model`` stands in for the OpenAI API.

    pip install -e '.[openai-agents]'   # in a checkout of block-timeline
    python examples/openai_agents_session.py
"""

from __future__ import annotations

# the adapter first: without the extra it says what to install (MissingExtraError)
from timeline.integrations.openai_agents import TimelineSession

# isort: split
import asyncio
import json
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from timeline import CompactionPolicy


@function_tool
def read_log(service: str) -> str:
    """Read a service's recent log lines."""
    return f"{service}: " + "GET /health 200 12ms; " * 60


class ScriptedModel(Model):
    """Reads one log per user message, then answers; prints what it was sent."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = [dict(i) for i in input]
        last = items[-1]
        if last.get("type") == "function_call_output":
            text = ResponseOutputText(
                type="output_text", text="The service looks healthy.", annotations=[]
            )
            out: Any = ResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            print(f"model sees {len(items):3d} items")
            content = last["content"]
            service = (content if isinstance(content, str) else content[-1]["text"]).split()[-1]
            out = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call-{service}",
                name="read_log",
                arguments=json.dumps({"service": service}),
            )
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main() -> None:
    session = TimelineSession(
        "incident-7", "sqlite:///openai_agents_example.db", CompactionPolicy(max_tokens=3000)
    )
    agent = Agent(
        name="sre",
        instructions="You are an SRE assistant.",
        model=ScriptedModel(),
        tools=[read_log],
    )
    config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)
    for i in range(12):
        await Runner.run(agent, f"check service-{i}", session=session, run_config=config)
    print(f"{len(session.store.search('incident-7', 'service-1'))} hits for service-1")


if __name__ == "__main__":
    asyncio.run(main())
