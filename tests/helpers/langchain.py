"""A recording LangChain model and the checks of the requests it got."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import Field

LOREM = " lorem"


class Recording(GenericFakeChatModel):
    """Answers from its script; records every request it was sent."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Recording:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def recording(*replies: AIMessage) -> Recording:
    return Recording(messages=iter(replies))


def check_request(messages: list[BaseMessage]) -> None:
    """What every provider requires: each tool message answers a call of the AI
    message right before it (or of the tool messages following that one), and every
    call is answered before anything else comes."""
    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in open_calls, f"{m.tool_call_id} answers no open call"
            open_calls.discard(m.tool_call_id)
            continue
        assert not open_calls, f"calls {open_calls} unanswered before a {m.type} message"
        if isinstance(m, AIMessage):
            open_calls = {c["id"] for c in m.tool_calls if c["id"]}
    assert not open_calls


@tool
def search(i: int) -> str:
    """Search the archive."""
    return "r" + LOREM * 50
