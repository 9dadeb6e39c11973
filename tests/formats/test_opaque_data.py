"""Opaque ``data`` (a provider item kept as JSON) is checked at the door: bytes that are
not UTF-8, not one JSON object, or nested too deep are refused with a typed error by
``append``, ``restore`` and ``decode_block``, so no render of the conversation can fail on
them later."""

from __future__ import annotations

import msgspec
import pytest

from timeline import (
    Block,
    CodecError,
    HeuristicCounter,
    InvalidBlockError,
    Timeline,
    blocks,
    decode_block,
    encode_block,
)
from timeline._model.native import NATIVE_MIME
from timeline._model.reasoning import REASONING_MIME

BAD = {
    "not-utf8": b'\xff\xfe{"type": "x"}',
    "utf8-surrogate": b'{"type": "x", "t": "\xed\xa0\x80"}',
    "escaped-surrogate": b'{"type": "x", "t": "\\ud800"}',
    "not-an-object": b'[{"type": "x"}]',
    "not-json": b'{"type": "x"',
    "nested-600": b'{"type": "x", "a": ' + b"[" * 600 + b"]" * 600 + b"}",
    "int-over-64-bits": b'{"type": "x", "n": 123456789012345678901234567890}',
}
HOLDERS = {
    "provider.item": (NATIVE_MIME, {"provider": "anthropic", "kind": "x"}),
    "assistant.reasoning": (REASONING_MIME, {}),
    "assistant.thinking": (REASONING_MIME, {}),
}


def _tl() -> Timeline:
    tl = Timeline("o", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    return tl


def _block(kind: str, data: bytes) -> Block:
    mime, meta = HOLDERS[kind]
    return Block(type=kind, author="assistant", mime=mime, data=data, meta=meta)


@pytest.mark.parametrize("kind", sorted(HOLDERS))
@pytest.mark.parametrize("bad", sorted(BAD))
def test_append_refuses_and_changes_nothing(kind: str, bad: str) -> None:
    """``append`` refuses the block with InvalidBlockError; the timeline is unchanged
    and still renders."""
    tl = _tl()
    before = list(tl.blocks)
    with pytest.raises(InvalidBlockError, match=r"Block\.data"):
        tl.append(_block(kind, BAD[bad]))
    assert list(tl.blocks) == before
    tl.render("").to_openai_responses()


@pytest.mark.parametrize("bad", sorted(BAD))
def test_restore_refuses_a_snapshot_holding_one(bad: str) -> None:
    """``restore`` refuses a snapshot holding such a block, naming where it is."""
    tl = _tl()
    good = tl.append(_block("provider.item", b'{"type": "x"}'))
    snapshot = tl.snapshot()
    hostile = msgspec.structs.replace(good, data=BAD[bad])
    snapshot = msgspec.structs.replace(snapshot, blocks=[*snapshot.blocks[:-1], hostile])
    fresh = Timeline("o", token_counter=HeuristicCounter())
    with pytest.raises(InvalidBlockError, match=r"snapshot\.blocks\[2\]: Block\.data"):
        fresh.restore(snapshot)
    assert list(fresh.blocks) == []


@pytest.mark.parametrize("bad", sorted(BAD))
def test_decode_block_refuses_a_record_holding_one(bad: str) -> None:
    """A stored block record holding such data decodes to a CodecError, never a block."""
    good = _block("assistant.reasoning", b'{"type": "reasoning", "id": "rs_1"}')
    record = encode_block(good).replace(
        msgspec.json.encode(good.data), msgspec.json.encode(BAD[bad])
    )
    with pytest.raises(CodecError, match=r"Block\.data"):
        decode_block(record)


def test_a_good_item_goes_through() -> None:
    """A JSON object of ordinary depth appends, encodes, decodes and renders."""
    tl = _tl()
    item = (
        b'{"type": "reasoning", "id": "rs_1", "summary": [], "x": ' + b"[" * 60 + b"]" * 60 + b"}"
    )
    block = tl.append(_block("assistant.reasoning", item))
    assert decode_block(encode_block(block)) == block
    tl.append(blocks.assistant_completion("done"))
    assert tl.render("").to_openai_responses()[1]["id"] == "rs_1"
