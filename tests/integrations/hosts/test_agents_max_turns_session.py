"""Ported from the OpenAI Agents SDK's own tests: ``tests/test_max_turns.py``
of openai-agents 0.24.0 (https://github.com/openai/openai-agents-python, MIT licence (LICENSES.md),
Copyright (c) 2025 OpenAI).

Only the construction changed: every ``SQLiteSession(...)`` of the original builds a
``TimelineSession`` on the same database file (``make_session``, in ``agents_port.py``);
the tests and their assertions are the SDK's own. Tests of ``SQLiteSession``'s private
machinery (its connections, its SQL tables) have no counterpart and are not ported:
docs/integrations.md lists them.
"""

import json

import pytest
from agents import Agent, Runner
from agents.testing import ScriptedModel

from tests.integrations.hosts.agents_port import make_session
from tests.integrations.hosts.agents_responses import get_function_tool, get_function_tool_call


async def _run_max_turns_handler_with_session(streamed: bool) -> list[str]:
    """Run one tool turn, trip max turns, and return the session's persisted item types."""
    model = ScriptedModel()
    agent = Agent(
        name="test_1",
        model=model,
        tools=[get_function_tool("some_function", "result")],
    )
    model.extend([[get_function_tool_call("some_function", json.dumps({"a": "b"}))]])
    session = make_session("max-turns-handler", ":memory:")
    try:
        if streamed:
            streamed_result = Runner.run_streamed(
                agent,
                input="user_message",
                max_turns=1,
                session=session,
                error_handlers={"max_turns": lambda data: "fallback answer"},
            )
            async for _ in streamed_result.stream_events():
                pass
            assert streamed_result.final_output == "fallback answer"
        else:
            run_result = await Runner.run(
                agent,
                input="user_message",
                max_turns=1,
                session=session,
                error_handlers={"max_turns": lambda data: "fallback answer"},
            )
            assert run_result.final_output == "fallback answer"

        return [str(item.get("type", item.get("role"))) for item in await session.get_items()]
    finally:
        session.close()


@pytest.mark.asyncio
async def test_non_streamed_max_turns_handler_persists_output_to_session():
    """The synthesized max-turns final output must reach the session.

    It is a brand new item, so the per-turn persisted-item count left over from the previous
    turn must not be applied as an offset into the one-item list handed to the session save.
    """
    item_types = await _run_max_turns_handler_with_session(streamed=False)

    assert item_types == ["user", "function_call", "function_call_output", "message"]


@pytest.mark.asyncio
async def test_streamed_max_turns_handler_persists_output_to_session():
    """The streamed path already persists the synthesized output; keep both paths aligned."""
    item_types = await _run_max_turns_handler_with_session(streamed=True)

    assert item_types == ["user", "function_call", "function_call_output", "message"]
