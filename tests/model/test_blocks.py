"""Block constructors and the append-time invariants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from timeline import (
    Block,
    DuplicateBlockIdError,
    InvalidBlockError,
    OrphanToolResultError,
    PolicyError,
    Timeline,
    UnknownPathError,
    blocks,
    register_block_type,
)
from timeline._model.block_types import block_type
from timeline._model.media import MediaRef, media_ref, media_url
from timeline._model.validate import check_block


def test_constructors_cover_every_known_type() -> None:
    """Each constructor makes a block of its type with the right author."""
    made = [
        blocks.turn_header(),
        blocks.user_prompt("hi"),
        blocks.user_attachment(name="a.png", mime="image/png", data=b"\x89PNG"),
        blocks.assistant_completion("ok"),
        blocks.tool_call("read_file", {"path": "a.py"}),
        blocks.tool_result("c1", "text"),
        blocks.note("n"),
        blocks.summary("s"),
    ]
    expected = [
        ("turn.header", "system"),
        ("user.prompt", "user"),
        ("user.attachment", "user"),
        ("assistant.completion", "assistant"),
        ("react.tool.call", "assistant"),
        ("react.tool.result", "tool"),
        ("react.note", "system"),
        ("conv.range.summary", "system"),
    ]
    assert expected == [(b.type, b.author) for b in made]


def test_tool_params_are_canonical_json() -> None:
    """Params are stored with sorted keys and no spaces, so renders are byte-stable."""
    call = blocks.tool_call("edit", {"z": 1, "a": {"y": 2, "b": [3]}})
    assert call.text == '{"a":{"b":[3],"y":2},"z":1}'


def test_append_fills_id_ts_turn_and_path(make_tl: Callable[..., Timeline]) -> None:
    """The timeline assigns ids, timestamps, the turn id and a logical path."""
    tl = make_tl()
    turn = tl.begin_turn()
    prompt = tl.append(blocks.user_prompt("Fix it"))
    call = tl.append(blocks.tool_call("read_file", {"path": "a.py"}))
    result = tl.append(blocks.tool_result(call.call_id or "", "x", tool_id="read_file"))
    assert turn == "t1"
    assert (prompt.id, prompt.turn_id, prompt.path) == ("b2", "t1", "ar:t1.user.prompt")
    assert prompt.ts == "2026-01-01T00:00:02.000Z"
    assert call.call_id == "call_b3"
    assert call.path == "tc:t1.tool_calls.call_b3.in.json"
    assert result.path == "tc:t1.tool_calls.call_b3.out.json"


def test_orphan_tool_result_is_rejected_and_timeline_unchanged(
    make_tl: Callable[..., Timeline],
) -> None:
    """A result naming an unknown call_id raises and appends nothing."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    before = (tl.blocks, tl.snapshot())
    with pytest.raises(OrphanToolResultError):
        tl.append(blocks.tool_result("nope", "text"))
    assert before == (tl.blocks, tl.snapshot())


def test_duplicate_id_is_rejected(make_tl: Callable[..., Timeline]) -> None:
    """A second block with a used id raises and changes nothing."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(Block(type="user.prompt", text="a", id="x"))
    before = tl.snapshot()
    with pytest.raises(DuplicateBlockIdError):
        tl.append(Block(type="user.prompt", text="b", id="x"))
    assert before == tl.snapshot()


@pytest.mark.parametrize(
    "bad",
    [
        Block(type="user.prompt", text=42),  # type: ignore[arg-type]
        Block(type="user.prompt", data="not bytes"),  # type: ignore[arg-type]
        Block(type="user.prompt", meta={"x": object()}),
        Block(type="user.prompt", hidden="yes"),  # type: ignore[arg-type]
        Block(type=""),
        Block(type="react.tool.call", text="{not json", tool_id="t"),
        Block(type="react.tool.call", text="[1, 2]", tool_id="t"),
        Block(type="react.tool.call", text="{}"),
        Block(type="conv.range.summary", text="forged"),
        "not a block",
    ],
)
def test_wrong_field_types_are_rejected(make_tl: Callable[..., Timeline], bad: Any) -> None:
    """Wrong field types, bad tool params and forged summaries raise InvalidBlockError."""
    tl = make_tl()
    tl.begin_turn()
    before = tl.snapshot()
    with pytest.raises(InvalidBlockError):
        tl.append(bad)
    assert before == tl.snapshot()


def test_append_before_any_turn_is_an_error(make_tl: Callable[..., Timeline]) -> None:
    """Blocks need a turn: appending first raises instead of inventing one."""
    tl = make_tl()
    with pytest.raises(InvalidBlockError, match="begin_turn"):
        tl.append(blocks.user_prompt("hi"))
    assert tl.blocks == ()


def test_extend_is_atomic(make_tl: Callable[..., Timeline]) -> None:
    """extend() appends all blocks or, on an error in any, none of them."""
    tl = make_tl()
    tl.begin_turn()
    call = blocks.tool_call("t", {}, call_id="c1")
    with pytest.raises(OrphanToolResultError):
        tl.extend([call, blocks.tool_result("c1", "ok"), blocks.tool_result("c2", "bad")])
    assert len(tl.blocks) == 1
    stored = tl.extend([call, blocks.tool_result("c1", "ok")])
    assert [b.type for b in stored] == ["react.tool.call", "react.tool.result"]


def test_hand_built_tool_call_text_is_canonicalized(make_tl: Callable[..., Timeline]) -> None:
    """A Block built by hand with spaced JSON is stored canonical."""
    tl = make_tl()
    tl.begin_turn()
    stored = tl.append(Block(type="react.tool.call", text='{ "b": 1, "a": 2 }', tool_id="t"))
    assert stored.text == '{"a":2,"b":1}'


def test_custom_block_type_registration() -> None:
    """A framework registers its own type with role, boundary and label."""
    spec = register_block_type("react.plan", role="assistant", boundary="message", label="[PLAN]")
    assert spec == block_type("react.plan")
    assert (spec.role, spec.boundary, spec.label) == ("assistant", "message", "[PLAN]")
    assert block_type("stage.gate").label == "[STAGE.GATE]"  # unregistered: user-side text


def test_builtin_types_cannot_be_redefined() -> None:
    """Re-registering a built-in type is a PolicyError."""
    with pytest.raises(PolicyError):
        register_block_type("user.prompt", role="assistant")


def test_hide_unknown_path_raises(make_tl: Callable[..., Timeline]) -> None:
    """hide() of a path that is not in memory is a typed KeyError and changes nothing."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(UnknownPathError):
        tl.hide(["ar:t9.user.prompt"], "x")
    assert not any(b.hidden for b in tl.blocks)


def test_hide_and_unhide_round_trip(make_tl: Callable[..., Timeline]) -> None:
    """unhide() restores the block exactly as appended."""
    tl = make_tl()
    tl.begin_turn()
    b = tl.append(blocks.user_prompt("secret"))
    assert tl.hide([b.path], "(hidden)") == 1
    assert tl.get(b.id).hidden
    assert tl.unhide([b.path]) == 1
    assert b == tl.get(b.id)


def test_blocks_are_plain_data() -> None:
    """Blocks are frozen structs whose only public attributes are their fields."""
    b = blocks.user_prompt("x")
    with pytest.raises(AttributeError):
        b.text = "y"  # type: ignore[misc]
    public = {n for n in dir(Block) if not n.startswith("_")}
    assert set(Block.__struct_fields__) == public


def test_a_custom_block_keeps_the_mime_type_it_is_given() -> None:
    block = blocks.custom("stage.gate", '{"open": true}', mime="application/json")
    assert block.mime == "application/json"
    assert blocks.custom("react.plan", "plan").mime == "text/markdown"


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


def test_a_referenced_attachment_is_named_by_its_url_or_file_id() -> None:
    assert media_url("https://example.com/a.png").meta["name"] == "https://example.com/a.png"
    assert media_url("https://example.com/a.png", name="chart").meta["name"] == "chart"
    assert media_url("https://example.com/a.png").author == "user"


def test_a_turn_header_keeps_its_text() -> None:
    assert blocks.turn_header("Deploy day").text == "Deploy day"


def test_a_nul_in_an_identifier_names_the_block() -> None:
    raw = Block(type="user.prompt", text="hi", id="b1", path="ar:t1.user\x00prompt")
    with pytest.raises(InvalidBlockError, match=r"Block\.path contains a NUL") as caught:
        check_block(raw)
    assert caught.value.block_id == "b1"


def test_a_tool_result_without_call_id_says_what_it_needs() -> None:
    with pytest.raises(
        InvalidBlockError, match=r"^a tool result needs the call_id of its tool call$"
    ):
        blocks.tool_result("", "out")
