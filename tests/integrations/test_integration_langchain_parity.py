"""Where TimelineMiddleware keeps other messages than LangChain's own
SummarizationMiddleware for the settings docs/integrations.md maps onto each other: each
difference listed there, shown side by side with the real SummarizationMiddleware on
the same messages and the same token counts (one token a character)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents.middleware.summarization import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from timeline import CompactionPolicy
from timeline.integrations.langchain import TimelineMiddleware


class Chars:
    """One token a character, as the host's tests count."""

    def count(self, text: str) -> int:
        return len(text)


def theirs(messages: Sequence[BaseMessage], **settings: Any) -> list[str] | None:
    """What SummarizationMiddleware keeps after its summary (None: no summary)."""
    model = GenericFakeChatModel(messages=iter([AIMessage("summary")] * 3))
    mw = SummarizationMiddleware(
        model=model,
        token_counter=lambda ms: sum(len(str(m.content)) for m in ms),
        **settings,
    )
    update = mw.before_model({"messages": list(messages)}, None)  # type: ignore[arg-type]
    return None if update is None else [str(m.content)[:1] for m in update["messages"][2:]]


def ours(messages: Sequence[BaseMessage], policy: CompactionPolicy) -> list[str] | None:
    """What TimelineMiddleware keeps after its summary (None: no summary)."""
    mw = TimelineMiddleware(
        "memory://",
        policy,
        token_counter=Chars(),
        summarizer=lambda ms: "summary",
        default_thread_id="t",
    )
    update = mw.before_model({"messages": list(messages)}, None)
    return None if update is None else [str(m.content)[:1] for m in update["messages"][2:]]


def tokens_policy(keep: int) -> CompactionPolicy:
    """``trigger=("tokens", 5000), keep=("tokens", keep)`` as the docs map them."""
    return CompactionPolicy(
        max_tokens=10_000, trigger_ratio=0.5, keep_ratio=0.4, keep_recent_tokens=keep
    )


def test_a_tool_pair_at_the_keep_target_moves_the_cut_later() -> None:
    """Keeping a call with its result, the cut moves later (keeping less than the
    target), where SummarizationMiddleware moves it earlier (keeping more)."""
    call = {"name": "lookup", "args": {}, "id": "c1"}
    messages = [
        HumanMessage("H" * 3000),
        AIMessage("A" * 2000, tool_calls=[call]),
        ToolMessage("T" * 500, tool_call_id="c1"),
        HumanMessage("h" * 1800),
        HumanMessage("g" * 1600),
    ]
    assert theirs(messages, trigger=("tokens", 5000), keep=("tokens", 5000)) == [
        "A",
        "T",
        "h",
        "g",
    ]
    assert ours(messages, tokens_policy(5000)) == ["h", "g"]


def test_a_turn_start_wins_over_the_token_target() -> None:
    """A cut at the start of a turn is preferred when it keeps at least half of the
    target: two messages are kept where three would fit."""
    messages = [
        HumanMessage("H" * 2100),
        AIMessage("A" * 2100),
        HumanMessage("h" * 2100),
        AIMessage("a" * 2100),
    ]
    assert theirs(messages, trigger=("tokens", 5000), keep=("tokens", 7000)) == ["A", "h", "a"]
    assert ours(messages, tokens_policy(7000)) == ["h", "a"]


@pytest.mark.parametrize(("keep", "their_kept"), [(2, ["4", "5"]), (4, ["2", "3", "4", "5"])])
def test_the_block_trigger_bounds_what_is_kept(keep: int, their_kept: list[str]) -> None:
    """Under ``max_blocks`` what stays is bounded by ``keep_ratio * max_blocks`` blocks,
    whatever ``keep_recent_turns`` asks: ``trigger=("messages", 5)`` as ``max_blocks=8``
    keeps five blocks (three of these one-message turns, the cut at the third one's
    prompt) for ``keep=("messages", 2)`` and for ``("messages", 4)`` alike."""
    messages = [HumanMessage(str(i)) for i in range(1, 6)]
    assert theirs(messages, trigger=("messages", 5), keep=("messages", keep)) == their_kept
    policy = CompactionPolicy(max_tokens=100_000, max_blocks=8, keep_recent_turns=keep)
    assert ours(messages, policy) == ["3", "4", "5"]


def test_an_async_summarizer_runs_on_the_sync_path() -> None:
    """An async summarizer given to the sync hook runs (the timeline awaits it off the
    caller's thread), where SummarizationMiddleware raises ``TypeError``."""

    async def summarize(messages: list[BaseMessage]) -> str:
        await asyncio.sleep(0)
        return f"{len(messages)} messages summarized"

    messages = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("how are you")]
    host = SummarizationMiddleware(
        model=GenericFakeChatModel(messages=iter([])),
        summarizer=summarize,
        trigger=("messages", 3),
        keep=("messages", 1),
    )
    with pytest.raises(TypeError, match="coroutine function synchronously"):
        host.before_model({"messages": messages}, None)  # type: ignore[arg-type]
    policy = CompactionPolicy(max_tokens=100_000, max_blocks=4, keep_recent_turns=1)
    mw = TimelineMiddleware("memory://", policy, summarizer=summarize, default_thread_id="t")
    update = mw.before_model({"messages": messages}, None)
    assert update is not None
    assert update["messages"][1].text.endswith("2 messages summarized")
