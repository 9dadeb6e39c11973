"""Ported from the OpenAI Agents SDK's own tests: ``tests/test_soft_cancel.py``
of openai-agents 0.24.0 (https://github.com/openai/openai-agents-python, MIT licence (LICENSES.md),
Copyright (c) 2025 OpenAI).

Only the construction changed: every ``SQLiteSession(...)`` of the original builds a
``TimelineSession`` on the same database file (``make_session``, in ``agents_port.py``);
the tests and their assertions are the SDK's own. Tests of ``SQLiteSession``'s private
machinery (its connections, its SQL tables) have no counterpart and are not ported:
docs/integrations.md lists them.
"""

import pytest
from agents import Agent, Runner
from agents.testing import ScriptedModel

from tests.integrations.hosts.agents_port import make_session
from tests.integrations.hosts.agents_responses import (
    get_function_tool,
    get_function_tool_call,
    get_text_message,
)


@pytest.mark.asyncio
async def test_soft_cancel_saves_session():
    """Verify session is saved properly with soft cancel."""
    model = ScriptedModel([[], []])
    agent = Agent(name="Assistant", model=model)

    session = make_session("test_soft_cancel_session")
    await session.clear_session()  # Start fresh

    result = Runner.run_streamed(agent, input="Hello", session=session)

    async for event in result.stream_events():
        if event.type == "run_item_stream_event":
            result.cancel(mode="after_turn")

    # Check session has the turn
    items = await session.get_items()
    assert len(items) > 0, "Session should have saved items from completed turn"

    # Verify we can resume
    result2 = await Runner.run(agent, "Continue", session=session)
    assert result2.final_output is not None

    # Cleanup
    await session.clear_session()


@pytest.mark.asyncio
async def test_soft_cancel_with_handoff():
    """Verify soft cancel after handoff saves the handoff turn."""
    from agents import Handoff

    model = ScriptedModel()

    # Create two agents with handoff
    agent2 = Agent(name="Agent2", model=model)

    async def on_invoke_handoff(context, data):
        return agent2

    agent1 = Agent(
        name="Agent1",
        model=model,
        handoffs=[
            Handoff(
                tool_name=Handoff.default_tool_name(agent2),
                tool_description=Handoff.default_tool_description(agent2),
                input_json_schema={},
                on_invoke_handoff=on_invoke_handoff,
                agent_name=agent2.name,
            )
        ],
    )

    # Setup: Agent1 does handoff, Agent2 responds
    model.extend(
        [
            # Agent1's turn - triggers handoff
            [get_function_tool_call(Handoff.default_tool_name(agent2), "{}")],
            # Agent2's turn after handoff
            [get_text_message("Agent2 response")],
        ]
    )

    session = make_session("test_soft_cancel_handoff")
    await session.clear_session()

    result = Runner.run_streamed(agent1, input="Hello", session=session)

    handoff_seen = False
    async for event in result.stream_events():
        if event.type == "run_item_stream_event" and event.name == "handoff_requested":
            handoff_seen = True
            # Cancel right after handoff
            result.cancel(mode="after_turn")

    assert handoff_seen, "Handoff should have occurred"

    # Verify session has items from the handoff turn
    items = await session.get_items()
    assert len(items) > 0, "Session should have saved the handoff turn"

    # Cleanup
    await session.clear_session()


@pytest.mark.asyncio
async def test_soft_cancel_with_session_and_multiple_turns():
    """Verify soft cancel with session across multiple turns."""
    model = ScriptedModel()
    agent = Agent(
        name="Assistant",
        model=model,
        tools=[get_function_tool("tool1", "result1")],
    )

    session = make_session("test_soft_cancel_multi")
    await session.clear_session()

    # Setup 3 turns
    model.extend(
        [
            [get_function_tool_call("tool1", "{}", call_id="tool_1")],
            [get_function_tool_call("tool1", "{}", call_id="tool_2")],
            [get_text_message("Final")],
        ]
    )

    result = Runner.run_streamed(agent, input="Hello", session=session)

    turns_seen = 0
    async for event in result.stream_events():
        if event.type == "run_item_stream_event" and event.name == "tool_output":
            turns_seen += 1
            if turns_seen == 2:
                result.cancel(mode="after_turn")

    # Should have completed 2 turns
    assert turns_seen == 2

    # Check session has both turns
    items = await session.get_items()
    assert len(items) > 0

    # Cleanup
    await session.clear_session()
