"""A SQLite store that plain SQLite tools can edit (#29 item 4): the triggers are plain
SQL, so the ``sqlite3`` module (as the ``sqlite3`` shell) updates and deletes rows without
the library's functions; the library then brings its search index up to date, and
``check_integrity()`` reports exactly what such an edit broke."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import index_store
from tests.helpers.clock import FixedClock
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks

POLICY = CompactionPolicy(max_tokens=1_000_000, keep_recent_turns=1)
OF = "seq >> 32 = (SELECT conv_no FROM conversations WHERE conversation_id = '{}')"
"""A block row of a conversation (rows name it by its number, ``seq >> 32``)."""


def build(path: Path) -> None:
    store = index_store.open(f"sqlite:///{path}")
    for cid in ("keep", "drop"):
        tl = Timeline(cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())
        for i in range(3):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"{cid} turn {i}: fix the flaky retry loop"))
            tl.append(blocks.assistant_completion(f"{cid} done {i}: retry now backs off"))
        tl.persist(store)
    store.close()


def test_plain_sqlite_deletes_a_conversation_and_the_store_stays_whole(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    build(db)
    with sqlite3.connect(db) as conn:  # no bt_block_text registered
        conn.execute(f"DELETE FROM blocks WHERE {OF.format('drop')}")
        for table in ("conversations", "checkpoints"):
            conn.execute(f"DELETE FROM {table} WHERE conversation_id = 'drop'")
    store = index_store.open(f"sqlite:///{db}")
    try:
        assert store.conversations() == ["keep"]
        assert store.search("drop", "retry") == []
        assert len(store.search("keep", "retry")) == 6
        assert store.check_integrity() == []
    finally:
        store.close()


def test_plain_sqlite_edits_rows_and_check_integrity_names_them(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    build(db)
    with sqlite3.connect(db) as conn:
        keep, drop = OF.format("keep"), OF.format("drop")
        conn.execute(f"DELETE FROM blocks WHERE {keep} AND block_id = 'b2'")
        conn.execute(
            f"UPDATE blocks SET body = (SELECT body FROM blocks WHERE {drop} "
            f"AND block_id = 'b4') WHERE {drop} AND block_id = 'b3'"
        )
        conn.execute(f"UPDATE blocks SET path = 'moved' WHERE {drop} AND block_id = 'b2'")
    store = index_store.open(f"sqlite:///{db}")
    try:
        problems = store.check_integrity()
        named = {(p.conversation_id, p.block_id) for p in problems}
        assert ("drop", "b3") in named and ("drop", "b2") in named
        assert any(p.conversation_id == "keep" and "'b2'" in str(p) for p in problems)
        assert all(p.conversation_id in ("keep", "drop") for p in problems)
        # the search index followed the edits: the deleted row is gone from it
        found = [h.block.id for h in store.search("keep", "retry", limit=50)]
        assert len(found) == 5 and "b2" not in found
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM fts_pending").fetchone() == (0,)
    finally:
        store.close()


def test_the_schema_calls_no_library_function_when_rows_change(tmp_path: Path) -> None:
    """Every trigger of the file runs under plain SQLite: insert, update and delete."""
    db = tmp_path / "s.db"
    build(db)
    with sqlite3.connect(db) as conn:
        keep = OF.format("keep")
        row = conn.execute(f"SELECT * FROM blocks WHERE block_id = 'b2' AND {keep}").fetchone()
        conn.execute("DELETE FROM blocks WHERE seq = ?", (row[0],))
        conn.execute("INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        conn.execute(f"UPDATE blocks SET body = body WHERE {keep}")
    store = index_store.open(f"sqlite:///{db}")
    try:
        assert store.check_integrity() == []
        assert len(store.search("keep", "retry")) == 6
    finally:
        store.close()


def test_a_call_deleted_with_plain_sql_takes_its_words_from_its_result(tmp_path: Path) -> None:
    """A tool result is indexed with its call's words: when the call's row is deleted
    outside the library, the result is indexed again without them, and the search index
    stays whole (what check_integrity reports is the window naming the deleted call)."""
    db = tmp_path / "s.db"
    store = index_store.open(f"sqlite:///{db}")
    tl = Timeline("c", policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())
    tl.begin_turn()
    first = tl.append(blocks.tool_call("bash", {"cmd": "pytest tests/test_alpha.py"}))
    out = tl.append(blocks.tool_result(first.call_id or "", "2 passed", tool_id="bash"))
    tl.persist(store)
    ((hit,),) = [store.search("c", "test_alpha")]
    assert (hit.block.id, getattr(hit.result, "id", None)) == (first.id, out.id)
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute(f"DELETE FROM blocks WHERE {OF.format('c')} AND block_id = ?", (first.id,))
    store = index_store.open(f"sqlite:///{db}")
    try:
        assert store.search("c", "test_alpha") == []
        assert [h.block.id for h in store.search("c", "passed")] == [out.id]
        assert [p.block_id for p in store.check_integrity()] == [first.id]
    finally:
        store.close()
