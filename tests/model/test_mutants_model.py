"""Edges of ``timeline._model`` and the Timeline's own checks, written against mutants of
the sampled mutation campaign (docs/dev/mutation-testing.md, "Sampled campaign") that the broader
tests let through; each was checked to fail with its mutant applied."""

from __future__ import annotations

import msgspec
import pydantic
import pytest

import index_store
from timeline import (
    Block,
    CodecError,
    CompactionPolicy,
    InvalidBlockError,
    InvalidConversationIdError,
    PinnedOverBudgetError,
    PolicyError,
    Timeline,
    UnknownPathError,
    blocks,
)
from timeline._model.codec import encode_block
from timeline._model.media import MediaRef, media_ref, media_url
from timeline._model.native import NATIVE_MIME, as_item, with_native
from timeline._model.native_text import describe
from timeline._model.reasoning import REASONING_MIME, anthropic_thinking, reasoning_item
from timeline._model.validate import check_block
from timeline._state.stream import rendered_form


def test_a_custom_block_keeps_the_mime_type_it_is_given() -> None:
    block = blocks.custom("stage.gate", '{"open": true}', mime="application/json")
    assert block.mime == "application/json"
    assert blocks.custom("react.plan", "plan").mime == "text/markdown"


@pytest.mark.parametrize("conversation_id", ["", None])
def test_an_empty_conversation_id_is_named_in_the_error(conversation_id: object) -> None:
    with pytest.raises(
        InvalidConversationIdError, match=r"^conversation_id must be a non-empty string$"
    ):
        Timeline(conversation_id)  # type: ignore[arg-type]


def test_a_conversation_id_no_store_can_hold_is_its_own_error() -> None:
    """A NUL or a lone surrogate in a conversation id raises InvalidConversationIdError
    (a ValueError, not a bad block), from the timeline and from a store alike."""
    for bad in ("conv\x00a", "conv\ud800"):
        with pytest.raises(InvalidConversationIdError, match="conversation_id") as err:
            Timeline(bad)
        assert isinstance(err.value, ValueError)
        assert not isinstance(err.value, InvalidBlockError)
    with index_store.open("sqlite:///:memory:") as store:
        with pytest.raises(InvalidConversationIdError, match="NUL"):
            store.search("conv\x00a", "query")
        with pytest.raises(InvalidConversationIdError, match="must be a str"):
            store.search(7, "query")  # type: ignore[arg-type]


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


def test_an_attachment_path_ends_with_its_name() -> None:
    tl = Timeline("a")
    tl.begin_turn()
    pdf = tl.append(blocks.user_attachment(name="spec.pdf", mime="application/pdf", data=b"%PDF"))
    assert pdf.path.endswith(".spec.pdf")


def test_an_empty_url_falls_back_to_the_file_id() -> None:
    meta = {"media": "image", "url": "", "file_id": "file_1", "file_provider": "anthropic"}
    ref = media_ref(Block(type="user.attachment", text="chart", meta=meta))
    assert ref == MediaRef("image", file_id="file_1", provider="anthropic")


def test_a_referenced_document_without_a_mime_is_octet_stream() -> None:
    assert media_url("https://example.com/a.pdf", media="document").mime == (
        "application/octet-stream"
    )
    assert media_url("https://example.com/a.png").mime == "image/*"


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


def test_a_referenced_attachment_is_named_by_its_url_or_file_id() -> None:
    assert media_url("https://example.com/a.png").meta["name"] == "https://example.com/a.png"
    assert media_url("https://example.com/a.png", name="chart").meta["name"] == "chart"
    assert media_url("https://example.com/a.png").author == "user"


def test_an_anthropic_system_message_of_another_role_names_it() -> None:
    with pytest.raises(InvalidBlockError, match=r"^role: expected 'system', got 'user'$"):
        blocks.anthropic_system_message({"role": "user", "content": "hi"})


def test_a_refused_pin_names_the_conversation() -> None:
    tl = Timeline("conv-9", policy=CompactionPolicy(max_tokens=1_000))
    tl.begin_turn()
    tl.append(blocks.plan("word " * 2_000))
    with pytest.raises(PinnedOverBudgetError) as caught:
        tl.pin(["ar:t1.react.plan"])
    assert caught.value.conversation_id == "conv-9"
    assert caught.value.budget == 1_000 and caught.value.required > 1_000


def test_a_reasoning_block_holding_no_object_has_no_item() -> None:
    """Only a JSON object is a provider's reasoning item."""
    block = Block(type="assistant.thinking", text="", mime=REASONING_MIME, data=b"[1, 2]")
    assert reasoning_item(block) is None
    item = Block(type="assistant.thinking", text="", mime=REASONING_MIME, data=b'{"a": 1}')
    assert reasoning_item(item) == {"a": 1}


def test_hiding_an_unknown_path_names_it() -> None:
    tl = Timeline("h")
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(UnknownPathError) as caught:
        tl.hide(["ar:t9.user.prompt"])
    assert caught.value.path == "ar:t9.user.prompt"
    assert caught.value.conversation_id == "h"


def test_a_hidden_result_path_renders_once_a_hidden_call_always() -> None:
    """Two hidden results at one path render once (the second is omitted); a hidden
    call is never omitted (its result would be an orphan)."""
    result = msgspec.structs.replace(
        blocks.tool_result("c1", "big output"), path="tc:t1.tool_calls.c1.out.json", hidden=True
    )
    seen: set[str] = set()
    first = rendered_form(result, seen)
    assert first is not None and first.text != "big output"
    assert rendered_form(result, seen) is None
    call = msgspec.structs.replace(
        blocks.tool_call("ls", {}, call_id="c1"), path="tc:t1.tool_calls.c1.in.json", hidden=True
    )
    assert rendered_form(call, seen) is not None and rendered_form(call, seen) is not None


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


def test_a_manual_compaction_without_a_budget_says_what_to_set() -> None:
    tl = Timeline("n")
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(PolicyError, match=r"^compaction needs a budget: set max_tokens or"):
        tl.compact()


def test_a_modelled_block_keeping_an_item_records_its_kind() -> None:
    """``with_native`` records the item's own type as the kind (the block's type when
    the item names none)."""
    part = {"type": "text", "text": "Sunny.", "citations": []}
    kept = with_native(blocks.assistant_completion("Sunny."), "anthropic", part)
    assert kept.meta == {"provider": "anthropic", "kind": "text"}
    untyped = with_native(blocks.assistant_completion("Sunny."), "anthropic", {"text": "x"})
    assert untyped.meta["kind"] == "assistant.completion"


def test_a_snapshot_call_without_a_tool_names_the_block() -> None:
    tl = Timeline("s")
    tl.begin_turn()
    call = tl.append(blocks.tool_call("ls", {}))
    snap = tl.snapshot()
    bare = msgspec.structs.replace(call, tool_id=None)
    broken = msgspec.structs.replace(
        snap, blocks=[bare if b.id == call.id else b for b in snap.blocks]
    )
    with pytest.raises(InvalidBlockError, match="a tool call needs call_id and tool_id") as caught:
        Timeline("s").restore(broken)
    assert caught.value.block_id == call.id


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


def test_a_hidden_result_with_bytes_renders_without_them() -> None:
    """A hidden tool result's bytes (an image it returned) are not sent: only the
    placeholder text is."""
    shot = msgspec.structs.replace(
        blocks.tool_result("c1", "", mime="image/png", data=b"\x89PNG\r\n\x1a\n0000"),
        path="tc:t1.tool_calls.c1.out.json",
        hidden=True,
    )
    shown = rendered_form(shot, set())
    assert shown is not None and shown.data is None and shown.mime == "text/plain"


def test_the_codec_refuses_a_padded_type_by_name() -> None:
    with pytest.raises(CodecError, match=r"^Block\.type must be a non-empty name, got ' note'$"):
        encode_block(Block(type=" note", text="x"))


def test_a_turn_header_keeps_its_text() -> None:
    assert blocks.turn_header("Deploy day").text == "Deploy day"


def test_a_code_execution_note_shows_the_exit_code_only_when_there_is_one() -> None:
    ran = {"type": "code_execution_tool_result", "content": {"return_code": 2}}
    bare = {"type": "code_execution_tool_result", "content": {"stdout": "ok"}}
    assert describe("anthropic", "code_execution_tool_result", ran).splitlines()[0] == (
        "[code execution result (exit 2)]"
    )
    assert describe("anthropic", "code_execution_tool_result", bare).splitlines()[0] == (
        "[code execution result]"
    )


def test_a_nul_in_an_identifier_names_the_block() -> None:
    raw = Block(type="user.prompt", text="hi", id="b1", path="ar:t1.user\x00prompt")
    with pytest.raises(InvalidBlockError, match=r"Block\.path contains a NUL") as caught:
        check_block(raw)
    assert caught.value.block_id == "b1"


def test_a_server_tool_note_quotes_its_command() -> None:
    item = {"type": "server_tool_use", "id": "s1", "name": "bash_code_execution"}
    ran = describe("anthropic", "server_tool_use", {**item, "input": {"command": "ls -la"}})
    assert ran == '[bash code execution: "ls -la"]'
