"""The importers refuse nothing a provider produced: reused tool-call ids, media by URL or
file id, audio, server tools, MCP, compaction and item types never seen all import, go
back to their own provider unchanged and give valid payloads for every provider."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import InvalidBlockError
from timeline._io.importers import import_conversation
from timeline._model.native import PROVIDER_COMPACTION, PROVIDER_INPUT, PROVIDER_ITEM
from timeline._render.context import RenderedContext

WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode()


def _valid(view: RenderedContext) -> None:
    assert anthropic_errors(view.to_anthropic()) == []
    assert chat_errors(view.to_openai()) == []
    assert responses_errors(view.to_openai_responses()) == []
    assert view.to_text() and view.to_document()


def _plain(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in part.items() if k != "cache_control"} for part in content]


def _call(call_id: str, n: int) -> dict[str, Any]:
    function = {"name": "get", "arguments": f'{{"n": {n}}}'}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


REUSED = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "first"},
    _call("call_B1wTKndCK0SgWj4uYElOR9nt", 1),
    {"role": "tool", "tool_call_id": "call_B1wTKndCK0SgWj4uYElOR9nt", "content": "one"},
    {"role": "assistant", "content": "got one"},
    {"role": "user", "content": "again"},
    _call("call_B1wTKndCK0SgWj4uYElOR9nt", 2),
    {"role": "tool", "tool_call_id": "call_B1wTKndCK0SgWj4uYElOR9nt", "content": "two"},
    {"role": "assistant", "content": "got two"},
]


class TestReusedToolCallIds:
    def test_a_reused_id_gets_a_unique_internal_id_and_pairs_by_position(self) -> None:
        """The second call with the id gets another internal id; each result pairs with
        the call before it; every provider gets unique ids it accepts."""
        tl = import_conversation(REUSED, "openai", "r").timeline
        calls = [b for b in tl.blocks if b.type == "react.tool.call"]
        results = [b for b in tl.blocks if b.type == "react.tool.result"]
        assert [c.call_id for c in calls] == [
            "call_B1wTKndCK0SgWj4uYElOR9nt",
            "call_B1wTKndCK0SgWj4uYElOR9nt#2",
        ]
        assert calls[1].meta["source_call_id"] == "call_B1wTKndCK0SgWj4uYElOR9nt"
        assert "source_call_id" not in calls[0].meta
        assert [(r.call_id, r.text) for r in results] == [
            (calls[0].call_id, "one"),
            (calls[1].call_id, "two"),
        ]
        view = tl.render("Be brief.")
        _valid(view)
        uses = [
            p["id"]
            for m in view.to_anthropic()["messages"]
            for p in m["content"]
            if isinstance(p, dict) and p["type"] == "tool_use"
        ]
        assert len(set(uses)) == 2

    def test_an_invalid_id_is_named_exactly(self) -> None:
        """A call id no provider would accept (a NUL in it) is refused naming .id."""
        bad = [REUSED[1], _call("call_\x00x", 1)]
        with pytest.raises(InvalidBlockError, match=r"messages\[1\]\.tool_calls\[0\]\.id"):
            import_conversation(bad, "openai", "r")

    def test_an_orphan_result_is_still_refused(self) -> None:
        """A result naming no call is input no provider accepts: refused, field named."""
        bad = [REUSED[1], {"role": "tool", "tool_call_id": "nope", "content": "x"}]
        with pytest.raises(InvalidBlockError, match=r"messages\[1\]"):
            import_conversation(bad, "openai", "r")


class TestMediaByReference:
    def test_anthropic_url_sources_in_messages_and_tool_results(self) -> None:
        """An image by URL in a user message and inside a tool_result, a document by
        file id: Anthropic gets them back exactly; Chat and Responses valid payloads."""
        image = {"type": "image", "source": {"type": "url", "url": "https://x.io/a.png"}}
        doc = {"type": "document", "source": {"type": "file", "file_id": "file_011AB"}}
        data = {
            "messages": [
                {"role": "user", "content": [image, doc, {"type": "text", "text": "look"}]},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [image]}
                    ],
                },
            ]
        }
        view = import_conversation(data, "anthropic", "a").timeline.render("")
        messages = view.to_anthropic()["messages"]
        assert _plain(messages[0]["content"]) == [image, doc, {"type": "text", "text": "look"}]
        assert messages[2]["content"][0]["content"] == [image]
        chat = view.to_openai()
        image_url = {"type": "image_url", "image_url": {"url": "https://x.io/a.png"}}
        assert image_url in chat[0]["content"]
        assert "anthropic file file_011AB" in str(chat[0]["content"])  # a note elsewhere
        _valid(view)

    def test_chat_and_responses_references(self) -> None:
        """Chat image_url by https URL and a file by id; Responses input_image by URL,
        input_file by URL and by id, an image by URL inside function_call_output."""
        chat = [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://x.io/a.png", "detail": "high"},
                    },
                    {"type": "file", "file": {"file_id": "file-abc"}},
                ],
            }
        ]
        view = import_conversation(chat, "openai", "c").timeline.render("")
        assert view.to_openai()[0]["content"] == chat[0]["content"]
        _valid(view)
        image = {"type": "input_image", "image_url": "https://x.io/a.png", "detail": "auto"}
        responses = [
            {
                "role": "user",
                "content": [
                    image,
                    {"type": "input_file", "file_url": "https://x.io/r.pdf"},
                    {"type": "input_file", "file_id": "file-abc"},
                ],
            },
            {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": [image]},
        ]
        view = import_conversation(responses, "responses", "r").timeline.render("")
        items = view.to_openai_responses()
        assert items[0]["content"] == responses[0]["content"]
        assert items[2]["output"] == [image]
        _valid(view)


class TestAudio:
    def test_chat_input_audio_and_audio_replies(self) -> None:
        """input_audio in a user message goes back to Chat as sent; an assistant's audio
        reply goes back as its id; Anthropic and Responses get notes."""
        audio = {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
        data = [
            {"role": "user", "content": [{"type": "text", "text": "listen"}, audio]},
            {"role": "assistant", "content": None, "audio": {"id": "audio_abc"}},
            {"role": "user", "content": "thanks"},
        ]
        view = import_conversation(data, "openai", "a").timeline.render("")
        chat = view.to_openai()
        assert chat[0]["content"][1] == audio
        assert chat[1] == {"role": "assistant", "content": None, "audio": {"id": "audio_abc"}}
        assert "[audio reply audio_abc]" in str(view.to_anthropic())
        _valid(view)

    def test_an_audio_reply_keeps_its_transcript_as_text(self) -> None:
        """A recorded audio reply's transcript is what other providers and search read;
        Chat still gets the id alone (the request param takes nothing else)."""
        reply = {"id": "audio_1", "transcript": "It is sunny.", "expires_at": 1}
        data = [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "audio": reply},
        ]
        imported = import_conversation(data, "openai", "a")
        assert imported.timeline.blocks[-1].text == "[audio reply audio_1]\nIt is sunny."
        view = imported.timeline.render("")
        assert view.to_openai()[-1]["audio"] == {"id": "audio_1"}
        assert "It is sunny." in view.to_openai_responses()[-1]["content"]


SERVER_TOOLS: list[dict[str, Any]] = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://a.io",
                "title": "A",
                "encrypted_content": "Eo4U",
                "page_age": None,
            }
        ],
    },
    {
        "type": "text",
        "text": "It is sunny.",
        "citations": [
            {
                "type": "web_search_result_location",
                "url": "https://a.io",
                "title": "A",
                "encrypted_index": "Eo8B",
                "cited_text": "sunny",
            }
        ],
    },
    {
        "type": "mcp_tool_use",
        "id": "mcptoolu_1",
        "name": "lookup",
        "server_name": "crm",
        "input": {"who": "z"},
    },
    {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": False,
        "content": [{"type": "text", "text": "found"}],
    },
    {"type": "compaction", "content": "Earlier: we searched."},
]


class TestServerToolsAndCompaction:
    def test_anthropic_server_tools_mcp_compaction_and_unknown_blocks(self) -> None:
        """Every block of the assistant message goes back to Anthropic unchanged and in
        order; the others get text notes; each is an opaque or native block."""
        data = {
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": SERVER_TOOLS},
                {"role": "user", "content": [{"type": "container_upload", "file_id": "file_1"}]},
            ]
        }
        tl = import_conversation(data, "anthropic", "s").timeline
        kinds = [b.type for b in tl.blocks][2:]
        assert kinds == [
            PROVIDER_ITEM,
            PROVIDER_ITEM,
            "assistant.completion",
            PROVIDER_ITEM,
            PROVIDER_ITEM,
            PROVIDER_COMPACTION,
            "turn.header",
            PROVIDER_INPUT,
        ]
        view = tl.render("")
        messages = view.to_anthropic()["messages"]
        assert _plain(messages[1]["content"]) == SERVER_TOOLS
        assert _plain(messages[2]["content"]) == [{"type": "container_upload", "file_id": "file_1"}]
        assert "It is sunny." in view.to_openai()[1]["content"]
        _valid(view)

    def test_responses_items_of_every_kind(self) -> None:
        """Server tool calls, MCP, computer use, custom tools, compaction, an item
        reference and a type never seen: back to Responses exactly, in order."""
        items: list[dict[str, Any]] = [
            {"role": "user", "content": "go"},
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "q"},
            },
            {
                "type": "computer_call",
                "id": "cu_1",
                "call_id": "cc_1",
                "status": "completed",
                "pending_safety_checks": [],
                "action": {"type": "click", "button": "left", "x": 1, "y": 2},
            },
            {
                "type": "computer_call_output",
                "call_id": "cc_1",
                "output": {"type": "computer_screenshot", "image_url": "https://x.io/s.png"},
            },
            {
                "type": "mcp_approval_request",
                "id": "mcpr_1",
                "server_label": "crm",
                "name": "lookup",
                "arguments": "{}",
            },
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
            {"type": "custom_tool_call", "call_id": "ct_1", "name": "patch", "input": "*** diff"},
            {"type": "custom_tool_call_output", "call_id": "ct_1", "output": "applied"},
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"},
            {"type": "item_reference", "id": "msg_9"},
            {"type": "message", "role": "assistant", "content": "done"},
        ]
        tl = import_conversation(items, "responses", "r").timeline
        view = tl.render("")
        out = view.to_openai_responses()
        assert out[1:-1] == items[1:-1]
        assert out[0]["content"][0]["text"] == "go"
        _valid(view)
        assert [b.type for b in tl.blocks].count(PROVIDER_INPUT) == 4

    @pytest.mark.parametrize("fmt", ["anthropic", "responses"])
    def test_types_never_seen_are_kept(self, fmt: str) -> None:
        """A content or item type the SDKs do not know yet is kept and sent back as it
        was; the other providers get a note naming it."""
        unknown = {"type": "brand_new_block", "payload": {"x": 1}}
        if fmt == "anthropic":
            data: Any = {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": [unknown]},
                ]
            }
        else:
            data = [{"role": "user", "content": "hi"}, unknown]
        view = import_conversation(data, fmt, "u").timeline.render("")  # type: ignore[arg-type]
        if fmt == "anthropic":
            sent = view.to_anthropic()["messages"][1]["content"][0]
        else:
            sent = view.to_openai_responses()[1]
        assert {k: v for k, v in sent.items() if k != "cache_control"} == unknown
        assert "brand_new_block" in view.to_openai()[-1]["content"]


def test_anthropic_plain_text_document_goes_back_as_it_came() -> None:
    """A document with a text source is an attachment (its text is searchable and other
    providers get it as text) that Anthropic gets back as the same document part."""
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Dummy TXT file\n"},
        "title": "notes.txt",
    }
    content = [{"type": "text", "text": "Summarise it."}, document]
    imported = import_conversation(
        {"messages": [{"role": "user", "content": content}]}, "anthropic", "d"
    )
    attachment = imported.timeline.blocks[-1]
    assert (attachment.type, attachment.text) == ("user.attachment", "Dummy TXT file\n")
    view = imported.timeline.render("")
    assert _plain(view.to_anthropic()["messages"][0]["content"]) == content
    assert "Dummy TXT file" in view.to_openai()[0]["content"][1]["text"]
    _valid(view)


class TestArgumentsAsTheModelWroteThem:
    """A model's tool arguments go back to it as it wrote them (key order, spacing), not
    re-encoded: the timeline's params stay canonical, the call keeps its exact form."""

    ARGS = '{"search": "a", "replace": "b"}'

    def test_chat(self) -> None:
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "edit", "arguments": self.ARGS},
        }
        data = [
            {"role": "user", "content": "edit"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ]
        imported = import_conversation(data, "openai", "c")
        assert imported.timeline.blocks[2].text == '{"replace":"b","search":"a"}'
        view = imported.timeline.render("")
        assert view.to_openai()[1]["tool_calls"] == [call]
        _valid(view)

    def test_responses(self) -> None:
        call = {
            "type": "function_call",
            "call_id": "call_1",
            "name": "edit",
            "arguments": self.ARGS,
        }
        data = [
            {"role": "user", "content": "edit"},
            call,
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
        ]
        view = import_conversation(data, "responses", "r").timeline.render("")
        assert view.to_openai_responses()[1] == call
        _valid(view)

    def test_anthropic(self) -> None:
        use = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "edit",
            "input": {"search": "a", "replace": "b"},
        }
        data = [
            {"role": "user", "content": "edit"},
            {"role": "assistant", "content": [use]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
            },
        ]
        view = import_conversation(data, "anthropic", "a").timeline.render("")
        sent = view.to_anthropic()["messages"][1]["content"][0]
        assert list(sent["input"]) == ["search", "replace"]
        _valid(view)


def test_a_media_source_that_is_not_an_object_is_refused_naming_it() -> None:
    """No provider takes an image whose source is a string: refused at its field."""
    data = [{"role": "user", "content": [{"type": "image", "source": "x"}]}]
    with pytest.raises(InvalidBlockError, match=r"messages\[0\]\.content\[0\]\.source"):
        import_conversation(data, "anthropic", "s")
