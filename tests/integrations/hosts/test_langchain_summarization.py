"""Ported from LangChain's own tests: ``tests/unit_tests/agents/middleware/implementations/
test_summarization.py`` of langchain 1.5.2 (https://github.com/langchain-ai/langchain,
libs/langchain_v1; MIT licence (LICENSES.md), Copyright (c) LangChain, Inc.).

Only the construction changed: every ``SummarizationMiddleware(...)`` of the original
builds a ``TimelineMiddleware`` with the same settings (``summarization_middleware``, in
``langchain_port.py``, maps them); ``_skip_retry`` has nothing to bypass (the timeline's
summarizer does not retry). The tests and their assertions are LangChain's own. Ported:
the tests of the middleware's contract with the agent (``before_model`` /
``abefore_model`` updates, failures, streaming, the ``summarizer`` argument); the tests of
``SummarizationMiddleware``'s private helpers and its token arithmetic have no
counterpart and are not ported (docs/integrations.md lists them).
"""

from collections.abc import Iterable
from typing import Any

import pytest
from langchain.agents import AgentState, create_agent
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import ModelProfile
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    MessageLikeRepresentation,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from pydantic import Field
from typing_extensions import override

from tests.integrations.hosts.langchain_model import FakeToolCallingModel
from tests.integrations.hosts.langchain_port import summarization_middleware


def _skip_retry(middleware: Any) -> None:
    """The original bypasses SummarizationMiddleware's retry wrapper; nothing to bypass."""


class MockChatModel(BaseChatModel):
    """Mock chat model for testing."""

    @override
    def invoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        return AIMessage(content="Generated summary")

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Summary"))])

    @property
    def _llm_type(self) -> str:
        return "mock"


class ProfileChatModel(BaseChatModel):
    """Mock chat model with profile for testing."""

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Summary"))])

    profile: ModelProfile | None = ModelProfile(max_input_tokens=1000)

    @property
    def _llm_type(self) -> str:
        return "mock"


def test_summarization_middleware_no_summarization_cases() -> None:
    """Test SummarizationMiddleware when summarization is not needed or disabled."""
    model = FakeToolCallingModel()
    middleware = summarization_middleware(model=model, trigger=("tokens", 1000))

    # Test when summarization is disabled
    middleware_disabled = summarization_middleware(model=model, trigger=None)
    state = AgentState[Any](messages=[HumanMessage(content="Hello"), AIMessage(content="Hi")])
    result = middleware_disabled.before_model(state, Runtime())
    assert result is None

    # Test when token count is below threshold
    def mock_token_counter(_: Iterable[MessageLikeRepresentation]) -> int:
        return 500  # Below threshold

    middleware.token_counter = mock_token_counter
    result = middleware.before_model(state, Runtime())
    assert result is None


class _AlwaysFailingModel(BaseChatModel):
    """Chat model whose sync and async summary calls always raise."""

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        msg = "429 Too Many Requests"
        raise RuntimeError(msg)

    @override
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        msg = "429 Too Many Requests"
        raise RuntimeError(msg)

    @property
    def _llm_type(self) -> str:
        return "mock"


def test_summarization_middleware_before_model_raises_on_summary_failure() -> None:
    """A failed summary generation must raise, never fabricate a summary or delete history."""
    middleware = summarization_middleware(
        model=_AlwaysFailingModel(), trigger=("messages", 2), keep=("messages", 1)
    )
    _skip_retry(middleware)
    messages: list[AnyMessage] = [
        HumanMessage(content="hi", id="h0"),
        AIMessage(content="hello", id="a0"),
        HumanMessage(content="how are you", id="h1"),
    ]
    state = AgentState[Any](messages=messages)

    with pytest.raises(RuntimeError, match="429 Too Many Requests"):
        middleware.before_model(state, Runtime())

    # The original message list is untouched - no fabricated summary, no deletion.
    assert state["messages"] == messages


async def test_summarization_middleware_abefore_model_raises_on_summary_failure() -> None:
    """Async: same raise-on-failure behavior as `before_model`."""
    middleware = summarization_middleware(
        model=_AlwaysFailingModel(), trigger=("messages", 2), keep=("messages", 1)
    )
    _skip_retry(middleware)
    messages: list[AnyMessage] = [
        HumanMessage(content="hi", id="h0"),
        AIMessage(content="hello", id="a0"),
        HumanMessage(content="how are you", id="h1"),
    ]
    state = AgentState[Any](messages=messages)

    with pytest.raises(RuntimeError, match="429 Too Many Requests"):
        await middleware.abefore_model(state, Runtime())

    assert state["messages"] == messages


def test_summarization_middleware_e2e_failure_raises_without_corrupting_history() -> None:
    """End-to-end regression test.

    Verifies that exhausted summary retries raise an error without corrupting
    checkpointed history, and that summarization succeeds on a later invocation
    once the model recovers.
    """

    class TemporarilyFailingSummaryModel(BaseChatModel):
        """Summary-only model that fails until `working` is set to `True`."""

        working: bool = Field(default=False)

        @override
        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: CallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> ChatResult:
            if not self.working:
                msg = "429 Too Many Requests (simulated persistent failure)"
                raise RuntimeError(msg)
            summary = AIMessage(content="Summary of the conversation so far.")
            return ChatResult(generations=[ChatGeneration(message=summary)])

        @property
        def _llm_type(self) -> str:
            return "mock"

    main_model = FakeToolCallingModel()
    summary_model = TemporarilyFailingSummaryModel()
    middleware = summarization_middleware(
        model=summary_model, trigger=("messages", 6), keep=("messages", 2)
    )
    _skip_retry(middleware)

    agent = create_agent(
        model=main_model,
        tools=[],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "e2e-summary-failure"}}

    # Build up history below the ("messages", 6) trigger threshold.
    for i in range(3):
        agent.invoke({"messages": [HumanMessage(f"turn {i}")]}, config)

    messages_below_threshold = agent.get_state(config).values["messages"]
    assert len(messages_below_threshold) == 6

    # This turn triggers summarization, which fails and raises. The new human
    # message is checkpointed, but no AI response, summary, or message removal occurs.
    with pytest.raises(RuntimeError, match="429 Too Many Requests"):
        agent.invoke({"messages": [HumanMessage("turn 3")]}, config)

    messages_after_failed_summary = agent.get_state(config).values["messages"]
    assert messages_after_failed_summary[:-1] == messages_below_threshold
    assert messages_after_failed_summary[-1].content == "turn 3"
    assert not any(
        "Error generating summary" in (m.content or "") for m in messages_after_failed_summary
    )

    # Once the summarizer is fixed, retrying the same turn must succeed and
    # actually summarize, proving the earlier failure didn't corrupt anything.
    summary_model.working = True
    agent.invoke({"messages": [HumanMessage("turn 3")]}, config)

    messages_after_recovered_summary = agent.get_state(config).values["messages"]
    assert len(messages_after_recovered_summary) < len(messages_after_failed_summary)
    assert any(
        "summary of the conversation" in (m.content or "").lower()
        for m in messages_after_recovered_summary
    )
    assert not any(m.content == "turn 0" for m in messages_after_recovered_summary), (
        "history should actually be trimmed once summarization succeeds"
    )


def test_summarization_middleware_profile_inference_triggers_summary() -> None:
    """Ensure automatic profile inference triggers summarization when limits are exceeded."""

    def token_counter(messages: Iterable[MessageLikeRepresentation]) -> int:
        return len(list(messages)) * 200

    middleware = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.81),
        keep=("fraction", 0.5),
        token_counter=token_counter,
    )

    state = AgentState[Any](
        messages=[
            HumanMessage(content="Message 1"),
            AIMessage(content="Message 2"),
            HumanMessage(content="Message 3"),
            AIMessage(content="Message 4"),
        ]
    )

    # Test we don't engage summarization
    # we have total_tokens = 4 * 200 = 800
    # and max_input_tokens = 1000
    # since 0.81 * 1000 == 810 > 800 -> summarization not triggered
    result = middleware.before_model(state, Runtime())
    assert result is None

    # Engage summarization
    # since 0.80 * 1000 == 800 <= 800
    middleware = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.80),
        keep=("fraction", 0.5),
        token_counter=token_counter,
    )
    result = middleware.before_model(state, Runtime())
    assert result is not None
    assert isinstance(result["messages"][0], RemoveMessage)
    summary_message = result["messages"][1]
    assert isinstance(summary_message, HumanMessage)
    assert summary_message.text.startswith("Here is a summary of the conversation")
    assert len(result["messages"][2:]) == 2  # Preserved messages
    assert [message.content for message in result["messages"][2:]] == [
        "Message 3",
        "Message 4",
    ]

    # With keep=("fraction", 0.6) the target token allowance becomes 600,
    # so the cutoff shifts to keep the last three messages instead of two.
    middleware = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.80),
        keep=("fraction", 0.6),
        token_counter=token_counter,
    )
    result = middleware.before_model(state, Runtime())
    assert result is not None
    assert [message.content for message in result["messages"][2:]] == [
        "Message 2",
        "Message 3",
        "Message 4",
    ]

    # Once keep=("fraction", 0.8) the inferred limit equals the full
    # context (target tokens = 800), so token-based retention keeps everything
    # and summarization is skipped entirely.
    middleware = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.80),
        keep=("fraction", 0.8),
        token_counter=token_counter,
    )
    assert middleware.before_model(state, Runtime()) is None

    # Test with tokens_to_keep as absolute int value
    middleware_int = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.80),
        keep=("tokens", 400),  # Keep exactly 400 tokens (2 messages)
        token_counter=token_counter,
    )
    result = middleware_int.before_model(state, Runtime())
    assert result is not None
    assert [message.content for message in result["messages"][2:]] == [
        "Message 3",
        "Message 4",
    ]

    # Test with tokens_to_keep as larger int value
    middleware_int_large = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.80),
        keep=("tokens", 600),  # Keep 600 tokens (3 messages)
        token_counter=token_counter,
    )
    result = middleware_int_large.before_model(state, Runtime())
    assert result is not None
    assert [message.content for message in result["messages"][2:]] == [
        "Message 2",
        "Message 3",
        "Message 4",
    ]


def test_summarization_middleware_token_retention_preserves_ai_tool_pairs() -> None:
    """Ensure token retention preserves AI/Tool message pairs together."""

    def token_counter(messages: Iterable[MessageLikeRepresentation]) -> int:
        return sum(len(getattr(message, "content", "")) for message in messages)

    middleware = summarization_middleware(
        model=ProfileChatModel(),
        trigger=("fraction", 0.1),
        keep=("fraction", 0.5),
        token_counter=token_counter,
    )

    # Total tokens: 300 + 200 + 50 + 180 + 160 = 890
    # Target keep: 500 tokens (50% of 1000)
    # Binary search finds cutoff around index 2 (ToolMessage)
    # We move back to index 1 to preserve the AIMessage with its ToolMessage
    messages: list[AnyMessage] = [
        HumanMessage(content="H" * 300),
        AIMessage(
            content="A" * 200,
            tool_calls=[{"name": "test", "args": {}, "id": "call-1"}],
        ),
        ToolMessage(content="T" * 50, tool_call_id="call-1"),
        HumanMessage(content="H" * 180),
        HumanMessage(content="H" * 160),
    ]

    state = AgentState[Any](messages=messages)
    result = middleware.before_model(state, Runtime())
    assert result is not None

    preserved_messages = result["messages"][2:]
    # We move the cutoff back to include the AIMessage with its ToolMessage
    # So we preserve messages from index 1 onward (AI + Tool + Human + Human)
    assert preserved_messages == messages[1:]

    # Verify the AI/Tool pair is preserved together
    assert isinstance(preserved_messages[0], AIMessage)
    assert preserved_messages[0].tool_calls
    assert isinstance(preserved_messages[1], ToolMessage)
    assert preserved_messages[1].tool_call_id == preserved_messages[0].tool_calls[0]["id"]


def test_summarization_middleware_full_workflow() -> None:
    """Test SummarizationMiddleware complete summarization workflow."""
    with pytest.warns(DeprecationWarning, match="messages_to_keep is deprecated"):
        # keep test for functionality
        middleware = summarization_middleware(
            model=MockChatModel(), max_tokens_before_summary=1000, messages_to_keep=2
        )

    # Mock high token count to trigger summarization
    def mock_token_counter(_: Iterable[MessageLikeRepresentation]) -> int:
        return 1500  # Above threshold

    middleware.token_counter = mock_token_counter

    messages: list[AnyMessage] = [
        HumanMessage(content="1"),
        HumanMessage(content="2"),
        HumanMessage(content="3"),
        HumanMessage(content="4"),
        HumanMessage(content="5"),
    ]

    state = AgentState[Any](messages=messages)
    result = middleware.before_model(state, Runtime())

    assert result is not None
    assert "messages" in result
    assert len(result["messages"]) > 0

    # Should have RemoveMessage for cleanup
    assert isinstance(result["messages"][0], RemoveMessage)
    assert result["messages"][0].id == REMOVE_ALL_MESSAGES

    # Should have summary message
    summary_message = None
    for msg in result["messages"]:
        if isinstance(msg, HumanMessage) and "summary of the conversation" in msg.content:
            summary_message = msg
            break

    assert summary_message is not None
    assert "Generated summary" in summary_message.content


async def test_summarization_middleware_full_workflow_async() -> None:
    """Test SummarizationMiddleware complete summarization workflow."""

    class MockModel(BaseChatModel):
        @override
        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: CallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Blep"))])

        @override
        async def _agenerate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: AsyncCallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Blip"))])

        @property
        def _llm_type(self) -> str:
            return "mock"

    middleware = summarization_middleware(
        model=MockModel(), trigger=("tokens", 1000), keep=("messages", 2)
    )

    # Mock high token count to trigger summarization
    def mock_token_counter(_: Iterable[MessageLikeRepresentation]) -> int:
        return 1500  # Above threshold

    middleware.token_counter = mock_token_counter

    messages: list[AnyMessage] = [
        HumanMessage(content="1"),
        HumanMessage(content="2"),
        HumanMessage(content="3"),
        HumanMessage(content="4"),
        HumanMessage(content="5"),
    ]

    state = AgentState[Any](messages=messages)
    result = await middleware.abefore_model(state, Runtime())

    assert result is not None
    assert "messages" in result
    assert len(result["messages"]) > 0

    expected_types = ["remove", "human", "human", "human"]
    actual_types = [message.type for message in result["messages"]]
    assert actual_types == expected_types
    assert [message.content for message in result["messages"][2:]] == ["4", "5"]

    summary_message = result["messages"][1]
    assert "Blip" in summary_message.text


def test_summarization_middleware_keep_messages() -> None:
    """Test SummarizationMiddleware with keep parameter specifying messages."""
    # Test that summarization is triggered when message count reaches threshold
    middleware = summarization_middleware(
        model=MockChatModel(), trigger=("messages", 5), keep=("messages", 2)
    )

    # Below threshold - no summarization
    messages_below: list[AnyMessage] = [
        HumanMessage(content="1"),
        HumanMessage(content="2"),
        HumanMessage(content="3"),
        HumanMessage(content="4"),
    ]
    state_below = AgentState[Any](messages=messages_below)
    result = middleware.before_model(state_below, Runtime())
    assert result is None

    # At threshold - should trigger summarization
    messages_at_threshold: list[AnyMessage] = [
        HumanMessage(content="1"),
        HumanMessage(content="2"),
        HumanMessage(content="3"),
        HumanMessage(content="4"),
        HumanMessage(content="5"),
    ]
    state_at = AgentState[Any](messages=messages_at_threshold)
    result = middleware.before_model(state_at, Runtime())
    assert result is not None
    assert "messages" in result
    expected_types = ["remove", "human", "human", "human"]
    actual_types = [message.type for message in result["messages"]]
    assert actual_types == expected_types
    assert [message.content for message in result["messages"][2:]] == ["4", "5"]

    # Above threshold - should also trigger summarization
    messages_above: list[AnyMessage] = [*messages_at_threshold, HumanMessage(content="6")]
    state_above = AgentState[Any](messages=messages_above)
    result = middleware.before_model(state_above, Runtime())
    assert result is not None
    assert "messages" in result
    expected_types = ["remove", "human", "human", "human"]
    actual_types = [message.type for message in result["messages"]]
    assert actual_types == expected_types
    assert [message.content for message in result["messages"][2:]] == ["5", "6"]

    # Test with both parameters disabled
    middleware_disabled = summarization_middleware(model=MockChatModel(), trigger=None)
    result = middleware_disabled.before_model(state_above, Runtime())
    assert result is None


def test_summarization_middleware_multiple_triggers() -> None:
    """Test middleware with multiple trigger conditions."""
    # Test with multiple triggers - should activate when ANY condition is met
    middleware = summarization_middleware(
        model=MockChatModel(),
        trigger=[("messages", 10), ("tokens", 500)],
        keep=("messages", 2),
    )

    # Mock token counter to return low count
    def mock_low_tokens(_: Iterable[MessageLikeRepresentation]) -> int:
        return 100

    middleware.token_counter = mock_low_tokens

    # Should not trigger - neither condition met
    messages: list[AnyMessage] = [HumanMessage(content=str(i)) for i in range(5)]
    state = AgentState[Any](messages=messages)
    result = middleware.before_model(state, Runtime())
    assert result is None

    # Should trigger - message count threshold met
    messages = [HumanMessage(content=str(i)) for i in range(10)]
    state = AgentState[Any](messages=messages)
    result = middleware.before_model(state, Runtime())
    assert result is not None

    # Test token trigger
    def mock_high_tokens(_: Iterable[MessageLikeRepresentation]) -> int:
        return 600

    middleware.token_counter = mock_high_tokens
    messages = [HumanMessage(content=str(i)) for i in range(5)]
    state = AgentState[Any](messages=messages)
    result = middleware.before_model(state, Runtime())
    assert result is not None


def test_summarization_middleware_skips_when_no_safe_cutoff() -> None:
    """Do not summarize when message retention leaves no older history to drop."""

    def token_counter(_: Iterable[MessageLikeRepresentation]) -> int:
        return 1500

    middleware = summarization_middleware(
        model=MockChatModel(),
        trigger=("tokens", 1000),
        keep=("messages", 1),
        token_counter=token_counter,
    )
    state = AgentState[Any](messages=[HumanMessage(content="Current request")])

    assert middleware.before_model(state, Runtime()) is None


async def test_summarization_middleware_skips_when_no_safe_cutoff_async() -> None:
    """Do not summarize when async message retention has no older history to drop."""

    def token_counter(_: Iterable[MessageLikeRepresentation]) -> int:
        return 1500

    middleware = summarization_middleware(
        model=MockChatModel(),
        trigger=("tokens", 1000),
        keep=("messages", 1),
        token_counter=token_counter,
    )
    state = AgentState[Any](messages=[HumanMessage(content="Current request")])

    assert await middleware.abefore_model(state, Runtime()) is None


def test_backward_compatibility_tuple_trigger() -> None:
    """Test backward compatibility with existing tuple-based triggers."""
    model = FakeToolCallingModel()

    # Single tuple trigger
    middleware_single = summarization_middleware(
        model=model,
        trigger=("tokens", 1000),
        keep=("messages", 1),
    )

    def token_counter_high(_messages: Iterable[MessageLikeRepresentation]) -> int:
        return 1500

    middleware_single.token_counter = token_counter_high
    state = AgentState(messages=[HumanMessage(content=str(i)) for i in range(3)])
    result = middleware_single.before_model(state, Runtime())
    assert result is not None, "Single tuple trigger should work"

    # List of tuples trigger
    middleware_list = summarization_middleware(
        model=model,
        trigger=[("tokens", 1000), ("messages", 5)],
        keep=("messages", 2),
    )

    # Should trigger with high tokens (first condition met)
    middleware_list.token_counter = token_counter_high
    state = AgentState(messages=[HumanMessage(content=str(i)) for i in range(3)])
    result = middleware_list.before_model(state, Runtime())
    assert result is not None, "List of tuples should trigger when any condition met"

    # Should trigger with many messages (second condition met)
    def token_counter_low(_messages: Iterable[MessageLikeRepresentation]) -> int:
        return 100

    middleware_list.token_counter = token_counter_low
    state = AgentState(messages=[HumanMessage(content=str(i)) for i in range(6)])
    result = middleware_list.before_model(state, Runtime())
    assert result is not None, "List of tuples should trigger when second condition met"


def test_empty_list_trigger_never_summarizes() -> None:
    """An empty trigger list normalizes to no conditions and never summarizes."""
    middleware = summarization_middleware(
        model=FakeToolCallingModel(),
        trigger=[],
        token_counter=lambda _: 10_000,
    )
    assert middleware._trigger_conditions == []
    state = AgentState(messages=[HumanMessage(content=str(i)) for i in range(50)])
    assert middleware.before_model(state, Runtime()) is None


class TestSummarizationStreamingEndToEnd:
    """End-to-end: a real summarization call must not leak into `run.messages`."""

    async def test_summarization_call_excluded_from_messages_projection(self) -> None:
        """Drives `create_agent` with a triggered summarization mid-run.

        Uses `GenericFakeChatModel` for both the main agent and the
        summarizer (it actually streams via `_astream`, unlike
        `FakeToolCallingModel`), then asserts `run.messages` carries no
        stream of the summarizer's own output.
        """
        main_model = GenericFakeChatModel(messages=iter([AIMessage(content="Final answer.")]))
        summarizer_model = GenericFakeChatModel(
            messages=iter([AIMessage(content="Summary of prior turns.")])
        )
        middleware = summarization_middleware(
            model=summarizer_model, trigger=("messages", 1), keep=("messages", 1)
        )

        agent = create_agent(model=main_model, tools=[], middleware=[middleware])

        run = await agent.astream_events(
            {
                "messages": [
                    HumanMessage("hi"),
                    HumanMessage("there"),
                    HumanMessage("again"),
                ]
            },
            version="v3",
        )

        texts: list[str] = []
        async for msg in run.messages:
            text = ""
            async for chunk in msg.text:
                text += chunk
            texts.append(text)

        assert "Summary of prior turns." not in texts


def test_summary_call_stays_off_the_messages_stream() -> None:
    summarizer = GenericFakeChatModel(messages=iter([AIMessage(content="SUMMARY-TEXT")]))
    middleware = summarization_middleware(
        model=summarizer, trigger=("messages", 3), keep=("messages", 1)
    )
    agent = create_agent(
        model=GenericFakeChatModel(messages=iter([AIMessage(content="Final answer.")])),
        middleware=[middleware],
    )

    parts = [
        part
        for part, _ in agent.stream(
            {"messages": [HumanMessage("hi"), AIMessage("hello"), HumanMessage("again")]},
            stream_mode="messages",
        )
    ]

    assert any("SUMMARY-TEXT" in part.text for part in parts if isinstance(part, HumanMessage))
    assert "".join(part.text for part in parts if isinstance(part, AIMessage)) == "Final answer."


def test_summarizer_replaces_model_call() -> None:
    """A `summarizer` writes the summary; the model and `summary_prompt` are not used."""
    received: list[list[AnyMessage]] = []

    def summarizer(messages: list[AnyMessage]) -> str:
        received.append(messages)
        return "  Custom summary  "

    middleware = summarization_middleware(
        model=_AlwaysFailingModel(),
        trigger=("messages", 3),
        keep=("messages", 1),
        summary_prompt="unused {messages}",
        summarizer=summarizer,
    )
    messages: list[AnyMessage] = [
        HumanMessage(content="hi", id="h0"),
        AIMessage(content="hello", id="a0"),
        HumanMessage(content="how are you", id="h1"),
    ]

    result = middleware.before_model(AgentState[Any](messages=messages), Runtime())

    assert result is not None
    assert received == [messages[:2]]
    assert isinstance(result["messages"][1], HumanMessage)
    assert result["messages"][1].text.endswith("Custom summary")
    assert result["messages"][2:] == messages[2:]


async def test_summarizer_async() -> None:
    """Async invocation uses the summarizer's async implementation."""

    async def summarize(messages: list[AnyMessage]) -> str:
        return f"{len(messages)} messages"

    middleware = summarization_middleware(
        model=_AlwaysFailingModel(),
        trigger=("messages", 3),
        keep=("messages", 1),
        summarizer=summarize,
    )
    messages: list[AnyMessage] = [
        HumanMessage(content="hi", id="h0"),
        AIMessage(content="hello", id="a0"),
        HumanMessage(content="how are you", id="h1"),
    ]

    result = await middleware.abefore_model(AgentState[Any](messages=messages), Runtime())

    assert result is not None
    assert result["messages"][1].text.endswith("2 messages")


def test_summarizer_errors_propagate() -> None:
    """Errors raised by the summarizer propagate and leave history untouched."""

    def summarizer(_: list[AnyMessage]) -> str:
        msg = "summarizer down"
        raise RuntimeError(msg)

    middleware = summarization_middleware(
        model=MockChatModel(),
        trigger=("messages", 2),
        keep=("messages", 1),
        summarizer=summarizer,
    )
    messages: list[AnyMessage] = [
        HumanMessage(content="hi", id="h0"),
        AIMessage(content="hello", id="a0"),
    ]
    state = AgentState[Any](messages=messages)

    with pytest.raises(RuntimeError, match="summarizer down"):
        middleware.before_model(state, Runtime())
    assert state["messages"] == messages
