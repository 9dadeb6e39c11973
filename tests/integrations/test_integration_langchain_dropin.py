"""TimelineMiddleware as a drop-in for SummarizationMiddleware (#25 items 8-10): the
summary's shape, the summarizer's calls kept internal, orphan tool messages by policy."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from timeline import CompactionPolicy, LLMSummarizer, Timeline
from timeline.integrations import IntegrationError
from timeline.integrations.langchain import (
    OrphanToolMessageWarning,
    TimelineMiddleware,
    mirror,
)

POLICY = CompactionPolicy(max_tokens=300, keep_recent_turns=1)
SUMMARY_OPENING = "Here is a summary of the conversation to date:"


def history(turns: int = 6) -> list[BaseMessage]:
    """``turns`` exchanges of about 45 tokens a message, then a new question: over the
    300-token budget, so the first render compacts."""
    out: list[BaseMessage] = []
    for i in range(turns):
        out.append(HumanMessage(f"question {i} " + "word " * 40, id=f"h{i}"))
        out.append(AIMessage(f"answer {i} " + "reply " * 40, id=f"a{i}"))
    out.append(HumanMessage("again", id="last"))
    return out


def answering(text: str = "Final answer.") -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=text)] * 10))


def test_the_summary_is_its_own_human_message_marked_summarization() -> None:
    """Item 8: the model gets the summary as a separate HumanMessage carrying
    lc_source="summarization" (SummarizationMiddleware's shape), no other message holds
    it, and the state is rewritten as SummarizationMiddleware rewrites it."""
    mw = TimelineMiddleware("memory://", POLICY, default_thread_id="t")
    messages = history()
    update = mw.before_model({"messages": messages}, None)
    assert update is not None
    first, summary, *kept = update["messages"]
    assert isinstance(first, RemoveMessage) and first.id == REMOVE_ALL_MESSAGES
    assert isinstance(summary, HumanMessage)
    assert summary.additional_kwargs == {"lc_source": "summarization"}
    assert summary.text.startswith(SUMMARY_OPENING)
    assert kept == messages[-len(kept) :]  # the kept ones are the state's own objects
    assert all(SUMMARY_OPENING not in m.text for m in kept)

    seen: list[list[BaseMessage]] = []

    class Recording(GenericFakeChatModel):
        def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> Any:
            seen.append(list(messages))
            return super()._generate(messages, *a, **k)

    agent = create_agent(
        Recording(messages=iter([AIMessage("ok")])),
        middleware=[TimelineMiddleware("memory://", POLICY)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": history()}, config)["messages"]
    marked = [m for m in seen[0] if m.additional_kwargs.get("lc_source") == "summarization"]
    assert len(marked) == 1 and isinstance(marked[0], HumanMessage)
    assert marked[0] is not seen[0][-1]  # not folded into the question
    assert seen[0][-1].text == "again"
    assert state[0].additional_kwargs == {"lc_source": "summarization"}
    assert [m.text for m in state[-2:]] == ["again", "ok"]


def test_a_second_run_keeps_one_summary_and_does_not_mirror_it() -> None:
    """The summary message in the state is the timeline's own: mirroring it again adds
    nothing, and the next compaction replaces it instead of stacking a second one."""
    mw = TimelineMiddleware("memory://", POLICY, default_thread_id="t")
    messages = history()
    update = mw.before_model({"messages": messages}, None)
    assert update is not None
    state = list(update["messages"][1:])
    tl = mw.timeline("t")
    before = len(tl.blocks)
    assert mirror(tl, state) == 0
    assert len(tl.blocks) == before
    for i in range(6, 12):
        state += [HumanMessage(f"question {i} " + "word " * 40), AIMessage("fine " * 40)]
    update = mw.before_model({"messages": state}, None)
    assert update is not None
    summaries = [m for m in update["messages"] if SUMMARY_OPENING in m.text]
    assert len(summaries) == 1 and summaries[0] is update["messages"][1]


def _summarizers(model: GenericFakeChatModel) -> list[Any]:
    """A chat model handed over as it is, and a user's LLMSummarizer calling it."""
    return [
        model,
        LLMSummarizer(lambda system, prompt: model.invoke(prompt).text),
    ]


@pytest.mark.parametrize("kind", ["chat model", "LLMSummarizer over a chat model"])
def test_the_summarizers_call_stays_off_the_messages_stream(kind: str) -> None:
    """Item 9: stream_mode="messages" shows the agent's answer and the summary message
    (a state update, as SummarizationMiddleware's), never the summarizer's own tokens."""
    summarizer_model = answering("SUMMARY-TEXT")
    summarizer = _summarizers(summarizer_model)[0 if kind == "chat model" else 1]
    mw = TimelineMiddleware("memory://", POLICY, summarizer=summarizer, default_thread_id="t")
    agent = create_agent(answering(), middleware=[mw])
    parts = [part for part, _ in agent.stream({"messages": history()}, stream_mode="messages")]
    assert "".join(p.text for p in parts if isinstance(p, AIMessage)) == "Final answer."
    summaries = [p for p in parts if isinstance(p, HumanMessage)]
    assert len(summaries) == 1 and summaries[0].text.startswith(SUMMARY_OPENING)
    assert "SUMMARY-TEXT" in mw.timeline("t").blocks[0].text  # the summarizer did run


@pytest.mark.parametrize("kind", ["chat model", "LLMSummarizer over a chat model"])
def test_the_summarizers_call_stays_off_astream_events(kind: str) -> None:
    """Item 9, async: astream_events (v3, run.messages) carries the agent's answer and
    the summary message, not a stream of the summarizer's output."""
    summarizer_model = answering("SUMMARY-TEXT")
    summarizer = _summarizers(summarizer_model)[0 if kind == "chat model" else 1]
    mw = TimelineMiddleware("memory://", POLICY, summarizer=summarizer, default_thread_id="t")
    agent = create_agent(answering(), middleware=[mw])

    async def texts() -> list[str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # v3 is LangChain's beta protocol
            run = await agent.astream_events({"messages": history()}, version="v3")
        out: list[str] = []
        async for message in run.messages:
            text = ""
            async for chunk in message.text:
                text += chunk
            out.append(text)
        return out

    got = asyncio.run(texts())
    assert "Final answer." in got
    assert not any(t.strip() == "SUMMARY-TEXT" for t in got)
    assert all(t.startswith(SUMMARY_OPENING) for t in got if "SUMMARY-TEXT" in t)
    assert "SUMMARY-TEXT" in mw.timeline("t").blocks[0].text


def orphan_state() -> list[BaseMessage]:
    return [
        HumanMessage("hi", id="h0"),
        ToolMessage("stale result", tool_call_id="gone", name="lookup", id="t0"),
        AIMessage("hello", id="a0"),
        HumanMessage("again", id="h1"),
    ]


def test_an_orphan_tool_message_is_dropped_with_a_warning() -> None:
    """Item 10: a ToolMessage whose call is gone is not recorded (a warning names it);
    the agent answers instead of raising."""
    mw = TimelineMiddleware("memory://", POLICY)
    agent = create_agent(answering("fine"), middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "o"}}
    with pytest.warns(OrphanToolMessageWarning, match="'gone'"):
        state = agent.invoke({"messages": orphan_state()}, config)["messages"]
    assert state[-1].text == "fine"
    texts = [b.text for b in mw.timeline("o").blocks]
    assert not any("stale result" in t for t in texts)
    assert any("again" in t for t in texts)


def test_an_orphan_tool_message_kept_as_text_by_policy() -> None:
    """Item 10: orphan_tool_messages="text" records it as a note naming the call."""
    mw = TimelineMiddleware("memory://", POLICY, orphan_tool_messages="text")
    agent = create_agent(answering("fine"), middleware=[mw], checkpointer=InMemorySaver())
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrphanToolMessageWarning)
        agent.invoke({"messages": orphan_state()}, {"configurable": {"thread_id": "o"}})
    notes = [b for b in mw.timeline("o").blocks if "stale result" in b.text]
    assert len(notes) == 1 and "call_id=gone" in notes[0].text
    with pytest.raises(IntegrationError, match=r"orphan_tool_messages must be .* not 'crash'"):
        TimelineMiddleware("memory://", orphan_tool_messages="crash")  # type: ignore[arg-type]
    with pytest.raises(IntegrationError, match=r"on_summary_failure must be .* not 'never'"):
        TimelineMiddleware("memory://", on_summary_failure="never")  # type: ignore[arg-type]


def test_an_orphan_in_a_loaded_timeline_is_dropped_too() -> None:
    """The policy applies to mirroring into any timeline, not only the agent's."""
    tl = Timeline("m", policy=POLICY)
    with pytest.warns(OrphanToolMessageWarning):
        assert mirror(tl, orphan_state()) == 3


def test_the_summarizers_call_is_marked_in_astream_events_v2() -> None:
    """Item 9, astream_events v2 (which shows every run): the summarizer's model call is
    tagged ``nostream`` and carries ``lc_source="summarization"``, as
    SummarizationMiddleware marks its own, so a consumer filters it like theirs; the
    agent's own model call carries neither."""
    summarizer_model = answering("SUMMARY-TEXT")
    mw = TimelineMiddleware("memory://", POLICY, summarizer=summarizer_model, default_thread_id="t")
    agent = create_agent(answering(), middleware=[mw])

    async def starts() -> list[dict[str, Any]]:
        events = agent.astream_events({"messages": history()}, version="v2")
        return [e async for e in events if e["event"] == "on_chat_model_start"]

    runs = asyncio.run(starts())
    assert len(runs) == 2
    summary_run, agent_run = runs
    assert "nostream" in summary_run["tags"]
    assert summary_run["metadata"]["lc_source"] == "summarization"
    assert "nostream" not in agent_run["tags"]
    assert agent_run["metadata"].get("lc_source") != "summarization"


def _marked_internal(config: dict[str, Any]) -> None:
    """A config SummarizationMiddleware gives its own summary call."""
    from langchain.agents.middleware.internal_call_transformer import (
        INTERNAL_CALL_METADATA_KEY,
        internal_call_metadata,
    )

    assert config["metadata"]["lc_source"] == "summarization"
    expected = internal_call_metadata()[INTERNAL_CALL_METADATA_KEY]
    assert config["metadata"][INTERNAL_CALL_METADATA_KEY] == expected
    assert "nostream" in config["tags"]


def test_a_runnable_summarizer_gets_the_summary_calls_config() -> None:
    """A ``Runnable`` summarizer is invoked as an internal call (``lc_source``, the
    internal-call marker, ``nostream``), as SummarizationMiddleware invokes its own."""
    from langchain_core.messages.utils import get_buffer_string
    from langchain_core.runnables import RunnableConfig, RunnableLambda

    configs: list[RunnableConfig] = []

    def summarize(messages: list[BaseMessage], config: RunnableConfig) -> str:
        configs.append(config)
        return get_buffer_string(messages[:1])[:40]

    mw = TimelineMiddleware(
        "memory://", POLICY, summarizer=RunnableLambda(summarize), default_thread_id="t"
    )
    update = mw.before_model({"messages": history()}, None)
    assert update is not None and "Human: question 0 word" in update["messages"][1].text
    assert len(configs) == 1
    _marked_internal(dict(configs[0]))


def test_a_chat_model_summarizers_call_is_marked_internal() -> None:
    """A chat model summarizer is called with the internal-call config too."""
    configs: list[Any] = []

    class Capturing(GenericFakeChatModel):
        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            from langchain_core.runnables.config import ensure_config

            configs.append(ensure_config(config))
            return AIMessage("## Goal\nsummarized")

    summarizer = Capturing(messages=iter([]))
    mw = TimelineMiddleware("memory://", POLICY, summarizer=summarizer, default_thread_id="t")
    assert mw.before_model({"messages": history()}, None) is not None
    assert len(configs) == 1
    _marked_internal(configs[0])


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_summarizer_that_returns_no_str_is_a_type_error(asynchronous: bool) -> None:
    """A summarizer returning anything but a str raises ``TypeError`` naming what it
    returned (with ``on_summary_failure="raise"``; by default the inventory summary
    stands in), the state untouched."""
    if asynchronous:

        async def summarize(messages: list[BaseMessage]) -> Any:
            return None

        got = "NoneType"
    else:

        def summarize(messages: list[BaseMessage]) -> Any:  # type: ignore[misc]
            return AIMessage("not a str")

        got = "AIMessage"
    messages = history()
    raising = TimelineMiddleware(
        "memory://",
        POLICY,
        summarizer=summarize,
        on_summary_failure="raise",
        default_thread_id="t",
    )
    with pytest.raises(TypeError, match=f"`summarizer` must return a str, got {got}"):
        if asynchronous:
            asyncio.run(raising.abefore_model({"messages": messages}, None))
        else:
            raising.before_model({"messages": messages}, None)
    fallback = TimelineMiddleware("memory://", POLICY, summarizer=summarize, default_thread_id="t")
    update = fallback.before_model({"messages": messages}, None)
    assert update is not None and update["messages"][1].text.startswith(SUMMARY_OPENING)
