"""SQLite schema 4: a block row names its conversation by its number (``seq >> 32``)
alone, so a store's size does not grow with the length of conversation ids, and schema-3
files upgrade on open (#28 item 6)."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import index_store
from tests.helpers.clock import FixedClock
from tests.helpers.migrations import expected, observe
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks

DATA = Path(__file__).parent.parent / "data"
UUID = "0b9f6c2e-4d1a-4c8e-9f3b-7a5d2e6c1f80"


def test_a_block_row_holds_no_conversation_id(tmp_path: Path) -> None:
    """The block table has no ``conversation_id`` column; its indexes are keyed by the
    conversation's number, an expression of ``seq`` (the summaries' by ``seq`` alone)."""
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    try:
        columns = [r[1] for r in store._query("PRAGMA table_info(blocks)")]
        indexes = dict(
            store._query(
                "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'blocks' AND type = 'index'"
            )
        )
    finally:
        store.close()
    assert columns == ["seq", "block_id", "kind", "turn_id", "path", "type", "body"]
    assert {n: re.sub(r".*\((.*)\)", r"\1", s) for n, s in indexes.items()} == {
        "blocks_id": "seq >> 32, block_id",
        "blocks_turn": "seq >> 32, turn_id",
        "blocks_path": "seq >> 32, path",
        "blocks_summaries": "seq WHERE kind = 'summary'",
    }


def _tiny_store(path: Path, cid: str, count: int) -> int:
    """Bytes of a store holding one conversation of ``count`` one-letter notes."""
    store = index_store.open(f"sqlite:///{path}")
    tl = Timeline(cid, token_counter=HeuristicCounter(), clock=FixedClock())
    tl.begin_turn()
    for _ in range(count):
        tl.append(blocks.note("a"))
    tl.persist(store)
    size = store.size_bytes()
    store.close()
    return size


def test_the_size_of_a_block_does_not_depend_on_its_conversation_id(tmp_path: Path) -> None:
    """Tiny blocks of a conversation named by a UUID take what those of one named ``c``
    take (schema 3 kept the id in the row and in its three indexes: about 150 bytes more
    a block)."""
    count = 4_000
    named = _tiny_store(tmp_path / "uuid.db", UUID, count)
    short = _tiny_store(tmp_path / "c.db", "c", count)
    assert (named - short) / count < 2


def _plans(store: Any, sql: str) -> list[str]:
    return [r[3] for r in store._conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()]


def test_every_query_of_a_conversations_blocks_uses_an_index_or_its_range(
    tmp_path: Path,
) -> None:
    """Each statement the store runs on the block table to persist, load, get, read,
    list a turn, the turn log and summaries, search and delete is a search of an
    expression index or of the conversation's ``seq`` range, never a scan of the table;
    get_block, read and turn_log by turn use the indexes on ``seq >> 32``."""
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    seen: list[str] = []
    policy = CompactionPolicy(max_tokens=400, keep_recent_turns=1)
    try:
        for cid in ("other", UUID):
            tl = Timeline(cid, policy=policy, token_counter=HeuristicCounter(), clock=FixedClock())
            for i in range(6):
                turn = tl.begin_turn()
                tl.append(blocks.user_prompt(f"make the retry loop back off {i} " * 8))
                tl.append(blocks.assistant_completion(f"done {i}: jittered backoff " * 8))
                tl.render("sys")
                if cid == UUID and i == 5:
                    store._conn.set_trace_callback(seen.append)
                tl.persist(store)
        assert store.summaries(UUID)
        first = store.turn_log(UUID)[0]
        Timeline.load(store, UUID, policy=policy, token_counter=HeuristicCounter())
        lookups = len(seen)
        assert store.get_block(UUID, first.id) == first
        assert store.read(UUID, first.path) == [first]
        assert store.turn_log(UUID, turn)
        keyed = seen[lookups:]
        store.turn_log(UUID)
        store.search(UUID, "backoff")
        store.delete(UUID)
        store._conn.set_trace_callback(None)
        plans = {sql: _plans(store, sql) for sql in seen if re.search(r"\bblocks\b", sql)}
        assert [n for n in ("blocks_id", "blocks_path", "blocks_turn") if n in str(plans)]
        for sql in keyed:
            used = " ".join(_plans(store, sql))
            assert re.search(
                r"SEARCH blocks USING INDEX blocks_(id|path|turn) \(<expr>=\?", used
            ), (
                sql,
                used,
            )
    finally:
        store.close()
    for sql, plan in plans.items():
        assert not [p for p in plan if re.match(r"SCAN (blocks|b)\b", p)], (sql, plan)
    assert len(keyed) == 3


def test_a_schema_3_sqlite_store_upgrades_to_schema_6(tmp_path: Path) -> None:
    """store_v3.sqlite was written by the schema-3 code (``tests/data/write_store_v3.py``)
    and store_v3_expected.json is what that code read from it; the current code upgrades
    the file on open (the block table rebuilt, the search index made again, then VACUUM)
    and reads exactly the same."""
    db = tmp_path / "v3.sqlite"
    shutil.copy(DATA / "store_v3.sqlite", db)
    before = db.stat().st_size
    want = expected("store_v3_expected.json")
    assert observe(f"sqlite:///{db}") == want
    with sqlite3.connect(db) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
        columns = [r[1] for r in conn.execute("PRAGMA table_info(blocks)")]
        pending = conn.execute("SELECT count(*) FROM fts_pending").fetchone()
        free = conn.execute("PRAGMA freelist_count").fetchone()
    assert (versions, "conversation_id" in columns, pending) == ([1, 2, 3, 4, 5, 6], False, (0,))
    assert free == (0,)  # the old table's pages given back
    # no bigger but for a page of each of the search index's tables and indexes
    # (search_docs, search_links, blocks_summaries, search_most), which a store this
    # small fills
    assert db.stat().st_size <= before + 4 * 4096
    assert observe(f"sqlite:///{db}") == want  # reopened: nothing left to upgrade


def test_a_damaged_schema_3_row_is_copied_as_it_is_and_still_reported(tmp_path: Path) -> None:
    """A schema-3 row that does not decode keeps its bytes through the upgrade, and
    check_integrity names it after; the other conversation reads as before."""
    db = tmp_path / "v3.sqlite"
    shutil.copy(DATA / "store_v3.sqlite", db)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE blocks SET body = x'c100ff' WHERE conversation_id = 'conv-b' "
            "AND block_id = 'b9'"
        )
    store = index_store.open(f"sqlite:///{db}")
    try:
        problems = store.check_integrity()
        log = store.turn_log("conv-a")
        body = store._query(
            "SELECT body FROM blocks WHERE block_id = 'b9' AND seq >> 32 = "
            "(SELECT conv_no FROM conversations WHERE conversation_id = 'conv-b')"
        )
    finally:
        store.close()
    assert body == [(b"\xc1\x00\xff",)]
    assert ("conv-b", "b9") in {(p.conversation_id, p.block_id) for p in problems}
    want = expected("store_v3_expected.json")["conv-a"]["turn_log"]
    assert (
        json.loads(json.dumps([[b.id, b.type, b.turn_id, b.path, b.text, b.meta] for b in log]))
        == want
    )


def test_a_row_of_no_conversation_is_reported(tmp_path: Path) -> None:
    """A row whose number is no conversation's (its conversation's row deleted by hand)
    is a problem check_integrity names by block id and row."""
    db = tmp_path / "s.db"
    store = index_store.open(f"sqlite:///{db}")
    tl = Timeline("c", token_counter=HeuristicCounter(), clock=FixedClock())
    tl.begin_turn()
    tl.append(blocks.user_prompt("orphaned soon"))
    tl.persist(store)
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM conversations WHERE conversation_id = 'c'")
    store = index_store.open(f"sqlite:///{db}")
    try:
        problems = store.check_integrity()
    finally:
        store.close()
    orphans = [p for p in problems if "belongs to no conversation" in str(p)]
    assert sorted(p.block_id for p in orphans) == ["b1", "b2"]


def test_a_conversation_takes_one_number_however_often_it_is_written(tmp_path: Path) -> None:
    """Every commit of a conversation keeps its number, and the next conversation takes
    the next one (numbers are ``seq``'s top 31 bits: a commit must not use one up)."""
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    try:
        for cid in ("a", "b"):
            tl = Timeline(cid, token_counter=HeuristicCounter(), clock=FixedClock())
            for _ in range(3):
                tl.begin_turn()
                tl.append(blocks.user_prompt("again"))
                tl.persist(store)
        numbers = store._query("SELECT conversation_id, conv_no FROM conversations ORDER BY 1")
    finally:
        store.close()
    assert numbers == [("a", 1), ("b", 2)]
