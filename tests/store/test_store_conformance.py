"""One conformance suite for every index store backend (memory, sqlite, postgres)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.store_work import load, new_tl, work
from timeline import (
    Block,
    ConflictError,
    CorruptRecordError,
    DuplicateBlockIdError,
    NotFoundError,
    blocks,
)
from timeline._driver.memory_tools import memory_read_tool, read_path_tool


def test_persist_then_load_renders_identically(store: Any) -> None:
    """Timeline.load gives byte-identical payloads (pins, hidden blocks, checkpoints)."""
    tl = new_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("Project rule: never touch migrations."), pin=True)
    work(tl, 12)
    tl.hide([tl.blocks[-2].path], "(hidden output)")
    before = tl.render("sys")
    assert before.blocks[0].type == "conv.range.summary"
    assert tl.persist(store) == 1
    again = load(store)
    after = again.render("sys")
    assert json.dumps(before.to_anthropic()) == json.dumps(after.to_anthropic())
    assert before.to_openai_responses() == after.to_openai_responses()
    assert before.cache_points == after.cache_points


def test_persist_evicts_and_archives_everything(store: Any) -> None:
    """After persist only the window stays in memory; every appended block is in the turn
    log by id, path and turn; summaries are index-only."""
    tl = new_tl()
    appended = []
    for i in range(14):  # two compactions at least
        tl.begin_turn()
        appended.append(tl.append(blocks.user_prompt(f"question {i} " + "q" * 600)))
        appended.append(tl.append(blocks.assistant_completion(f"answer {i} " + "a" * 600)))
        tl.render("sys")
    in_memory = len(tl.blocks)
    made = [b.id for b in tl.blocks if b.type == "conv.range.summary"]
    assert len(made) >= 2
    tl.persist(store)
    assert len(tl.blocks) < in_memory
    assert tl.blocks[0].type == "conv.range.summary"
    log = store.turn_log("c1")
    assert all(b.type != "conv.range.summary" for b in log)
    assert made == [s.id for s in store.summaries("c1")]
    logged = {b.id for b in log}
    for b in appended:
        assert b.id in logged
        assert b == store.get_block("c1", b.id)
        assert b in store.read("c1", b.path)
        assert b in store.turn_log("c1", b.turn_id)


def test_versions_increase_and_continue_after_load(store: Any) -> None:
    """Each persist bumps the version; a loaded timeline continues from it."""
    tl = new_tl()
    work(tl, 2)
    assert (tl.persist(store), tl.persist(store)) == (1, 2)
    again = load(store)
    assert again.version == 2
    work(again, 1, start=2)
    assert again.persist(store) == 3
    ids = [b.id for b in store.turn_log("c1")]
    assert len(ids) == len(set(ids))


def test_stale_writer_gets_a_conflict_and_loses_nothing(store: Any) -> None:
    """Two timelines from one version: the second persist conflicts, nothing is written;
    after reloading, its blocks persist once."""
    base = new_tl()
    work(base, 1)
    base.persist(store)
    a, b = load(store), load(store)
    work(a, 1, start=10)
    a.persist(store)
    b.begin_turn()
    mine = b.append(blocks.user_prompt("from the second writer"))
    before = [x.id for x in store.turn_log("c1")]
    with pytest.raises(ConflictError) as err:
        b.persist(store)
    assert (err.value.expected, err.value.actual) == (1, 2)
    assert before == [x.id for x in store.turn_log("c1")]
    retry = load(store)
    retry.begin_turn()
    retry.append(blocks.user_prompt(mine.text))
    retry.persist(store)
    texts = [x.text for x in store.turn_log("c1")]
    assert texts.count("from the second writer") == 1


def test_same_block_twice_is_idempotent_but_a_different_one_is_refused(store: Any) -> None:
    """Re-persisting identical blocks (after restore) is fine; reusing an id for other
    content raises and writes nothing."""
    tl = new_tl()
    work(tl, 1)
    snap = tl.snapshot()
    tl.persist(store)
    tl.restore(snap)
    tl.persist(store)
    assert len(snap.blocks) == len(store.turn_log("c1"))
    other = load(store)
    other.begin_turn()

    forged = Block(type="user.prompt", text="different", id=snap.blocks[1].id)
    other.clear()
    other.begin_turn()
    other.append(forged)
    version = other.version
    with pytest.raises(DuplicateBlockIdError):
        other.persist(store)
    assert version == load(store).version


@pytest.mark.parametrize(
    "query",
    [
        "retry logic",
        'retry" OR 1=1 --',
        "NOT AND OR ( ) * : ^ -worker",
        "'; DROP TABLE blocks; --",
        "ünïcödé 重试",
        "",
    ],
)
def test_search_never_breaks_on_user_text(store: Any, query: str) -> None:
    """Any user query text runs (no syntax errors) and returns well-formed hits."""
    tl = new_tl()
    work(tl, 3)
    tl.persist(store)
    hits = store.search("c1", query, limit=5)
    assert len(hits) <= 5
    for h in hits:
        assert (h.path, h.turn_id) == (h.block.path, h.block.turn_id)


def test_search_finds_evicted_blocks_and_summaries(store: Any) -> None:
    """Evicted blocks stay searchable with path, turn and snippet; other conversations
    never leak in."""
    tl = new_tl()
    work(tl, 12)
    tl.persist(store)
    other = new_tl("c2")
    work(other, 2)
    other.persist(store)
    first = store.turn_log("c1")[1]
    assert first.id not in {b.id for b in tl.blocks}  # evicted from memory
    hits = store.search("c1", "worker 0 flaky", limit=3)
    assert hits and hits[0].block.id == first.id
    assert (hits[0].path, hits[0].turn_id) == ("ar:t1.user.prompt", "t1")
    assert "worker" in hits[0].snippet.lower()
    assert all(
        h.block.id in {b.id for b in store.turn_log("c1")} | {s.id for s in store.summaries("c1")}
        for h in store.search("c1", "worker", limit=50)
    )
    assert "summary" in {h.kind for h in store.search("c1", "Goal", limit=50)}


def test_memory_tools_bring_evicted_content_back(store: Any) -> None:
    """memory_read finds archived blocks (hits in meta for the digest); read_path returns
    the full text of an evicted path."""
    tl = new_tl()
    work(tl, 12)
    tl.persist(store)
    out = memory_read_tool(store, "c1")({"query": "flaky worker 0"})
    assert out.meta["hits"][0] == {"path": "ar:t1.user.prompt", "turn_id": "t1"}
    path = store.turn_log("c1", "t1")[3].path
    back = read_path_tool(store, "c1")({"path": path})
    assert back.text.startswith("def retry_0():")
    assert read_path_tool(store, "c1")({"path": "nope"}).is_error


def test_checkpoints(store: Any) -> None:
    """Seed 002's checkpoint store: save, load, list, delete by id."""
    tl = new_tl()
    work(tl, 2)
    store.save_checkpoint("c1", "step-1", tl.snapshot())
    work(tl, 1, start=5)
    store.save_checkpoint("c1", "step-2", tl.snapshot())
    assert [c.checkpoint_id for c in store.list_checkpoints("c1")] == ["step-1", "step-2"]
    restored = new_tl()
    restored.restore(store.load_checkpoint("c1", "step-1"))
    assert len({b.turn_id for b in restored.blocks}) == 2
    assert store.delete_checkpoint("c1", "step-1")
    assert not store.delete_checkpoint("c1", "step-1")
    with pytest.raises(NotFoundError):
        store.load_checkpoint("c1", "step-1")


def test_delete_removes_one_conversation_only(store: Any) -> None:
    """delete(conversation) removes its window, log, summaries and checkpoints only."""
    for cid in ("c1", "c2"):
        tl = new_tl(cid)
        work(tl, 3)
        tl.persist(store)
        store.save_checkpoint(cid, "k", tl.snapshot())
    assert store.delete("c1")
    assert store.load_window("c1") is None
    assert [] == store.turn_log("c1") == store.list_checkpoints("c1")
    assert store.search("c1", "worker") == []
    assert store.load_window("c2") is not None and store.turn_log("c2")
    assert store.conversations() == ["c2"]


def test_unknown_conversation(store: Any) -> None:
    """Loading or reading an unknown conversation is a typed NotFoundError."""
    with pytest.raises(NotFoundError):
        load(store, "missing")
    with pytest.raises(NotFoundError):
        store.get_block("missing", "b1")


def corrupt_row(store: Any, cid: str, block_id: str) -> None:
    kind = type(store).__name__
    if kind == "MemoryStore":
        conv = store._data[cid]
        conv.rows[block_id] = conv.rows[block_id]._replace(body=b"\x93garbage")
    elif kind == "SqliteStore":
        with store._tx() as db:
            db.execute(
                "UPDATE blocks SET body = x'00ff' WHERE seq >> 32 = (SELECT conv_no FROM "
                "conversations WHERE conversation_id = ?) AND block_id = ?",
                (cid, block_id),
            )
    else:
        with store._tx() as cur:
            cur.execute(
                "UPDATE bt_blocks SET body = '\\x00ff' "
                "WHERE conversation_id = %s AND block_id = %s",
                (cid, block_id),
            )


def test_corrupt_row_is_a_typed_error_and_others_are_unaffected(store: Any) -> None:
    """A corrupted stored block raises CorruptRecordError naming conversation and row;
    other conversations keep working."""
    for cid in ("c1", "c2"):
        tl = new_tl(cid)
        work(tl, 2)
        tl.persist(store)
    victim = store.turn_log("c1")[1].id
    corrupt_row(store, "c1", victim)
    with pytest.raises(CorruptRecordError) as err:
        store.get_block("c1", victim)
    assert ("c1", victim) == (err.value.conversation_id, err.value.block_id)
    assert "c1" in str(err.value) and victim in str(err.value)
    assert len(store.turn_log("c2")) == 10
    assert load(store, "c2").render("sys").blocks


def test_a_conflict_error_keeps_its_message() -> None:
    """ConflictError passed ``None`` to TimelineError would read "None"."""
    err = ConflictError("conversation c was saved by another writer", expected=3, actual=4)
    assert str(err) == "conversation c was saved by another writer"
    assert (err.expected, err.actual) == (3, 4)
