"""SQLite schema 2: each block's text stored once, and schema-1 stores upgraded (#16)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import index_store
from index_store._common import decode_block_row, encode_block_row
from tests.helpers.clock import FixedClock
from tests.helpers.search_reference import assert_searches_as_written_now
from timeline import (
    Block,
    CompactionPolicy,
    CorruptRecordError,
    HeuristicCounter,
    Timeline,
    blocks,
)

DATA = Path(__file__).parent.parent / "data"
POLICY = CompactionPolicy(max_tokens=1_500, keep_recent_turns=1)


def observe(url: str) -> dict[str, Any]:
    """What a user sees of conversation ``v1``: turn log, summaries, checkpoints and the
    render of the loaded window (the shape of ``store_v1_expected.json``, its searches
    left out: an upgraded store searches as one written now)."""
    store = index_store.open(url)
    tl = Timeline.load(
        store, "v1", policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock()
    )
    seen = {
        "turn_log": [[b.id, b.type, b.text] for b in store.turn_log("v1")],
        "summaries": [[b.id, b.text] for b in store.summaries("v1")],
        "checkpoints": [c.checkpoint_id for c in store.list_checkpoints("v1")],
        "render": tl.render("sys").to_anthropic(),
    }
    assert store.check_integrity() == []
    assert_searches_as_written_now(store, "v1")
    store.close()
    return seen


def test_a_schema_1_store_opens_upgraded_with_everything_intact(tmp_path: Path) -> None:
    """store_v1.sqlite was written by the schema-1 store (text column, uncompressed body,
    FTS over the column) and store_v1_expected.json is what that code read from it; the
    current code upgrades the file on open and reads exactly the same from a smaller file
    (and searches it as a store written now)."""
    db = tmp_path / "old.sqlite"
    shutil.copy(DATA / "store_v1.sqlite", db)
    before = db.stat().st_size
    expected = json.loads((DATA / "store_v1_expected.json").read_text(encoding="utf-8"))
    del expected["search"], expected["search_unicode"]
    assert json.loads(json.dumps(observe(f"sqlite:///{db}"))) == expected
    with sqlite3.connect(db) as conn:
        versions = conn.execute("SELECT version FROM schema_version ORDER BY 1").fetchall()
        columns = [r[1] for r in conn.execute("PRAGMA table_info(blocks)")]
        unframed = conn.execute("SELECT count(*) FROM blocks WHERE substr(body, 1, 1) != x'c1'")
        assert unframed.fetchone() == (0,)
    assert (versions, "text" in columns) == ([(1,), (2,), (3,), (4,), (5,), (6,)], False)
    assert db.stat().st_size < before
    assert json.loads(json.dumps(observe(f"sqlite:///{db}"))) == expected  # reopened as is


def test_text_is_stored_once(tmp_path: Path) -> None:
    """A new store keeps each block's text in its body only: the text column is empty and
    search still finds and highlights it."""
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    store = index_store.open(url)
    tl = Timeline("c", policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())
    tl.begin_turn()
    tl.append(blocks.user_prompt("Make the retry loop back off. " * 40))
    tl.persist(store)
    hits = store.search("c", "retry")
    assert [h.block.text for h in hits] == ["Make the retry loop back off. " * 40]
    assert "[retry]" in hits[0].snippet
    assert "text" not in [r[1] for r in store._query("PRAGMA table_info(blocks)")]
    rows = store._query("SELECT body FROM blocks")
    assert all(len(r[0]) < len("Make the retry loop back off. " * 40) for r in rows)
    store.close()


def test_compressed_and_plain_bodies_both_decode() -> None:
    """A long body is stored compressed, a short one plain; both decode to the block, and
    a compressed body that does not inflate is a CorruptRecordError."""
    long = Block(type="user.prompt", text="x" * 2_000, id="b1", turn_id="t1", path="p")
    short = Block(type="user.prompt", text="hi", id="b2", turn_id="t1", path="p")
    for block in (long, short):
        assert decode_block_row(encode_block_row(block), "c", block.id) == block
    assert encode_block_row(long)[:1] == b"x" and encode_block_row(short)[:1] != b"x"
    with pytest.raises(CorruptRecordError, match="does not inflate"):
        decode_block_row(b"x\x9cnot zlib", "c", "b1")
