"""ModelReply converts every reply kind: server tools, citations, MCP, compaction, audio,
image generation..., in the order the provider sent them, usage and stop reasons too;
the blocks go back to their provider exactly and the driver appends them in order."""

from __future__ import annotations

from typing import Any

from anthropic.types import Message
from anthropic.types.beta import BetaMessage
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import HeuristicCounter, Timeline, blocks
from timeline._driver import ModelReply, ReactDriver
from timeline._formats.reply import reply_blocks

SEARCH: list[dict[str, Any]] = [
    {"type": "text", "text": "Let me search."},
    {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "paris weather"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://w.io",
                "title": "Paris",
                "encrypted_content": "Eo4U",
                "page_age": "1 day ago",
            }
        ],
    },
    {
        "type": "text",
        "text": "Sunny.",
        "citations": [
            {
                "type": "web_search_result_location",
                "url": "https://w.io",
                "title": "Paris",
                "encrypted_index": "Eo8B",
                "cited_text": "sunny all day",
            }
        ],
    },
]


def _message(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0},
        },
    }


def _timeline(reply: ModelReply) -> Timeline:
    tl = Timeline("r", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("weather?"))
    tl.extend(reply_blocks(reply))
    return tl


def _plain(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in part.items() if k != "cache_control"} for part in content]


def test_anthropic_web_search_reply_in_order() -> None:
    """Server tool use, its result and the cited text convert in order and go back to
    Anthropic exactly; text joins the texts; other providers get valid payloads."""
    reply = ModelReply.from_anthropic(Message.model_validate(_message(SEARCH)))
    assert reply.text == "Let me search.\n\nSunny."
    assert reply.reasoning == ()  # the cited text keeps its native form; not reasoning
    assert [b.type for b in reply.content] == [
        "assistant.completion",
        "provider.item",
        "provider.item",
        "assistant.completion",
    ]
    view = _timeline(reply).render("")
    assert _plain(view.to_anthropic()["messages"][1]["content"]) == SEARCH
    assert not anthropic_errors(view.to_anthropic())
    assert not chat_errors(view.to_openai())
    assert not responses_errors(view.to_openai_responses())


def test_anthropic_pause_turn_mcp_and_compaction() -> None:
    """A beta message with compaction, MCP use and result converts; the stop reason
    (pause_turn) is kept."""
    content = [
        {"type": "compaction", "content": "Earlier we set up the repo."},
        {
            "type": "mcp_tool_use",
            "id": "mcptoolu_1",
            "name": "lookup",
            "server_name": "crm",
            "input": {"q": "z"},
        },
        {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_1",
            "is_error": False,
            "content": [{"type": "text", "text": "found z"}],
        },
    ]
    reply = ModelReply.from_anthropic(BetaMessage.model_validate(_message(content, "pause_turn")))
    assert reply.finish_reason == "pause_turn"
    assert [b.type for b in reply.content] == [
        "provider.compaction",
        "provider.item",
        "provider.item",
    ]
    view = _timeline(reply).render("")
    assert _plain(view.to_anthropic()["messages"][1]["content"]) == content
    assert not anthropic_errors(view.to_anthropic())


RESPONSE_OUTPUT: list[dict[str, Any]] = [
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
    {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "paris weather"},
    },
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "Sunny.",
                "annotations": [
                    {
                        "type": "url_citation",
                        "start_index": 0,
                        "end_index": 6,
                        "url": "https://w.io",
                        "title": "Paris",
                    }
                ],
            }
        ],
    },
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAB"},
]


def test_responses_web_search_citations_and_compaction() -> None:
    """Reasoning, a web search call, a message with url citations and a compaction item
    convert in order and go back to Responses exactly."""
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-5",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": RESPONSE_OUTPUT,
        "usage": {
            "input_tokens": 30,
            "output_tokens": 9,
            "total_tokens": 39,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 3},
        },
    }
    reply = ModelReply.from_openai_responses(Response.model_validate(response))
    assert (reply.text, reply.finish_reason) == ("Sunny.", "stop")
    assert [b.type for b in reply.content] == [
        "assistant.reasoning",
        "provider.item",
        "assistant.completion",
        "provider.compaction",
    ]
    items = _timeline(reply).render("").to_openai_responses()
    assert items[1:] == RESPONSE_OUTPUT
    assert not responses_errors(items)
    view = _timeline(reply).render("")
    assert not anthropic_errors(view.to_anthropic()) and not chat_errors(view.to_openai())


def test_chat_audio_reply() -> None:
    """An audio reply keeps its id (what goes back) and its transcript as text."""
    completion = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-audio",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "audio": {
                        "id": "audio_1",
                        "data": "UklGRg==",
                        "expires_at": 1,
                        "transcript": "Hello there.",
                    },
                },
            }
        ],
    }
    reply = ModelReply.from_openai_chat(ChatCompletion.model_validate(completion))
    view = _timeline(reply).render("")
    assert view.to_openai()[-1] == {
        "role": "assistant",
        "content": None,
        "audio": {"id": "audio_1"},
    }
    assert "Hello there." in view.to_anthropic()["messages"][1]["content"][0]["text"]
    assert not chat_errors(view.to_openai())


def test_driver_appends_a_reply_in_provider_order() -> None:
    """ReactDriver appends the reply's content in the order the provider sent it."""
    tl = Timeline("d", token_counter=HeuristicCounter())
    driver = ReactDriver(tl, lambda view: ModelReply.from_anthropic(_message(SEARCH)), tools={})
    result = driver.run_turn("weather?")
    assert result.text == "Let me search.\n\nSunny."
    assert [b.type for b in tl.blocks][2:] == [
        "assistant.completion",
        "provider.item",
        "provider.item",
        "assistant.completion",
    ]
