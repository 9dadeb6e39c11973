"""Provider-native content through the integrations (#25, on the content model of #24):
hosted/server tools, MCP and provider-native compaction kept as opaque provider blocks
(searchable text, counted, never cut from their pair) and given back exactly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from timeline import CompactionPolicy, Timeline
from timeline._model.native import PROVIDER_COMPACTION, PROVIDER_INPUT, PROVIDER_ITEM

POLICY = CompactionPolicy(max_tokens=100_000)

WEB_SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "zebrafish vault rotation"},
}
COMPUTER_CALL = {
    "type": "computer_call",
    "id": "cu_1",
    "call_id": "call_cu_1",
    "status": "completed",
    "action": {"type": "screenshot"},
    "pending_safety_checks": [],
}
COMPUTER_OUTPUT = {
    "type": "computer_call_output",
    "call_id": "call_cu_1",
    "output": {"type": "computer_screenshot", "image_url": "https://example.com/s.png"},
}
COMPACTION = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"}


def test_openai_session_keeps_hosted_tools_and_compaction_as_provider_blocks() -> None:
    """A web search, a computer call and its output, and a compaction item: stored as
    provider blocks (their text searchable), given back exactly by get_items and sent
    exactly by the input filter."""
    pytest.importorskip("agents")
    from timeline.integrations.openai_agents import TimelineSession

    session = TimelineSession("native", "memory://", POLICY)
    items: list[dict[str, Any]] = [
        COMPACTION,
        {"role": "user", "content": "find the vault"},
        WEB_SEARCH,
        COMPUTER_CALL,
        COMPUTER_OUTPUT,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Found it.", "annotations": []}],
        },
    ]

    async def main() -> list[Any]:
        await session.add_items(items)
        return await session.get_items()

    assert asyncio.run(main()) == items
    types = {b.meta.get("kind"): b.type for b in session.timeline.blocks if b.meta.get("kind")}
    assert types == {
        "compaction": PROVIDER_COMPACTION,
        "web_search_call": PROVIDER_ITEM,
        "computer_call": PROVIDER_ITEM,
        "computer_call_output": PROVIDER_INPUT,
    }
    hits = session.store.search("native", "zebrafish")
    assert hits and hits[0].block.type == PROVIDER_ITEM


def test_langchain_keeps_anthropic_server_tool_and_compaction_blocks() -> None:
    """An AIMessage holding Anthropic server-tool blocks and a compaction block: mirrored
    as provider blocks (the query searchable), and sent back to ChatAnthropic exactly when
    the render rewrites the message."""
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import AIMessage, HumanMessage

    from timeline.integrations.langchain import mirror, to_langchain

    use = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "zebrafish vault rotation"},
    }
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.com/v",
                "title": "Vault",
                "encrypted_content": "EqkB",
                "page_age": None,
            }
        ],
    }
    compaction = {"type": "compaction", "content": "Earlier: the user asked about vaults."}
    text = {"type": "text", "text": "The vault rotates weekly."}
    ai = AIMessage([compaction, use, result, text], id="a1")
    tl = Timeline("lc-native", policy=POLICY)
    assert mirror(tl, [HumanMessage("where is the vault?", id="h1"), ai]) == 2
    kinds = [(b.type, b.meta.get("kind")) for b in tl.blocks if b.meta.get("kind")]
    assert kinds == [
        (PROVIDER_COMPACTION, "compaction"),
        (PROVIDER_ITEM, "server_tool_use"),
        (PROVIDER_ITEM, "web_search_tool_result"),
    ]
    assert any("zebrafish" in b.text for b in tl.blocks)
    out = to_langchain(tl.render(""), system=False, provider="anthropic")
    sent = next(m for m in out if isinstance(m, AIMessage)).content
    assert [p for p in sent if isinstance(p, dict) and p.get("type") != "text"] == [
        compaction,
        use,
        result,
    ]
    assert {"type": "text", "text": "The vault rotates weekly."} in sent
    plain = to_langchain(tl.render(""), system=False)  # another provider: text forms only
    assert all(
        not isinstance(p, dict) or p.get("type") == "text"
        for m in plain
        for p in (m.content if isinstance(m.content, list) else [])
    )


def test_pydantic_ai_keeps_native_tool_and_compaction_parts() -> None:
    """A response holding a native (server) tool's call and return and a compaction part:
    the run's messages come back exactly (the parts, run_id), and the timeline holds the
    parts' text forms (counted, searchable)."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        CompactionPart,
        ModelMessage,
        ModelResponse,
        NativeToolCallPart,
        NativeToolReturnPart,
        TextPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from timeline.integrations.pydantic_ai import TimelineHistory

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            [
                CompactionPart(content="Earlier: vault questions.", provider_name="anthropic"),
                NativeToolCallPart(
                    "web_search", {"query": "zebrafish vault"}, "srv_1", provider_name="anthropic"
                ),
                NativeToolReturnPart(
                    "web_search",
                    [{"title": "Vault", "url": "https://example.com/v"}],
                    "srv_1",
                    provider_name="anthropic",
                ),
                TextPart("The vault rotates weekly."),
            ]
        )

    history = TimelineHistory("pai-native", "memory://", POLICY)
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history)])
    first = agent.run_sync("where is the vault?")
    second = agent.run_sync("and now?", message_history=first.all_messages())
    assert second.all_messages()[: len(first.all_messages())] == first.all_messages()
    assert len(second.new_messages()) == 2
    history.flush(second.all_messages())
    texts = [b.text for b in history.timeline.blocks if b.type == "pydantic_ai.native"]
    assert len(texts) == 6  # three parts per response, two responses
    assert any("zebrafish vault" in t for t in texts)
    assert any("example.com/v" in t for t in texts)
    assert history.store.search("pai-native", "zebrafish")
