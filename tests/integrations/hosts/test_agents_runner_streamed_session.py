"""Ported from the OpenAI Agents SDK's own tests: ``tests/test_agent_runner_streamed.py``
of openai-agents 0.24.0 (https://github.com/openai/openai-agents-python, MIT licence (LICENSES.md),
Copyright (c) 2025 OpenAI).

Only the construction changed: every ``SQLiteSession(...)`` of the original builds a
``TimelineSession`` on the same database file (``make_session``, in ``agents_port.py``);
the tests and their assertions are the SDK's own. Tests of ``SQLiteSession``'s private
machinery (its connections, its SQL tables) have no counterpart and are not ported:
docs/integrations.md lists them.
"""

from collections.abc import AsyncIterator
from typing import Any, cast

import httpx
import pytest
from agents import Agent, RunConfig, Runner, TResponseInputItem
from agents.items import TResponseStreamEvent
from agents.testing import ScriptedModel
from openai import NotFoundError
from openai.types.responses import ResponseReasoningItem

from tests.integrations.hosts.agents_port import make_session
from tests.integrations.hosts.agents_responses import get_handoff_tool_call, get_text_message


def _find_reasoning_input_item(
    items: str | list[TResponseInputItem] | Any,
) -> dict[str, Any] | None:
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and item.get("type") == "reasoning":
            return cast(dict[str, Any], item)
    return None


class _StreamedRevokedReasoningIdModel(ScriptedModel):
    """ScriptedModel that 404s like the Responses API when a revoked reasoning ID is replayed."""

    def __init__(self) -> None:
        super().__init__()
        self.revoked_reasoning_ids: set[str] = set()

    def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        if isinstance(input, list):
            for item in input:
                if not isinstance(item, dict) or item.get("type") != "reasoning":
                    continue
                item_id = item.get("id")
                if item_id in self.revoked_reasoning_ids:
                    message = f"Item with id '{item_id}' not found."
                    body = {"error": {"message": message, "type": "invalid_request_error"}}
                    raise NotFoundError(
                        message,
                        response=httpx.Response(
                            404,
                            request=httpx.Request("POST", "https://api.openai.com/v1/responses"),
                            json=body,
                        ),
                        body=body,
                    )
        return super().stream_response(system_instructions, input, *args, **kwargs)


@pytest.mark.asyncio
async def test_streamed_omit_policy_strips_reasoning_ids_already_stored_in_the_session() -> None:
    """Adopting `omit` must also cover reasoning IDs a session recorded before it was set.

    Streaming counterpart of the non-streamed regression test for
    https://github.com/openai/openai-agents-python/issues/2020.
    """
    model = _StreamedRevokedReasoningIdModel()
    specialist = Agent(name="specialist", model=model)
    triage = Agent(name="triage", model=model, handoffs=[specialist])
    session = make_session("issue-2020-streamed")

    # Turn 1 predates the mitigation, so the session records the reasoning ID.
    model.extend(
        [
            [
                ResponseReasoningItem(id="rs_triage", type="reasoning", summary=[]),
                get_handoff_tool_call(specialist),
            ],
            [get_text_message("handled")],
        ]
    )
    first = Runner.run_streamed(triage, input="hello", session=session)
    async for _ in first.stream_events():
        pass
    assert first.final_output == "handled"
    stored_reasoning = _find_reasoning_input_item(await session.get_items())
    assert stored_reasoning is not None
    assert stored_reasoning.get("id") == "rs_triage"

    # The server no longer resolves that reasoning item.
    model.revoked_reasoning_ids.add("rs_triage")

    # Turn 2 opts into the documented mitigation for this failure.
    model.extend([[get_text_message("done")]])
    second = Runner.run_streamed(
        triage,
        input="anything else?",
        session=session,
        run_config=RunConfig(reasoning_item_id_policy="omit"),
    )
    async for _ in second.stream_events():
        pass

    assert second.final_output == "done"
    replayed_reasoning = _find_reasoning_input_item(model.calls[-1].input)
    assert replayed_reasoning is not None
    assert "id" not in replayed_reasoning
