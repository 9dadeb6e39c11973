"""Opaque provider blocks and native forms: kept exactly, sent exactly and only to their
own provider in their place, shown elsewhere as their text form, counted, persisted."""

from __future__ import annotations

from typing import Any

import msgspec
import pydantic
import pytest

import index_store
from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import (
    Block,
    CompactionPolicy,
    HeuristicCounter,
    InvalidBlockError,
    Timeline,
    blocks,
)
from timeline._model.native import (
    NATIVE_MIME,
    PROVIDER_COMPACTION,
    PROVIDER_INPUT,
    PROVIDER_ITEM,
    anthropic_system_message,
    as_item,
    native_item,
    with_native,
)
from timeline._model.native_text import describe
from timeline._model.reasoning import REASONING_MIME, anthropic_thinking, reasoning_item
from timeline._model.validate import check_block
from timeline._tokens.payload import payload_tokens

SEARCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "web_search",
    "input": {"query": "paris weather"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://weather.example/paris",
            "title": "Paris forecast",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2",
            "page_age": "2 days ago",
        }
    ],
}


def _timeline() -> Timeline:
    tl = Timeline("n", policy=CompactionPolicy(max_tokens=50_000), token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("Weather in Paris?"))
    return tl


def _plain(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content parts without their cache checkpoints (structural, not content)."""
    return [{k: v for k, v in part.items() if k != "cache_control"} for part in content]


def _search(tl: Timeline) -> None:
    tl.append(blocks.assistant_completion("Let me search."))
    tl.append(blocks.provider_block("anthropic", SEARCH_USE))
    tl.append(blocks.provider_block("anthropic", SEARCH_RESULT))
    tl.append(blocks.assistant_completion("Sunny, 24°C."))


class TestConstructors:
    def test_provider_block_keeps_the_item_in_its_key_order(self) -> None:
        """data is the item's JSON as given (not sorted); meta names provider and kind;
        the pairing id ties a use to its result."""
        item = {"type": "mcp_call", "z": 1, "a": {"y": 2, "b": [3]}, "id": "mcp_1"}
        b = blocks.provider_block("responses", item)
        assert b.type == PROVIDER_ITEM and b.mime == NATIVE_MIME
        assert b.data == b'{"type":"mcp_call","z":1,"a":{"y":2,"b":[3]},"id":"mcp_1"}'
        assert b.meta == {"provider": "responses", "kind": "mcp_call"}
        use = blocks.provider_block("anthropic", SEARCH_USE)
        result = blocks.provider_block("anthropic", SEARCH_RESULT)
        assert use.call_id == result.call_id == "srvtoolu_01"

    def test_user_side_items_are_provider_inputs(self) -> None:
        """side="user" gives a provider.input authored by the user."""
        item = {"type": "computer_call_output", "call_id": "cc_1", "output": {}}
        b = blocks.provider_block("responses", item, side="user")
        assert (b.type, b.author, b.call_id) == (PROVIDER_INPUT, "user", "cc_1")

    def test_text_form_says_what_it_was_and_keeps_searchable_text(self) -> None:
        """The note first, then titles and URLs; encrypted content is left out."""
        assert (
            blocks.provider_block("anthropic", SEARCH_USE).text == '[web search: "paris weather"]'
        )
        text = blocks.provider_block("anthropic", SEARCH_RESULT).text
        assert text.splitlines() == [
            "[web search results → 1 result]",
            "https://weather.example/paris — Paris forecast — 2 days ago",
        ]

    def test_unknown_item_types_are_kept_with_a_generic_note(self) -> None:
        """An item type the library has never seen is kept, never refused."""
        b = blocks.provider_block("responses", {"type": "future_call", "query": "q1"})
        assert b.text == "[OpenAI Responses future_call]\nq1"

    def test_compaction_blocks(self) -> None:
        """Anthropic's compaction block (its summary is the text) and OpenAI's compaction
        item (output-only created_by dropped) become provider.compaction blocks."""
        a = blocks.anthropic_compaction({"type": "compaction", "content": "We fixed a.py."})
        assert (a.type, a.meta["provider"], a.author) == (
            PROVIDER_COMPACTION,
            "anthropic",
            "assistant",
        )
        assert a.text == "[compacted context]\nWe fixed a.py."
        item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA", "created_by": "x"}
        o = blocks.openai_compaction(item)
        assert native_item(o) == {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"}
        assert o.meta["provider"] == "responses"

    @pytest.mark.parametrize(
        ("call", "message"),
        [
            (lambda: blocks.provider_block("gemini", SEARCH_USE), "provider must be one of"),
            (lambda: blocks.provider_block("anthropic", {"x": 1}), "needs a 'type'"),
            (lambda: blocks.anthropic_compaction({"type": "text"}), "expected a compaction"),
            (lambda: blocks.openai_compaction({"type": "compaction"}), "encrypted_content"),
            (
                lambda: blocks.provider_block("anthropic", {"type": "t", "v": {1}}),
                "anthropic t.v: a set",
            ),
        ],
    )
    def test_bad_items_are_refused(self, call: Any, message: str) -> None:
        """Malformed input gets a typed error saying what is wrong."""
        with pytest.raises(InvalidBlockError, match=message):
            call()


class TestAppendChecks:
    @pytest.mark.parametrize(
        ("block", "field"),
        [
            (Block(type=PROVIDER_ITEM, text="x", meta={"provider": "anthropic"}), "data"),
            (
                Block(type=PROVIDER_ITEM, mime=NATIVE_MIME, data=b"{}", meta={"provider": "x"}),
                "meta.provider",
            ),
            (
                Block(type=PROVIDER_ITEM, mime=NATIVE_MIME, data=b"[1]", meta={"provider": "chat"}),
                "JSON object",
            ),
            (
                Block(type=PROVIDER_ITEM, mime=NATIVE_MIME, data=b"{", meta={"provider": "chat"}),
                "not a JSON provider item",
            ),
        ],
    )
    def test_a_provider_block_needs_its_item(self, block: Block, field: str) -> None:
        """A provider block without a well-formed item is refused, naming the field, and
        the timeline is unchanged."""
        tl = _timeline()
        before = tl.snapshot()
        with pytest.raises(InvalidBlockError, match=field):
            tl.append(block)
        assert tl.snapshot() == before


class TestRender:
    def test_own_provider_gets_the_items_exactly_in_place(self) -> None:
        """Anthropic gets the server tool use and its result unchanged, between the texts
        they were recorded between; the payload is valid."""
        tl = _timeline()
        _search(tl)
        payload = tl.render("").to_anthropic()
        assert _plain(payload["messages"][1]["content"]) == [
            {"type": "text", "text": "Let me search."},
            SEARCH_USE,
            SEARCH_RESULT,
            {"type": "text", "text": "Sunny, 24°C."},
        ]
        assert anthropic_errors(payload) == []

    def test_other_providers_get_the_text_form(self) -> None:
        """Chat and Responses see what the items were as text; the layouts too."""
        tl = _timeline()
        _search(tl)
        view = tl.render("")
        chat = view.to_openai()
        assert chat[-1]["content"] == (
            'Let me search.\n\n[web search: "paris weather"]\n\n[web search results → 1 result]\n'
            "https://weather.example/paris — Paris forecast — 2 days ago\n\nSunny, 24°C."
        )
        assert chat_errors(chat) == []
        responses = view.to_openai_responses()
        assert responses[-1]["content"] == chat[-1]["content"]
        assert responses_errors(responses) == []
        assert '[web search: "paris weather"]' in view.to_text()
        document = view.to_document()["messages"][0]["content"]
        assert {"type": "text", "text": '[web search: "paris weather"]'} in document

    def test_responses_items_keep_their_place_between_a_call_and_its_output(self) -> None:
        """A reasoning item and a web search call recorded between a function call and its
        output reach Responses in that order; Anthropic gets them as text, valid."""
        tl = _timeline()
        reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
        search = {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "q"},
        }
        from timeline._model.reasoning import openai_reasoning

        call = tl.append(blocks.tool_call("read", {"p": 1}, call_id="call_1"))
        tl.append(openai_reasoning(reasoning))
        tl.append(blocks.provider_block("responses", search))
        tl.append(blocks.tool_result(call.call_id or "", "text of p"))
        tl.append(blocks.assistant_completion("done"))
        items = tl.render("").to_openai_responses()
        kinds = [i.get("type", i.get("role")) for i in items]
        assert kinds == [
            "message",
            "function_call",
            "reasoning",
            "web_search_call",
            "function_call_output",
            "message",
        ]
        assert items[3] == search and items[2] == reasoning
        assert responses_errors(items) == []
        assert anthropic_errors(tl.render("").to_anthropic()) == []

    def test_compaction_block_goes_back_to_its_provider(self) -> None:
        """Anthropic's compaction block in its assistant message; OpenAI's compaction item
        as an input item; each as text elsewhere."""
        tl = _timeline()
        tl.append(blocks.anthropic_compaction({"type": "compaction", "content": "Summary."}))
        tl.append(blocks.assistant_completion("Go on."))
        item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"}
        tl.append(blocks.openai_compaction(item))
        view = tl.render("")
        assert view.to_anthropic()["messages"][1]["content"][0] == {
            "type": "compaction",
            "content": "Summary.",
        }
        responses = view.to_openai_responses()
        assert item in responses
        assert "[compacted context]\nSummary." in responses[1]["content"]
        assert anthropic_errors(view.to_anthropic()) == []
        assert responses_errors(responses) == []

    def test_native_text_form_goes_to_its_provider_only(self) -> None:
        """A text with citations: Anthropic gets the cited text block, Chat the text."""
        part = {
            "type": "text",
            "text": "Sunny.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": "https://weather.example/paris",
                    "title": "Paris forecast",
                    "encrypted_index": "Eo8BCioIAhgBIiQ",
                    "cited_text": "Sunny all week",
                }
            ],
        }
        tl = _timeline()
        tl.append(with_native(blocks.assistant_completion("Sunny."), "anthropic", part))
        view = tl.render("")
        assert _plain(view.to_anthropic()["messages"][1]["content"]) == [part]
        assert view.to_openai()[-1] == {"role": "assistant", "content": "Sunny."}
        assert anthropic_errors(view.to_anthropic()) == []


class TestBudgetAndStore:
    def test_estimate_covers_the_item_and_its_text_form(self) -> None:
        """view.tokens is at least every format's payload counted by the payload rule."""
        tl = _timeline()
        _search(tl)
        big = {
            "type": "code_execution_tool_result",
            "tool_use_id": "srvtoolu_02",
            "content": {
                "type": "code_execution_result",
                "stdout": "x" * 4000,
                "stderr": "",
                "return_code": 0,
                "content": [],
            },
        }
        tl.append(blocks.provider_block("anthropic", big))
        view = tl.render("sys")
        for payload in (
            view.to_anthropic(),
            view.to_openai(),
            view.to_openai_responses(),
            view.to_text(),
            view.to_document(),
        ):
            assert payload_tokens(payload, HeuristicCounter()) <= view.tokens

    def test_persist_reload_and_search(self) -> None:
        """The item's bytes survive a store unchanged (key order too); its text form is
        found by search."""
        store = index_store.open("memory://")
        tl = _timeline()
        item = {
            "type": "mcp_call",
            "z": 1,
            "a": 2,
            "name": "lookup",
            "server_label": "crm",
            "arguments": "{}",
            "output": "customer Zephyrine found",
            "id": "mcp_1",
        }
        stored = tl.append(blocks.provider_block("responses", item))
        tl.persist(store)
        again = Timeline.load(store, "n", token_counter=HeuristicCounter())
        assert list(again.blocks) == list(tl.blocks)
        assert msgspec.json.decode(again.blocks[-1].data or b"") == item
        assert again.blocks[-1].data == stored.data
        hits = store.search("n", "Zephyrine", limit=3)
        assert [h.block.id for h in hits] == [stored.id]
        assert again.render("").to_openai_responses() == tl.render("").to_openai_responses()


class TestCompaction:
    def test_a_cut_never_separates_blocks_sharing_a_call_id(self) -> None:
        """No valid cut falls between a server tool use and its result, even with an
        assistant text recorded between them."""
        from timeline._compaction.cuts import valid_cuts

        tl = _timeline()
        tl.append(blocks.provider_block("anthropic", SEARCH_USE))
        tl.append(blocks.assistant_completion("searching"))
        tl.append(blocks.provider_block("anthropic", SEARCH_RESULT))
        tl.append(blocks.assistant_completion("Sunny."))
        valid = valid_cuts(list(tl.blocks), 0)
        assert valid[3:5] == [False, False]  # before the text, before the result
        assert valid[5] is True  # after the pair

    def test_compaction_keeps_pairs_whole(self) -> None:
        """Under a small budget, in one long turn (the cuts fall inside it), every
        render's Anthropic payload that holds a search result also holds its use."""
        tl = Timeline(
            "c", policy=CompactionPolicy(max_tokens=1_500), token_counter=HeuristicCounter()
        )
        tl.begin_turn()
        for i in range(30):
            tl.append(blocks.assistant_completion(f"step {i} " + "w " * 40))
            use = {**SEARCH_USE, "id": f"srvtoolu_{i}"}
            tl.append(blocks.provider_block("anthropic", use))
            tl.append(blocks.assistant_completion("x " * 30))
            tl.append(
                blocks.provider_block("anthropic", {**SEARCH_RESULT, "tool_use_id": use["id"]})
            )
            payload = tl.render("sys").to_anthropic()
            parts = [p for m in payload["messages"] for p in m["content"] if isinstance(p, dict)]
            uses = {p["id"] for p in parts if p["type"] == "server_tool_use"}
            results = {p["tool_use_id"] for p in parts if p["type"] == "web_search_tool_result"}
            assert results <= uses
            assert anthropic_errors(payload) == []


def test_a_hidden_opaque_block_leaves_no_blank_text_in_the_document_layout() -> None:
    """An opaque block hidden with an empty replacement has no label to show: the document
    layout leaves it out (a blank text part is refused by the API) instead of sending ''."""
    tl = Timeline("h", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("search"))
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    hidden = tl.append(blocks.provider_block("responses", item))
    tl.append(blocks.assistant_completion("done"))
    tl.hide([hidden.path], replacement_text="")
    document = tl.render("").to_document()
    texts = [p["text"] for p in document["messages"][0]["content"]]
    assert all(t.strip() for t in texts) and len(texts) == 3
    assert not anthropic_errors(document)


def test_a_provider_message_of_another_role_names_the_role_it_got() -> None:
    raw = Block(
        type="provider.message",
        text="x",
        mime=NATIVE_MIME,
        data=b'{"role":"user","content":"x"}',
        meta={"provider": "anthropic", "kind": "system"},
    )
    with pytest.raises(InvalidBlockError, match=r"got 'anthropic' and 'user'$"):
        Timeline("v").append(raw)


def test_an_mcp_note_names_the_server_then_the_tool() -> None:
    item = {"server_name": "github", "name": "search"}
    assert describe("anthropic", "mcp_tool_use", item).splitlines()[0] == (
        "[MCP call: github/search]"
    )
    responses = describe("responses", "mcp_call", {"server_label": "docs", "name": "find"})
    assert responses.splitlines()[0] == "[MCP call: docs/find]"


def test_a_system_message_names_a_tool_added_by_its_definition() -> None:
    """A tool addition naming its tool only inside ``definition`` still names it."""
    part = {"type": "tool_addition", "tool": {"definition": {"name": "grep"}}}
    item = {"role": "system", "content": [part]}
    assert describe("anthropic", "system", item) == "[system message]\n[tool added: grep]"


def test_a_provider_item_that_is_no_object_names_the_block() -> None:
    raw = Block(
        type="provider.message",
        text="x",
        id="b-7",
        mime=NATIVE_MIME,
        data=b"[1]",
        meta={"provider": "anthropic", "kind": "system"},
    )
    with pytest.raises(InvalidBlockError, match="must hold a JSON object") as caught:
        check_block(raw)
    assert caught.value.block_id == "b-7"


def test_an_anthropic_system_message_of_another_role_names_it() -> None:
    with pytest.raises(InvalidBlockError, match=r"^role: expected 'system', got 'user'$"):
        blocks.anthropic_system_message({"role": "user", "content": "hi"})


def test_a_reasoning_block_holding_no_object_has_no_item() -> None:
    """Only a JSON object is a provider's reasoning item."""
    block = Block(type="assistant.thinking", text="", mime=REASONING_MIME, data=b"[1, 2]")
    assert reasoning_item(block) is None
    item = Block(type="assistant.thinking", text="", mime=REASONING_MIME, data=b'{"a": 1}')
    assert reasoning_item(item) == {"a": 1}


def test_a_provider_item_given_as_an_sdk_object_is_kept_in_its_wire_form() -> None:
    """An SDK object (a pydantic model) is dumped by alias, without unset fields."""

    class Upload(pydantic.BaseModel):
        type: str
        file_id: str = pydantic.Field(alias="fileId")
        note: str | None = None

    upload = Upload.model_validate({"type": "container_upload", "fileId": "f1"})
    assert as_item(upload, "item") == {"type": "container_upload", "fileId": "f1"}
    with pytest.raises(InvalidBlockError):
        as_item(42, "item")


def test_a_modelled_block_keeping_an_item_records_its_kind() -> None:
    """``with_native`` records the item's own type as the kind (the block's type when
    the item names none)."""
    part = {"type": "text", "text": "Sunny.", "citations": []}
    kept = with_native(blocks.assistant_completion("Sunny."), "anthropic", part)
    assert kept.meta == {"provider": "anthropic", "kind": "text"}
    untyped = with_native(blocks.assistant_completion("Sunny."), "anthropic", {"text": "x"})
    assert untyped.meta["kind"] == "assistant.completion"


def test_an_mcp_approval_says_approved_or_denied() -> None:
    approve = {"type": "mcp_approval_response", "approve": True, "approval_request_id": "a1"}
    deny = {**approve, "approve": False}
    assert describe("responses", "mcp_approval_response", approve).splitlines()[0] == (
        "[MCP approval: approved]"
    )
    assert describe("responses", "mcp_approval_response", deny).splitlines()[0] == (
        "[MCP approval: denied]"
    )


def test_a_thinking_item_that_is_no_json_names_the_block_type() -> None:
    item = {"type": "thinking", "thinking": "hmm", "signature": "s", "extra": object()}
    with pytest.raises(InvalidBlockError, match=r"^assistant\.thinking: the item is not JSON"):
        anthropic_thinking(item)


def test_a_code_execution_note_shows_the_exit_code_only_when_there_is_one() -> None:
    ran = {"type": "code_execution_tool_result", "content": {"return_code": 2}}
    bare = {"type": "code_execution_tool_result", "content": {"stdout": "ok"}}
    assert describe("anthropic", "code_execution_tool_result", ran).splitlines()[0] == (
        "[code execution result (exit 2)]"
    )
    assert describe("anthropic", "code_execution_tool_result", bare).splitlines()[0] == (
        "[code execution result]"
    )


def test_a_server_tool_note_quotes_its_command() -> None:
    item = {"type": "server_tool_use", "id": "s1", "name": "bash_code_execution"}
    ran = describe("anthropic", "server_tool_use", {**item, "input": {"command": "ls -la"}})
    assert ran == '[bash code execution: "ls -la"]'


def test_a_redacted_thinking_block_without_data_says_what_it_needs() -> None:
    with pytest.raises(
        InvalidBlockError, match=r"^a redacted_thinking block needs a 'data' string$"
    ):
        anthropic_thinking({"type": "redacted_thinking"})


def test_an_anthropic_system_message_of_bad_content_says_what_it_expects() -> None:
    with pytest.raises(
        InvalidBlockError, match=r"^content: expected a string or a list of blocks$"
    ):
        anthropic_system_message({"role": "system", "content": 7})


def test_a_code_execution_result_notes_its_exit_code() -> None:
    item = {"content": {"type": "bash_code_execution_result", "return_code": 2}}
    assert describe("anthropic", "bash_code_execution_tool_result", item) == (
        "[bash result (exit 2)]"
    )


def test_an_anthropic_mcp_call_names_its_server_by_server_name() -> None:
    item = {"server_name": "github", "name": "search"}
    assert describe("anthropic", "mcp_tool_use", item).startswith("[MCP call: github/search]")
