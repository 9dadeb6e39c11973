"""Ported from the OpenAI Agents SDK's own tests: ``test_run_impl_resume_paths.py``
of openai-agents 0.24.0 (https://github.com/openai/openai-agents-python, MIT licence (LICENSES.md),
Copyright (c) 2025 OpenAI).

Only the construction changed: every ``SQLiteSession(...)`` of the original builds a
``TimelineSession`` on the same database file (``make_session``, in ``agents_port.py``);
the tests and their assertions are the SDK's own. The module's tests that build no
``SQLiteSession`` test other parts of the SDK and are left out, as are those that drive
``SQLiteSession``'s own connections or inserts (docs/integrations.md lists them).
"""

import asyncio
import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, cast

import pytest
from agents import (
    Agent,
    Runner,
    function_tool,
    handoff,
    output_guardrail,
)
from agents.agent import StopAtTools
from agents.decorators import tool, tool_input_guardrail, tool_output_guardrail
from agents.exceptions import (
    OutputGuardrailTripwireTriggered,
    UserError,
)
from agents.guardrail import GuardrailFunctionOutput
from agents.items import (
    ToolCallOutputItem,
    TResponseInputItem,
)
from agents.lifecycle import RunHooks
from agents.memory import OpenAIResponsesCompactionSession, Session
from agents.result import RunResultStreaming, ToInputListMode
from agents.run import RunConfig
from agents.run_context import RunContextWrapper
from agents.run_internal import run_loop
from agents.run_state import RunState
from agents.testing import ScriptedModel
from agents.tool import Tool
from agents.tool_guardrails import (
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
)

from tests.integrations.hosts.agents_port import SQLiteSession, make_session
from tests.integrations.hosts.agents_responses import get_function_tool_call, get_text_message
from tests.integrations.hosts.agents_simple_session import SimpleListSession


class _FailingResumeSession(SimpleListSession):
    """Control append acknowledgement at the public Session boundary."""

    def __init__(self) -> None:
        super().__init__()
        self.failure: str | None = None
        self.error = RuntimeError("session append failed")
        self.block_next_add = False
        self.add_started = asyncio.Event()
        self.release_add = asyncio.Event()
        self.fail_on_output: str | None = None

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if self.fail_on_output is not None and any(
            self.fail_on_output in json.dumps(item, default=str) for item in items
        ):
            self.fail_on_output = None
            raise self.error
        failure, self.failure = self.failure, None
        if failure == "before":
            raise self.error
        if self.block_next_add:
            self.block_next_add = False
            self.add_started.set()
            await self.release_add.wait()
        if failure == "partial":
            await super().add_items(items[:1])
            raise self.error
        await super().add_items(items)
        if failure == "after":
            raise self.error


class _FailSecondAddItemsSession(SimpleListSession):
    """Let the initial input-priming append succeed, then fail the next append.

    Unlike ``_FailingResumeSession``, this targets a specific append by call order rather than
    a resume-cycle phase, so it can isolate a fresh (non-resumed) run's first real turn save.
    """

    def __init__(self) -> None:
        super().__init__()
        self.error = RuntimeError("session append failed")
        self._call_count = 0

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        self._call_count += 1
        if self._call_count == 2:
            raise self.error
        await super().add_items(items)


class _FailSecondAddItemsSessionWithYield(_FailSecondAddItemsSession):
    """Same failure shape as ``_FailSecondAddItemsSession``, but the failing call performs a
    genuine ``await`` (a scheduler yield) before raising, like a real I/O-backed Session
    (SQLite, network, etc.) would. A purely synchronous raise never yields control back to the
    ``stream_events()`` consumer before the run-loop task finishes, so a test built on it cannot
    observe whether an already-queued stream event was delivered before the error surfaced.
    """

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if self._call_count == 1:
            await asyncio.sleep(0)
        await super().add_items(items)


class _LostAckSQLiteSession(SQLiteSession):
    fail_after_commit = False
    error = RuntimeError("session append failed")

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await super().add_items(items)
        if self.fail_after_commit:
            self.fail_after_commit = False
            raise self.error


async def _run_session_resume(
    agent: Agent[Any],
    value: str | RunState[Any],
    session: Session | None,
    streamed: bool,
    hooks: RunHooks[Any] | None = None,
    events: list[Any] | None = None,
):
    config = RunConfig(tracing_disabled=True)
    if not streamed:
        return await Runner.run(agent, value, session=session, run_config=config, hooks=hooks)
    result = Runner.run_streamed(agent, value, session=session, run_config=config, hooks=hooks)
    async for event in result.stream_events():
        if events is not None:
            events.append(event)
    return result


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "guardrail_outcome,prior_turn,with_session,retry_mode",
    [
        pytest.param("allowed", False, False, "streamed-live", id="first-turn-allowed"),
        pytest.param("blocked", False, False, "streamed-live", id="first-turn-blocked"),
        pytest.param("error", False, False, "streamed-json", id="first-turn-error"),
        pytest.param("allowed", True, False, "streamed-json", id="prior-turn-allowed"),
        pytest.param("blocked", True, False, "streamed-json", id="prior-turn-blocked"),
        pytest.param("error", True, False, "streamed-json", id="prior-turn-error"),
        pytest.param("error", True, True, "streamed-json", id="prior-turn-error-sqlite"),
        pytest.param("error", True, True, "run-live", id="prior-turn-error-sqlite-run-live"),
        pytest.param("error", True, True, "run-json", id="prior-turn-error-sqlite-run-json"),
    ],
)
async def test_failed_approval_callback_defers_stream_output_until_retry_guardrail(
    guardrail_outcome: str,
    prior_turn: bool,
    with_session: bool,
    retry_mode: Literal["streamed-live", "streamed-json", "run-live", "run-json"],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    effects: list[str] = []
    callbacks: list[str] = []
    guardrail_outputs: list[str] = []
    guardrail_entered = asyncio.Event()
    release_guardrail = asyncio.Event()
    failed_outputs: list[str] = []
    retry_outputs: list[str] = []
    config = RunConfig(tracing_disabled=True)
    session = make_session("approval-retry", tmp_path / "session.db") if with_session else None
    if session is not None:
        request.addfinalizer(session.close)

    def input_outputs(result: RunResultStreaming) -> dict[str, list[Any]]:
        modes: tuple[ToInputListMode, ...] = ("preserve_all", "normalized")
        return {
            mode: [
                item.get("output")
                for item in result.to_input_list(mode=mode)
                if item.get("type") == "function_call_output"
            ]
            for mode in modes
        }

    def fail_after_execution(_context: Any) -> dict[str, Any]:
        callbacks.append("extractor")
        raise RuntimeError("post-tool callback failed")

    @tool_output_guardrail
    def record_output(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.allow(output_info=data.output)

    @function_tool(tool_output_guardrails=[record_output])
    async def prelude() -> str:
        return "earlier-result"

    @function_tool(
        needs_approval=True,
        custom_data_extractor=fail_after_execution,
        tool_output_guardrails=[record_output],
    )
    async def charge() -> str:
        effects.append("charged")
        return "receipt-7"

    @output_guardrail
    async def record_terminal_candidate(
        _context: Any, _agent: Any, output: Any
    ) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=output, tripwire_triggered=False)

    @output_guardrail
    async def terminal_policy(_context: Any, _agent: Any, output: Any) -> GuardrailFunctionOutput:
        guardrail_outputs.append(output)
        guardrail_entered.set()
        await release_guardrail.wait()
        if guardrail_outcome == "error" and len(guardrail_outputs) == 1:
            if retry_mode in {"run-live", "run-json"}:
                raise UserError("policy temporarily unavailable")
            raise RuntimeError("policy temporarily unavailable")
        return GuardrailFunctionOutput(
            output_info=None, tripwire_triggered=guardrail_outcome == "blocked"
        )

    model = ScriptedModel(
        ([[get_function_tool_call("prelude", "{}", call_id="prelude-1")]] if prior_turn else [])
        + [[get_function_tool_call("charge", "{}", call_id="charge-1")]]
    )
    agent = Agent(
        name="agent",
        model=model,
        tools=[prelude, charge],
        tool_use_behavior=StopAtTools(stop_at_tool_names=["charge"]),
        output_guardrails=[record_terminal_candidate, terminal_policy],
    )
    paused = await Runner.run(agent, "charge once", session=session, run_config=config)
    state = paused.to_state()
    state.approve(state.get_interruptions()[0])
    prior_metadata = ["earlier-result"] if prior_turn else []
    withheld_inputs = dict.fromkeys(("preserve_all", "normalized"), prior_metadata)

    failed = Runner.run_streamed(agent, state, session=session, run_config=config)
    with pytest.raises(UserError, match="post-tool callback failed"):
        async for event in failed.stream_events():
            if event.type == "run_item_stream_event" and isinstance(event.item, ToolCallOutputItem):
                # Copy the value at emission, so later owner replacements cannot hide a leak.
                failed_outputs.append(event.item.output)
    assert not guardrail_outputs
    failed_metadata = [result.output.output_info for result in failed.tool_output_guardrail_results]
    failed_input_outputs = input_outputs(failed)

    if retry_mode != "streamed-live":
        # Exercise the documented failed-result resume path and supported durable state format.
        state = await RunState.from_json(agent, json.loads(json.dumps(failed.to_state().to_json())))
    # For live retries, reuse the same approved state that was passed to the failed stream.
    assert [result.output.output_info for result in state._tool_output_guardrail_results] == [
        *prior_metadata,
        "receipt-7",
    ]
    retry = (
        Runner.run_streamed(agent, state, session=session, run_config=config)
        if retry_mode in {"streamed-live", "streamed-json"}
        else None
    )
    initial_retry_metadata = (
        [result.output.output_info for result in retry.tool_output_guardrail_results]
        if retry is not None
        else None
    )
    initial_retry_inputs = input_outputs(retry) if retry is not None else None

    async def collect_retry() -> None:
        if retry is None:
            # Runner.run fails without returning a result; the caller resumes its same RunState.
            await Runner.run(agent, state, session=session, run_config=config)
            return
        async for event in retry.stream_events():
            if event.type == "run_item_stream_event" and isinstance(event.item, ToolCallOutputItem):
                retry_outputs.append(event.item.output)

    consumer = asyncio.create_task(collect_retry())
    try:
        await asyncio.wait_for(guardrail_entered.wait(), timeout=5)
        # Let the waiting stream consumer drain anything the producer queued before its await.
        for _ in range(3):
            await asyncio.sleep(0)
        outputs_before_allow = list(retry_outputs)
        metadata_before_allow = (
            [result.output.output_info for result in retry.tool_output_guardrail_results]
            if retry is not None
            else None
        )
        pending_metadata = [
            result.output.output_info for result in state._tool_output_guardrail_results
        ]
        public_new_outputs = (
            [item.output for item in retry.new_items if isinstance(item, ToolCallOutputItem)]
            if retry is not None
            else None
        )
        public_input_outputs = input_outputs(retry) if retry is not None else None
        stored_before_allow = await session.get_items() if session is not None else None
    finally:
        release_guardrail.set()

    if guardrail_outcome == "blocked":
        with pytest.raises(OutputGuardrailTripwireTriggered):
            await consumer
    elif guardrail_outcome == "error":
        if retry is None:
            with pytest.raises(UserError, match="policy temporarily unavailable") as error:
                await consumer
            run_data = error.value.run_data
            assert run_data is not None
            assert [
                result.output.output_info for result in run_data.tool_output_guardrail_results
            ] == prior_metadata
            assert [
                item.output for item in run_data.new_items if isinstance(item, ToolCallOutputItem)
            ] == prior_metadata
            assert run_data.output_guardrail_results == []
        else:
            with pytest.raises(RuntimeError, match="policy temporarily unavailable"):
                await consumer
    else:
        await consumer

    # Assertions at the end ensure the failed snapshot really reaches the retry guardrail.
    if guardrail_outcome == "error" and session is not None:
        assert "function_call_output" not in _call_pair(await session.get_items(), "charge-1")
    assert effects == ["charged"]
    assert callbacks == ["extractor"]
    assert guardrail_outputs == ["receipt-7"]
    assert failed_outputs == [], "callback failure exposed unchecked terminal output"
    assert failed_metadata == prior_metadata, (
        "callback failure exposed unchecked guardrail metadata"
    )
    assert failed_input_outputs == withheld_inputs, "callback failure exposed unchecked model input"
    assert outputs_before_allow == [], "retry exposed output while its guardrail was pending"
    assert pending_metadata == [*prior_metadata, "receipt-7"]
    if retry is not None:
        assert initial_retry_metadata == prior_metadata, (
            "retry exposed metadata before its guardrail"
        )
        assert initial_retry_inputs == withheld_inputs, "retry exposed model input before starting"
        assert metadata_before_allow == prior_metadata, (
            "retry exposed metadata during its guardrail"
        )
        assert public_new_outputs == prior_metadata, "retry exposed history during its guardrail"
        assert public_input_outputs == withheld_inputs, (
            "retry exposed model input during its guardrail"
        )
    assert len(model.calls) == (2 if prior_turn else 1)
    if stored_before_allow is not None:
        assert "function_call_output" not in _call_pair(stored_before_allow, "charge-1")
    if guardrail_outcome == "error":
        assert retry_outputs == []
        if retry is not None:
            assert retry.output_guardrail_results == []
            assert [
                result.output.output_info for result in retry.tool_output_guardrail_results
            ] == prior_metadata
            assert input_outputs(retry) == withheld_inputs, (
                "guardrail error exposed unchecked input"
            )
            state = retry.to_state()
        restored = state
        if retry_mode != "run-live":
            restored = await RunState.from_json(agent, json.loads(json.dumps(state.to_json())))
        assert [
            result.output.output_info for result in restored._tool_output_guardrail_results
        ] == [*prior_metadata, "receipt-7"]
        guardrail_entered.clear()
        release_guardrail.clear()
        retry = Runner.run_streamed(agent, restored, session=session, run_config=config)
        assert [
            result.output.output_info for result in retry.tool_output_guardrail_results
        ] == prior_metadata
        consumer = asyncio.create_task(collect_retry())
        try:
            await asyncio.wait_for(guardrail_entered.wait(), timeout=5)
            for _ in range(3):
                await asyncio.sleep(0)
            assert retry_outputs == [], (
                "second retry exposed output before its guardrail allowed it"
            )
            assert [
                result.output.output_info for result in retry.tool_output_guardrail_results
            ] == prior_metadata
            assert [
                item.output for item in retry.new_items if isinstance(item, ToolCallOutputItem)
            ] == prior_metadata
            assert input_outputs(retry) == withheld_inputs
            if session is not None:
                assert "function_call_output" not in _call_pair(
                    await session.get_items(), "charge-1"
                )
        finally:
            release_guardrail.set()
            await consumer

        assert guardrail_outputs == ["receipt-7", "receipt-7"]
        assert len(model.calls) == (2 if prior_turn else 1)
        assert effects == ["charged"]
        assert callbacks == ["extractor"]
        if session is not None:
            assert _call_pair(await session.get_items(), "charge-1") == [
                "function_call",
                "function_call_output",
            ]
    elif guardrail_outcome == "blocked":
        assert retry is not None
        assert retry_outputs == []
        assert all(
            result.output.output_info != "receipt-7"
            for result in retry.tool_output_guardrail_results
        )
        assert "receipt-7" not in state.to_string()
        assert input_outputs(retry) == dict.fromkeys(
            ("preserve_all", "normalized"),
            [*prior_metadata, run_loop._OUTPUT_GUARDRAIL_BLOCKED_TOOL_OUTPUT],
        )
    if guardrail_outcome != "blocked":
        assert retry is not None
        assert retry_outputs == ["receipt-7"]
        assert retry.final_output == "receipt-7"
        assert [result.output.output_info for result in retry.tool_output_guardrail_results] == [
            *prior_metadata,
            "receipt-7",
        ]
        assert [
            item.output for item in retry.new_items if isinstance(item, ToolCallOutputItem)
        ] == [*prior_metadata, "receipt-7"]
        assert input_outputs(retry) == dict.fromkeys(
            ("preserve_all", "normalized"), [*prior_metadata, "receipt-7"]
        )
        restored = await RunState.from_json(agent, retry.to_state().to_json())
        assert [
            item.output for item in restored._session_items if isinstance(item, ToolCallOutputItem)
        ] == [*prior_metadata, "receipt-7"]
    assert input_outputs(failed) == withheld_inputs, (
        "later retries changed the failed stream's public output"
    )


async def _approved_session_state(streamed: bool, session: Session | None = None):
    effects: list[int] = []

    @tool(needs_approval=True)
    async def charge(amount: int) -> str:
        effects.append(amount)
        return "receipt-7"

    model = ScriptedModel(
        [
            [get_function_tool_call("charge", '{"amount":7}', call_id="charge-1")],
            [get_text_message("done")],
            [get_text_message("fresh")],
        ]
    )
    agent = Agent(name="payment", model=model, tools=[charge])
    session = session if session is not None else _FailingResumeSession()
    paused = await _run_session_resume(agent, "charge 7", session, streamed)
    state = paused.to_state()
    state.approve(state.get_interruptions()[0])
    return agent, model, session, state, effects


def _charge_pair(items: list[TResponseInputItem]) -> list[str]:
    return [
        str(item.get("type"))
        for item in items
        if isinstance(item, dict) and item.get("call_id") == "charge-1"
    ]


async def _partially_approved_session_state(streamed: bool):
    """Pause on two approval-gated calls in one response and approve only the first."""
    effects: list[int] = []

    @tool(needs_approval=True)
    async def charge(amount: int) -> str:
        effects.append(amount)
        return "receipt-7"

    @tool(needs_approval=True)
    async def notify() -> str:
        raise AssertionError("the unresolved approval must not execute")

    model = ScriptedModel(
        [
            [
                get_function_tool_call("charge", '{"amount":7}', call_id="charge-1"),
                get_function_tool_call("notify", "{}", call_id="notify-1"),
            ],
            [get_text_message("done")],
        ]
    )
    agent = Agent(name="payment", model=model, tools=[charge, notify])
    session = _FailingResumeSession()
    paused = await _run_session_resume(agent, "charge 7 and notify", session, streamed)
    state = paused.to_state()
    charge_approval = next(
        item for item in state.get_interruptions() if item.raw_item.call_id == "charge-1"
    )
    state.approve(charge_approval)
    return agent, model, session, state, effects


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("round_trip", [False, True], ids=["live", "json"])
async def test_resumed_committed_append_refreshes_compaction_input(
    streamed: bool, round_trip: bool, tmp_path: Path
) -> None:
    backend = _LostAckSQLiteSession("compaction-recovery", tmp_path / "history.db")
    compaction_inputs: list[list[TResponseInputItem]] = []
    compact_enabled = False

    async def compact(**kwargs: Any) -> SimpleNamespace:
        items = copy.deepcopy(kwargs["input"])
        compaction_inputs.append(items)
        return SimpleNamespace(output=items, usage=None)

    session = OpenAIResponsesCompactionSession(
        backend.session_id,
        underlying_session=backend,
        client=cast(Any, SimpleNamespace(responses=SimpleNamespace(compact=compact))),
        compaction_mode="input",
        should_trigger_compaction=lambda _: compact_enabled,
    )
    try:
        agent, model, _, state, effects = await _approved_session_state(streamed, session)
        # A normal declined compaction initializes the retained wrapper's history cache.
        await session.run_compaction()
        assert compaction_inputs == []
        backend.fail_after_commit = True
        with pytest.raises(RuntimeError) as error:
            await _run_session_resume(agent, state, session, streamed)
        assert error.value is backend.error
        expected_pair = ["function_call", "function_call_output"]
        assert _charge_pair(await backend.get_items(limit=100)) == expected_pair
        if round_trip:
            state = await RunState.from_json(agent, state.to_json())

        compact_enabled = True
        result = await _run_session_resume(agent, state, session, streamed)
        assert result.final_output == "done"
        assert effects == [7]
        assert len(model.calls) == 2
        assert len(compaction_inputs) == 1
        assert _charge_pair(compaction_inputs[0]) == expected_pair
        assert _charge_pair(await backend.get_items(limit=100)) == expected_pair
        assert _charge_pair(result.to_input_list()) == expected_pair
        assert "pending_session_write" not in result.to_state().to_json()
    finally:
        backend.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["input", "auto"])
async def test_compaction_reload_preserves_session_retrieval_window(
    mode: Literal["input", "auto"], tmp_path: Path
) -> None:
    backend = _LostAckSQLiteSession(
        "bounded-compaction", tmp_path / "history.db", session_settings={"limit": 1}
    )
    compaction_inputs: list[list[TResponseInputItem]] = []

    async def compact(**kwargs: Any) -> SimpleNamespace:
        assert "previous_response_id" not in kwargs
        items = copy.deepcopy(kwargs["input"])
        compaction_inputs.append(items)
        return SimpleNamespace(output=items, usage=None)

    session = OpenAIResponsesCompactionSession(
        backend.session_id,
        underlying_session=backend,
        client=cast(Any, SimpleNamespace(responses=SimpleNamespace(compact=compact))),
        compaction_mode=mode,
    )
    old_items: list[TResponseInputItem] = [
        {"role": "assistant", "content": f"old message {index}"} for index in range(12)
    ]
    recovered_item: TResponseInputItem = {"role": "assistant", "content": "committed reply"}
    try:
        await backend.add_items(old_items)
        # The configured window has one candidate, so the default threshold is not met.
        await session.run_compaction({"response_id": "unstored-response", "store": False})
        assert compaction_inputs == []
        assert await backend.get_items(limit=100) == old_items

        backend.fail_after_commit = True
        with pytest.raises(RuntimeError) as error:
            await session.add_items([recovered_item])
        assert error.value is backend.error
        assert await backend.get_items(limit=100) == [*old_items, recovered_item]

        await session.run_compaction({"force": True, "store": False})
        assert compaction_inputs == [[recovered_item]]
        assert await backend.get_items(limit=100) == [recovered_item]
    finally:
        backend.close()


def _relabel_as_older_schema(payload: dict[str, Any], version: str) -> None:
    """Downgrade only what the destination label cannot represent, then relabel.

    Agent-scoped approvals and MCP recipient bindings arrived in 1.18, which v0.23.0
    released, so a 1.18 payload keeps them. Rewriting them unconditionally would hand
    the reader a 1.17-shaped payload wearing a newer label, and a test built on that
    would stay green even if the newer reader lost the fields.
    """
    if tuple(int(part) for part in version.split(".", maxsplit=1)) < (1, 18):
        for entry in payload["context"].pop("function_tool_approvals", []):
            payload["context"]["approvals"][entry["tool_key"]] = entry["decision"]
        response = payload.get("last_processed_response")
        if isinstance(response, dict):
            response.pop("mcp_tool_bindings", None)
    payload["$schemaVersion"] = version


def _sent_tool_outputs(model: ScriptedModel, *, first_call_index: int) -> list[tuple[str, str]]:
    """Collect the tool outputs the model received, from `first_call_index` onward."""
    outputs: list[tuple[str, str]] = []
    for call in model.calls[first_call_index:]:
        for item in cast(list[dict[str, Any]], call.input):
            if item.get("type") == "function_call_output":
                outputs.append((str(item.get("call_id")), str(item.get("output"))))
    return outputs


async def _run_server_managed(
    agent: Agent[Any],
    agent_input: Any,
    *,
    run_config: RunConfig,
    use_conversation_id: bool,
    streaming: bool,
) -> Any:
    """Run the agent under one of the server-managed continuation modes."""
    kwargs: dict[str, Any] = (
        {"conversation_id": "conv-resume"}
        if use_conversation_id
        else {"auto_previous_response_id": True}
    )
    if streaming:
        streamed = Runner.run_streamed(agent, agent_input, run_config=run_config, **kwargs)
        async for _ in streamed.stream_events():
            pass
        return streamed
    return await Runner.run(agent, agent_input, run_config=run_config, **kwargs)


async def _approved_handoff_session_state(streamed: bool):
    """Pause on an approval-gated call that shares its response with a handoff."""
    effects: list[int] = []
    guardrail_calls: list[str] = []
    hook_calls: list[str] = []
    handoff_calls: list[str] = []

    class CountingHooks(RunHooks[Any]):
        async def on_tool_start(
            self,
            context: RunContextWrapper[Any],
            agent: Agent[Any],
            tool: Tool,
        ) -> None:
            hook_calls.append("tool-start")

        async def on_tool_end(
            self,
            context: RunContextWrapper[Any],
            agent: Agent[Any],
            tool: Tool,
            result: object,
        ) -> None:
            hook_calls.append("tool-end")

    @tool_input_guardrail
    def record_input(_data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        guardrail_calls.append("input")
        return ToolGuardrailFunctionOutput.allow(output_info="input-checked")

    @tool_output_guardrail
    def record_output(_data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        guardrail_calls.append("output")
        return ToolGuardrailFunctionOutput.allow(output_info="output-checked")

    @tool(
        needs_approval=True,
        tool_input_guardrails=[record_input],
        tool_output_guardrails=[record_output],
    )
    async def charge(amount: int) -> str:
        effects.append(amount)
        return "receipt-7"

    model = ScriptedModel(
        [
            [
                get_function_tool_call("charge", '{"amount":7}', call_id="charge-1"),
                get_function_tool_call("transfer_to_delegate", "{}", call_id="handoff-1"),
            ],
            [get_text_message("done")],
            [get_text_message("fresh")],
        ]
    )
    delegate = Agent(name="delegate", model=model)
    route = handoff(delegate, on_handoff=lambda _context: handoff_calls.append("handoff"))
    agent = Agent(name="triage", model=model, tools=[charge], handoffs=[route])
    hooks = CountingHooks()
    session = _FailingResumeSession()
    paused = await _run_session_resume(
        agent,
        "charge 7 then hand off",
        session,
        streamed,
        hooks,
    )
    state = paused.to_state()
    state.approve(state.get_interruptions()[0])
    return agent, model, session, state, effects, guardrail_calls, hook_calls, handoff_calls, hooks


def _call_pair(items: list[TResponseInputItem], call_id: str) -> list[str]:
    return [
        str(item.get("type"))
        for item in items
        if isinstance(item, dict) and item.get("call_id") == call_id
    ]


def _guardrail_output_info(state: RunState[Any]) -> tuple[list[Any], list[Any]]:
    return (
        [item.output.output_info for item in state._tool_input_guardrail_results],
        [item.output.output_info for item in state._tool_output_guardrail_results],
    )


class _TerminalLifecycleHooks(RunHooks[Any]):
    """Count the agent lifecycle hooks an application can attach its own effects to."""

    def __init__(self) -> None:
        self.starts = 0
        self.ends: list[str] = []

    async def on_agent_start(self, context: Any, agent: Agent[Any]) -> None:
        self.starts += 1

    async def on_agent_end(self, context: Any, agent: Agent[Any], output: Any) -> None:
        self.ends.append(str(output))


async def _terminal_output_session_state(
    streamed: bool,
    session: Session | None = None,
    hooks: RunHooks[Any] | None = None,
):
    """Pause on an approval whose tool output becomes the terminal agent output."""
    effects: list[int] = []

    @tool(needs_approval=True)
    async def charge(amount: int) -> str:
        effects.append(amount)
        return "receipt-7"

    model = ScriptedModel(
        [
            [get_function_tool_call("charge", '{"amount":7}', call_id="charge-1")],
            [get_text_message("retry-final")],
        ]
    )
    agent = Agent(
        name="payment",
        model=model,
        tools=[charge],
        tool_use_behavior="stop_on_first_tool",
    )
    session = session if session is not None else _FailingResumeSession()
    paused = await _run_session_resume(agent, "charge 7", session, streamed, hooks=hooks)
    state = paused.to_state()
    state.approve(state.get_interruptions()[0])
    return agent, model, session, state, effects
