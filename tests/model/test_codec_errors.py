"""Edges of the block codec and of the errors it and the driver raise
(``timeline._model``): the message names what was wrong and where. Written against mutants
that the broader tests let through."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.driver import make
from timeline import (
    Block,
    CodecError,
    ContextOverflowError,
    blocks,
    encode_block,
)
from timeline._driver import ModelReply, ReactDriver
from timeline._driver.scripted import ProviderError
from timeline._render.context import RenderedContext


def test_encode_block_names_what_it_was_given() -> None:
    with pytest.raises(CodecError) as err:
        encode_block({"type": "user.prompt"})  # type: ignore[arg-type]
    assert str(err.value) == "encode_block takes a timeline.Block, not dict"


def test_encode_block_names_the_bad_meta_path() -> None:
    """A meta value that is not JSON is refused with its path under ``meta``."""
    block = blocks.user_prompt("hi", score=float("nan"))
    with pytest.raises(CodecError) as err:
        encode_block(block)
    assert str(err.value).startswith("meta.score: nan is not a JSON number")


@pytest.mark.parametrize("field", ["type", "id", "turn_id", "path", "call_id", "tool_id"])
def test_encode_block_names_the_bad_identifier(field: str) -> None:
    """An identifier a store cannot hold as a key (a NUL here) is named ``Block.<field>``."""
    values: dict[str, Any] = {
        "type": "user.prompt",
        "id": "b1",
        "turn_id": "t1",
        "path": "p",
        "call_id": "c",
        "tool_id": "x",
    }
    block = Block(**{**values, field: "bad\x00value"})
    with pytest.raises(CodecError) as err:
        encode_block(block)
    assert str(err.value) == f"Block.{field} contains a NUL character: 'bad\\x00value'"


def test_context_overflow_error_says_what_and_where() -> None:
    """The driver's final overflow error carries the provider's message, the provider's
    error as ``cause`` and the conversation."""
    provider = ProviderError("prompt is too long: 210000 tokens > 200000 maximum")

    def model(view: RenderedContext) -> ModelReply:
        raise provider

    tl = make(budget=16_000)
    tl.begin_turn()
    tl.append(blocks.user_prompt("data " * 15_000))
    with pytest.raises(ContextOverflowError) as err:
        ReactDriver(tl, model, {}).run_turn("go on")
    assert str(err.value).startswith("the provider still reports a context overflow after 3 ")
    assert str(err.value).endswith(": prompt is too long: 210000 tokens > 200000 maximum")
    assert (err.value.cause, err.value.conversation_id) == (provider, "d")


def test_plan_history_blocks() -> None:
    """``blocks.plan_history``: a system-authored ``react.plan.history`` with its meta."""
    block = blocks.plan_history("1. old plan", superseded_by="b9")
    assert (block.type, block.text, block.author, block.meta) == (
        "react.plan.history",
        "1. old plan",
        "system",
        {"superseded_by": "b9"},
    )


def test_the_codec_refuses_a_padded_type_by_name() -> None:
    with pytest.raises(CodecError, match=r"^Block\.type must be a non-empty name, got ' note'$"):
        encode_block(Block(type=" note", text="x"))
