"""TimelineMiddleware hands the model's cache figures (LangChain's
``usage_metadata.input_token_details``) to ``record_usage``: cache breaks are found."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from timeline import CompactionPolicy
from timeline.integrations.langchain import TimelineMiddleware


class NoCacheChat(BaseChatModel):
    """Answers every request, reporting Anthropic-like usage that never reads the cache
    (everything written again)."""

    @property
    def _llm_type(self) -> str:
        return "no-cache"

    def bind_tools(self, tools: Any, **kwargs: Any) -> NoCacheChat:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        sent = sum(len(m.text) for m in messages) // 4 + 2_000
        usage = {
            "input_tokens": sent,
            "output_tokens": 5,
            "total_tokens": sent + 5,
            "input_token_details": {"cache_read": 0, "cache_creation": sent - 10},
        }
        reply = AIMessage(content="Noted.", usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def test_the_middleware_reports_the_cache_figures() -> None:
    """Two turns whose second request read nothing back: the thread's timeline holds the
    figures and a cache break."""
    mw = TimelineMiddleware("memory://", CompactionPolicy(max_tokens=50_000))
    agent = create_agent(NoCacheChat(), [], system_prompt="Be brief. " * 400, middleware=[mw])
    config = {"configurable": {"thread_id": "t"}}
    for i in range(2):
        agent.invoke(
            {"messages": [HumanMessage(f"note {i}: " + "the gateway logs. " * 40)]}, config
        )
    state = mw.timeline("t").snapshot().state
    assert state.usage is not None and state.usage.cache_read_tokens == 0
    assert state.usage.cache_write_tokens is not None and state.usage.cache_write_tokens > 0
    assert [b.cause for b in state.cache_breaks] == ["unknown"]
