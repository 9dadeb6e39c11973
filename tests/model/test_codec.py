"""Versioned JSON / MessagePack records: round trips, old rows, corrupt and foreign data."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from index_store._common import decode_snapshot_row
from tests.helpers.samples import SAMPLE_BLOCKS
from timeline import CodecError, TimelineSnapshot, TimelineState, decode_block, encode_block
from timeline._compaction.stored_policy import stored_policy
from timeline._model.codec import SCHEMA_VERSION, decode_record, encode_record

DATA = Path(__file__).parent.parent / "data"


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_every_block_type_round_trips(fmt: str) -> None:
    """Every known type and a custom one (with bytes and meta) decode unchanged."""
    for block in SAMPLE_BLOCKS:
        assert block == decode_block(encode_block(block, fmt), fmt)  # type: ignore[arg-type]


def test_json_encoding_is_deterministic() -> None:
    """The same block always encodes to the same bytes (sorted meta keys)."""
    a = SAMPLE_BLOCKS[7]
    b = msgspec.structs.replace(a, meta=dict(reversed(list(a.meta.items()))))
    assert encode_block(a) == encode_block(b)


def test_stored_v1_json_rows_still_decode() -> None:
    """Rows written by schema v1 (tests/data/blocks_v1.jsonl) keep decoding."""
    lines = (DATA / "blocks_v1.jsonl").read_bytes().splitlines()
    assert [decode_block(line) for line in lines] == SAMPLE_BLOCKS


def test_stored_v1_msgpack_rows_still_decode() -> None:
    """MessagePack rows of schema v1 keep decoding."""
    rows = msgspec.msgpack.decode((DATA / "blocks_v1.msgpack").read_bytes())
    assert [decode_block(r, "msgpack") for r in rows] == SAMPLE_BLOCKS


def test_stored_v1_snapshot_still_decodes() -> None:
    """A stored window/snapshot of schema v1 keeps decoding with its state."""
    snap = decode_snapshot_row((DATA / "snapshot_v1.msgpack").read_bytes(), "c1", "window")
    assert (snap.blocks, snap.state.block_seq, snap.state.pinned) == (SAMPLE_BLOCKS, 9, ["b2"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x01garbage", "not a block record"),
        (b'{"schema":"window","v":1,"body":{}}', "expected a 'block' record, found 'window'"),
        (b'{"schema":"block","v":99,"body":{}}', "newer than this library"),
        (b'{"schema":"block","v":1,"body":{"text":"no type"}}', "corrupt block record"),
        (b'{"schema":"block","v":1,"body":{"type":"x","hidden":"yes"}}', "corrupt block record"),
        (b'{"schema":"block","v":0,"body":{"type":"x"}}', "invalid schema version"),
    ],
)
def test_bad_records_raise_codec_error_naming_what_failed(data: bytes, message: str) -> None:
    """Corrupt, foreign, too-new and malformed records raise CodecError with a reason."""
    with pytest.raises(CodecError, match=message):
        decode_block(data)


def test_version_is_written() -> None:
    """Records carry the oldest version that holds them (1 for a block), and a reader takes
    every version up to its own."""
    raw = encode_record("block", SAMPLE_BLOCKS[0], "json")
    assert msgspec.json.decode(raw)["v"] == 1
    newest = encode_record("block", SAMPLE_BLOCKS[0], "json", version=SCHEMA_VERSION)
    assert msgspec.json.decode(newest)["v"] == SCHEMA_VERSION == 2
    assert SAMPLE_BLOCKS[0] == decode_record(newest, "block", type(SAMPLE_BLOCKS[0]), "json")
    with pytest.raises(CodecError, match="cannot write a version 3 record"):
        encode_record("block", SAMPLE_BLOCKS[0], "json", version=SCHEMA_VERSION + 1)
    assert SAMPLE_BLOCKS[0] == decode_record(raw, "block", type(SAMPLE_BLOCKS[0]), "json")


def test_stored_v1_window_still_decodes() -> None:
    """A stored v1 window (block references + hidden overrides + state) keeps decoding and
    reassembles the blocks it names."""
    from index_store._common import assemble_window, decode_window_row

    record = decode_window_row((DATA / "window_v1.msgpack").read_bytes(), "c1")
    stored = {
        b.id: msgspec.structs.replace(b, hidden=False, replacement_text=None) for b in SAMPLE_BLOCKS
    }
    snap = assemble_window(record, stored)
    assert (snap.blocks, snap.state.pinned) == (SAMPLE_BLOCKS, ["b2"])


def test_a_state_stored_before_last_render_loads_its_figures_into_it() -> None:
    """A snapshot written when the last render's system prompt, cost, budget, trigger
    and tools were loose fields of the state loads them into ``state.last_render`` (the
    CLI renders it with them, and a pin is checked against the cost); written again, it
    has only the new shape."""
    tool = {"name": "grep", "description": "Search.", "schema_json": '{"type":"object"}'}
    old_state = {
        "block_seq": 2,
        "system_tokens": 57,
        "budget": 16_000,
        "trigger_ratio": 0.8,
        "system": "You are terse.",
        "tools": [tool],
    }
    old = {"conversation_id": "c", "blocks": [], "state": old_state}
    snapshot = decode_record(encode_record("snapshot", old), "snapshot", TimelineSnapshot)
    last = snapshot.state.last_render
    assert (last.system, last.fixed_tokens, last.budget, last.trigger_ratio) == (
        "You are terse.",
        57,
        16_000,
        0.8,
    )
    assert [t.name for t in last.tools] == ["grep"] and snapshot.state.block_seq == 2
    assert stored_policy(snapshot.state).budget == 16_000
    again = msgspec.msgpack.decode(msgspec.msgpack.encode(snapshot.state))
    assert "system" not in again and "budget" not in again and "tools" not in again
    assert again["last_render"]["fixed_tokens"] == 57
    assert msgspec.convert(again, TimelineState) == snapshot.state
