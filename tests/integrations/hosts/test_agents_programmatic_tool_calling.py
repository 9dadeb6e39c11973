"""Ported from the OpenAI Agents SDK's own tests: ``test_programmatic_tool_calling.py``
of openai-agents 0.24.0 (https://github.com/openai/openai-agents-python, MIT licence (LICENSES.md),
Copyright (c) 2025 OpenAI).

Only the construction changed: every ``SQLiteSession(...)`` of the original builds a
``TimelineSession`` on the same database file (``make_session``, in ``agents_port.py``);
the tests and their assertions are the SDK's own. The module's tests that build no
``SQLiteSession`` test other parts of the SDK and are left out, as are those that drive
``SQLiteSession``'s own connections or inserts (docs/integrations.md lists them).
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, cast

import pytest
from agents import (
    Agent,
    CodeInterpreterTool,
    HostedMCPTool,
    ProgrammaticToolCallingTool,
    RunConfig,
    Runner,
    ToolCallOutputItem,
    function_tool,
)
from agents.testing import ScriptedModel
from openai.types.responses import (
    ResponseFunctionToolCall,
)
from openai.types.responses.response_code_interpreter_tool_call import (
    ResponseCodeInterpreterToolCall,
)
from openai.types.responses.response_function_tool_call import CallerProgram
from openai.types.responses.response_output_item import (
    McpApprovalRequest,
    McpCall,
    McpListTools,
    Program,
    ProgramOutput,
)
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from tests.integrations.hosts.agents_port import make_session
from tests.integrations.hosts.agents_responses import get_handoff_tool_call, get_text_message

PROGRAM_CALL_ID = "call_program"
FUNCTION_CALL_ID = "call_lookup"
PROGRAM_CALLER = {"type": "program", "caller_id": PROGRAM_CALL_ID}


class InventoryOutput(BaseModel):
    sku: str
    available_units: int


class InventoryAwaitable(Awaitable[InventoryOutput]):
    def __await__(self) -> Any:
        raise NotImplementedError


class InventoryDict(TypedDict):
    sku: str
    available_units: int


@dataclass
class InventoryData:
    sku: str
    available_units: int


class AliasedInventoryOutput(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    sku: str
    available_units: int = Field(
        validation_alias="inputUnits",
        serialization_alias="availableUnits",
    )


def _program() -> Program:
    return Program(
        id="program_item",
        call_id=PROGRAM_CALL_ID,
        code='lookup_inventory(sku="A-1")',
        fingerprint="fingerprint",
        type="program",
    )


def _function_call() -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id="function_item",
        call_id=FUNCTION_CALL_ID,
        name="lookup_inventory",
        arguments='{"sku":"A-1"}',
        caller=CallerProgram(type="program", caller_id=PROGRAM_CALL_ID),
        type="function_call",
    )


def _program_output(
    status: Literal["completed", "incomplete"] = "completed",
) -> ProgramOutput:
    return ProgramOutput(
        id="program_output_item",
        call_id=PROGRAM_CALL_ID,
        result='{"sku":"A-1","available_units":42}',
        status=status,
        type="program_output",
    )


def _hosted_program_call_and_tool(
    output_type: str,
    allowed_callers: list[Any] | None,
) -> tuple[Any, Any]:
    if output_type in ("mcp_approval_request", "mcp_call", "mcp_list_tools"):
        mcp_config: dict[str, Any] = {
            "type": "mcp",
            "server_label": "docs_server",
            "server_url": "https://example.com/mcp",
        }
        if allowed_callers is not None:
            mcp_config["allowed_callers"] = allowed_callers
        hosted_tool = HostedMCPTool(tool_config=cast(Any, mcp_config))
        if output_type == "mcp_list_tools":
            return (
                McpListTools.model_construct(
                    id="mcp_list_tools_1",
                    server_label="docs_server",
                    tools=[],
                    type="mcp_list_tools",
                    caller=PROGRAM_CALLER,
                ),
                hosted_tool,
            )
        call_type: Any = McpApprovalRequest if output_type == "mcp_approval_request" else McpCall
        output = call_type.model_construct(
            id=f"{output_type}_1",
            arguments="{}",
            name="search_docs",
            server_label="docs_server",
            type=output_type,
            caller=PROGRAM_CALLER,
        )
        return output, hosted_tool

    code_interpreter_config: dict[str, Any] = {
        "type": "code_interpreter",
        "container": "auto",
    }
    if allowed_callers is not None:
        code_interpreter_config["allowed_callers"] = allowed_callers
    return (
        ResponseCodeInterpreterToolCall.model_construct(
            id="code_interpreter_1",
            container_id="container_1",
            status="completed",
            type="code_interpreter_call",
            caller=PROGRAM_CALLER,
        ),
        CodeInterpreterTool(tool_config=cast(Any, code_interpreter_config)),
    )


def _caller_dict(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return cast(dict[str, str], value)
    return cast(dict[str, str], value.model_dump(exclude_none=True))


def _raw_item_type(value: Any) -> str | None:
    if isinstance(value, dict):
        item_type = value.get("type")
        return item_type if isinstance(item_type, str) else None
    item_type = getattr(value, "type", None)
    return item_type if isinstance(item_type, str) else None


def _function_output_raw_items(result: Any) -> list[dict[str, Any]]:
    return [
        cast(dict[str, Any], item.raw_item)
        for item in result.new_items
        if isinstance(item, ToolCallOutputItem)
        and isinstance(item.raw_item, dict)
        and item.raw_item.get("type") == "function_call_output"
    ]


@pytest.mark.asyncio
async def test_sqlite_session_round_trip_preserves_program_history_and_caller() -> None:
    model = ScriptedModel()
    model.extend(
        [
            [_program(), _function_call()],
            [_program_output(), get_text_message("done")],
        ]
    )

    @function_tool(allowed_callers=["programmatic"])
    def lookup_inventory(sku: str) -> InventoryOutput:
        return InventoryOutput(sku=sku, available_units=42)

    agent = Agent(
        name="inventory",
        model=model,
        tools=[ProgrammaticToolCallingTool(), lookup_inventory],
    )
    session = make_session("programmatic-tool-calling")
    try:
        result = await Runner.run(agent, "Check inventory", session=session)
        assert result.final_output == "done"

        session_items = await session.get_items()
        assert [_raw_item_type(item) for item in session_items] == [
            None,
            "program",
            "function_call",
            "function_call_output",
            "program_output",
            "message",
        ]
        function_output = next(
            cast(dict[str, Any], item)
            for item in session_items
            if _raw_item_type(item) == "function_call_output"
        )
        assert _caller_dict(function_output["caller"]) == PROGRAM_CALLER
    finally:
        session.close()


@pytest.mark.asyncio
async def test_nested_handoff_summarizes_complete_programmatic_transcript() -> None:
    model = ScriptedModel()
    delegate = Agent(name="delegate", model=model)
    model.extend(
        [
            [_program(), _function_call()],
            [_program_output(), get_handoff_tool_call(delegate)],
            [get_text_message("done")],
        ]
    )

    @function_tool(allowed_callers=["programmatic"])
    def lookup_inventory(sku: str) -> InventoryOutput:
        return InventoryOutput(sku=sku, available_units=42)

    triage = Agent(
        name="triage",
        model=model,
        handoffs=[delegate],
        tools=[ProgrammaticToolCallingTool(), lookup_inventory],
    )
    captured_inputs: list[list[Any]] = []

    def capture_model_input(data: Any) -> Any:
        captured_inputs.append(list(data.model_data.input))
        return data.model_data

    session = make_session("programmatic-tool-calling-nested-handoff")
    try:
        result = await Runner.run(
            triage,
            "Check inventory and delegate the final response.",
            run_config=RunConfig(
                nest_handoff_history=True,
                call_model_input_filter=capture_model_input,
            ),
            session=session,
        )

        assert result.final_output == "done"
        handoff_input = captured_inputs[-1]
        handoff_types = [_raw_item_type(item) for item in handoff_input]
        assert not {
            "program",
            "function_call",
            "function_call_output",
            "program_output",
        }.intersection(handoff_types)

        summary_text = "\n".join(
            cast(str, item.get("content"))
            for item in handoff_input
            if isinstance(item, dict) and isinstance(item.get("content"), str)
        )
        assert '"type": "program"' in summary_text
        assert '"type": "function_call"' in summary_text
        assert '"type": "function_call_output"' in summary_text
        assert '"type": "program_output"' in summary_text

        session_items = await session.get_items()
        assert [_raw_item_type(item) for item in session_items] == [
            None,
            "program",
            "function_call",
            "function_call_output",
            "program_output",
            "function_call",
            "function_call_output",
            "message",
        ]
    finally:
        session.close()
