"""Ported from pydantic-ai's own tests: ``tests/test_history_processor.py`` of pydantic/pydantic-ai at commit
4fda38988 (the stored snapshot nearest to pydantic-ai-slim 2.68.0, the version pinned in
the extras; https://github.com/pydantic/pydantic-ai, MIT licence (LICENSES.md),
Copyright (c) Pydantic Services Inc. 2024 to present).

Only the construction changed: where the original agent has an identity history
processor (or none), it gets a ``TimelineHistory`` (``make_history``, in
``pydantic_ai_port.py``), which under its budget must change nothing. Tests whose
processor transforms the history assert that transformation, which ours does not make,
and are not ported: docs/integrations.md lists them. One more edit, for the version:
pydantic-ai 2.64 added ``ModelResponse.model_id`` after this snapshot of the tests, so
each expected ``ModelResponse`` gets the ``model_id`` pydantic-ai fills in ("test:test"
for ``TestModel``, "function:<model_name>" for ``FunctionModel``); with the original
processors every test here passes on 2.68 that way.
"""

import uuid
from collections.abc import AsyncIterator
from copy import deepcopy

import pytest
from pydantic_ai import (
    Agent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    capture_run_messages,
)
from pydantic_ai.capabilities import ProcessHistory, ReinjectSystemPrompt
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import RunContext
from pydantic_ai.usage import RequestUsage

from tests.integrations.hosts.pydantic_ai_port import IsDatetime, IsStr, make_history, snapshot

pytestmark = [pytest.mark.anyio]


def _user_request_present(messages: list[ModelMessage]) -> bool:
    return any(
        isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
        for m in messages
    )


@pytest.fixture
def received_messages() -> list[ModelMessage]:
    return []


@pytest.fixture
def function_model(received_messages: list[ModelMessage]) -> FunctionModel:
    def capture_model_function(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # Capture the messages that the provider actually receives
        received_messages.clear()
        received_messages.extend(messages)
        return ModelResponse(parts=[TextPart(content="Provider response")])

    async def capture_model_stream_function(
        messages: list[ModelMessage], _info: AgentInfo
    ) -> AsyncIterator[str]:
        received_messages.clear()
        received_messages.extend(messages)
        yield "hello"

    return FunctionModel(capture_model_function, stream_function=capture_model_stream_function)


async def test_history_processor_no_op(
    function_model: FunctionModel, received_messages: list[ModelMessage]
):
    def no_op_history_processor(messages: list[ModelMessage]) -> list[ModelMessage]:
        return messages

    agent = Agent(function_model, capabilities=[ProcessHistory(make_history())])

    message_history = [
        ModelRequest(parts=[UserPromptPart(content="Previous question")]),
        ModelResponse(parts=[TextPart(content="Previous answer")]),
    ]

    with capture_run_messages() as captured_messages:
        result = await agent.run("New question", message_history=message_history)

    assert received_messages == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Previous question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Previous answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="New question", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )
    assert captured_messages == result.all_messages()
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Previous question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Previous answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="New question", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[TextPart(content="Provider response")],
                usage=RequestUsage(input_tokens=54, output_tokens=4),
                model_name="function:capture_model_function:capture_model_stream_function",
                model_id="function:function:capture_model_function:capture_model_stream_function",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )
    assert result.new_messages() == result.all_messages()[-2:]


async def test_callable_class_history_processor_no_op(
    function_model: FunctionModel, received_messages: list[ModelMessage]
):
    class NoOpHistoryProcessor:
        def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
            return messages

    agent = Agent(function_model, capabilities=[ProcessHistory(make_history())])

    message_history = [
        ModelRequest(parts=[UserPromptPart(content="Previous question")]),
        ModelResponse(parts=[TextPart(content="Previous answer")]),
    ]

    with capture_run_messages() as captured_messages:
        result = await agent.run("New question", message_history=message_history)

    assert received_messages == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Previous question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Previous answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="New question", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )
    assert captured_messages == result.all_messages()
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Previous question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Previous answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="New question", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[TextPart(content="Provider response")],
                usage=RequestUsage(input_tokens=54, output_tokens=4),
                model_name="function:capture_model_function:capture_model_stream_function",
                model_id="function:function:capture_model_function:capture_model_stream_function",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )
    assert result.new_messages() == result.all_messages()[-2:]


async def test_callable_class_history_processor_with_ctx_no_op(
    function_model: FunctionModel, received_messages: list[ModelMessage]
):
    class NoOpHistoryProcessorWithCtx:
        def __call__(self, _: RunContext, messages: list[ModelMessage]) -> list[ModelMessage]:
            return messages

    agent = Agent(function_model, capabilities=[ProcessHistory(make_history())])

    message_history = [
        ModelRequest(parts=[UserPromptPart(content="Previous question")]),
        ModelResponse(parts=[TextPart(content="Previous answer")]),
    ]

    with capture_run_messages() as captured_messages:
        result = await agent.run("New question", message_history=message_history)

    assert received_messages == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Previous question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Previous answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="New question", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )
    assert captured_messages == result.all_messages()
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Previous question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Previous answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="New question", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[TextPart(content="Provider response")],
                usage=RequestUsage(input_tokens=54, output_tokens=4),
                model_name="function:capture_model_function:capture_model_stream_function",
                model_id="function:function:capture_model_function:capture_model_stream_function",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )
    assert result.new_messages() == result.all_messages()[-2:]


async def test_resuming_without_prompt_with_tool_calls_excludes_resumed_request():
    """
    When resuming without a user prompt and the model enters a tool-call loop,
    new_messages() should exclude the resumed history request even though it
    gets the current run_id.
    """

    call_count = 0

    def model_function(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        nonlocal call_count
        call_count += 1
        if call_count == 1:
            return ModelResponse(
                parts=[ToolCallPart(tool_name="my_tool", args={}, tool_call_id="tool_call_1")],
            )
        return ModelResponse(parts=[TextPart(content="done")])

    agent = Agent(
        model=FunctionModel(model_function, model_name="test"),
        capabilities=[ProcessHistory(make_history())],
    )

    @agent.tool
    async def my_tool(_ctx: RunContext) -> str:
        return "tool executed"

    with capture_run_messages() as captured_messages:
        result = await agent.run(
            message_history=[ModelRequest(parts=[UserPromptPart(content="Original prompt")])]
        )

    assert captured_messages == result.all_messages()
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Original prompt", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[ToolCallPart(tool_name="my_tool", args={}, tool_call_id="tool_call_1")],
                usage=RequestUsage(input_tokens=52, output_tokens=2),
                model_name="test",
                model_id="function:test",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        tool_name="my_tool",
                        content="tool executed",
                        tool_call_id="tool_call_1",
                        timestamp=IsDatetime(),
                    )
                ],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[TextPart(content="done")],
                usage=RequestUsage(input_tokens=54, output_tokens=3),
                model_name="test",
                model_id="function:test",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )

    assert result.new_messages() == result.all_messages()[1:]


async def test_resuming_without_prompt_excludes_request_with_different_run_id(
    function_model: FunctionModel, received_messages: list[ModelMessage]
):
    """
    When running without a user prompt and the resumed request already has a
    run_id from a *previous* run, new_messages() should exclude it — only
    messages stamped with the current run_id should be returned.
    """
    previous_run_id = str(uuid.uuid4())

    agent = Agent(function_model, capabilities=[ProcessHistory(make_history())])

    message_history = [
        ModelRequest(parts=[UserPromptPart(content="Earlier question")]),
        ModelResponse(parts=[TextPart(content="Earlier answer")]),
        ModelRequest(
            parts=[UserPromptPart(content="Previous run prompt")],
            run_id=previous_run_id,
        ),
    ]

    with capture_run_messages() as captured_messages:
        result = await agent.run(message_history=message_history)

    assert received_messages == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Earlier question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Earlier answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="Previous run prompt", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=previous_run_id,
                conversation_id=IsStr(),
            ),
        ]
    )

    assert captured_messages == result.all_messages()
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content="Earlier question", timestamp=IsDatetime())]
            ),
            ModelResponse(parts=[TextPart(content="Earlier answer")], timestamp=IsDatetime()),
            ModelRequest(
                parts=[UserPromptPart(content="Previous run prompt", timestamp=IsDatetime())],
                timestamp=IsDatetime(),
                run_id=previous_run_id,
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[TextPart(content="Provider response")],
                usage=RequestUsage(input_tokens=55, output_tokens=4),
                model_name="function:capture_model_function:capture_model_stream_function",
                model_id="function:function:capture_model_function:capture_model_stream_function",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )

    # The resumed request has a run_id from a different run: excluded from new_messages().
    assert result.new_messages() == result.all_messages()[-1:]
    assert result.new_messages()[0].run_id != previous_run_id


async def test_history_processor_deepcopy_resuming_without_prompt(
    function_model: FunctionModel, received_messages: list[ModelMessage]
):
    """
    When a history processor deep-copies messages (breaking object identity),
    new_messages() should still exclude the resumed request supplied via
    message_history.
    """

    def deepcopy_processor(messages: list[ModelMessage]) -> list[ModelMessage]:
        return deepcopy(messages)

    agent = Agent(function_model, capabilities=[ProcessHistory(make_history())])

    message_history = [
        ModelRequest(parts=[UserPromptPart(content="Original prompt")]),
    ]

    with capture_run_messages() as captured_messages:
        result = await agent.run(message_history=message_history)

    assert captured_messages == result.all_messages()
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[
                    UserPromptPart(
                        content="Original prompt",
                        timestamp=IsDatetime(),
                    )
                ],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
            ModelResponse(
                parts=[TextPart(content="Provider response")],
                usage=RequestUsage(input_tokens=52, output_tokens=2),
                model_name="function:capture_model_function:capture_model_stream_function",
                model_id="function:function:capture_model_function:capture_model_stream_function",
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            ),
        ]
    )

    assert result.new_messages() == result.all_messages()[-1:]


async def test_reinject_system_prompt_resuming_without_prompt_excludes_resumed_request(
    function_model: FunctionModel, received_messages: list[ModelMessage]
):
    """
    System-prompt reinjection (the UI adapters' default with `manage_system_prompt='server'`)
    rebuilds the first request via `replace(...)`, prepending a `SystemPromptPart`. When
    resuming without a new user prompt on the first turn, that first request *is* the resumed
    request, so the rewrite changes both its identity and its `parts`. It must still be treated
    as prior context and excluded from new_messages(). Regression test for the turn-1 leak in
    https://github.com/pydantic/pydantic-ai/issues/6025.
    """

    agent = Agent(
        function_model,
        system_prompt="Server prompt",
        capabilities=[ReinjectSystemPrompt(replace_existing=True), ProcessHistory(make_history())],
    )

    message_history = [
        ModelRequest(parts=[UserPromptPart(content="Original prompt")]),
    ]

    with capture_run_messages() as captured_messages:
        result = await agent.run(message_history=message_history)

    # The model received the resumed request with the server prompt reinjected into it.
    assert received_messages == snapshot(
        [
            ModelRequest(
                parts=[
                    SystemPromptPart(content="Server prompt", timestamp=IsDatetime()),
                    UserPromptPart(content="Original prompt", timestamp=IsDatetime()),
                ],
                timestamp=IsDatetime(),
                run_id=IsStr(),
                conversation_id=IsStr(),
            )
        ]
    )
    assert captured_messages == result.all_messages()
    # The reinjected resumed request is excluded; only the model response is new.
    assert result.new_messages() == result.all_messages()[-1:]


async def test_reinject_system_prompt_resumed_tool_loop_excludes_resumed_request():
    """
    System-prompt reinjection rebuilds the resumed request in place on *every* step of a
    multi-step resumed run (a tool-call loop). The resumed request must stay excluded from
    new_messages() across all steps, while every message produced this run is included.
    The pinned boundary is translated per step so the in-place rebuild never leaks it.
    """

    call_count = 0

    def model_function(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        nonlocal call_count
        call_count += 1
        if call_count == 1:
            return ModelResponse(
                parts=[ToolCallPart(tool_name="my_tool", args={}, tool_call_id="tool_call_1")]
            )
        return ModelResponse(parts=[TextPart(content="done")])

    agent = Agent(
        model=FunctionModel(model_function, model_name="test"),
        system_prompt="Server prompt",
        capabilities=[ReinjectSystemPrompt(replace_existing=True), ProcessHistory(make_history())],
    )

    @agent.tool
    async def my_tool(_ctx: RunContext) -> str:
        return "tool executed"

    with capture_run_messages() as captured_messages:
        result = await agent.run(
            message_history=[ModelRequest(parts=[UserPromptPart(content="Original prompt")])]
        )

    assert captured_messages == result.all_messages()
    # The reinjected resumed request stays excluded; everything produced this run is new.
    assert result.new_messages() == result.all_messages()[1:]
    assert not _user_request_present(result.new_messages())
