"""The async store API (apersist, aload, asearch, aget_block, aread) on every backend."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

import index_store._pg_async as pg_async
from tests.helpers.clock import FixedClock
from tests.helpers.store_work import POLICY, arun, load, new_tl, work
from tests.helpers.stores import open_store
from timeline import AsyncIndexStore, ConflictError, HeuristicCounter, Timeline, blocks


async def aload(store: Any, cid: str = "c1") -> Timeline:
    return await Timeline.aload(
        store, cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock()
    )


def test_every_backend_offers_the_async_api(store: Any) -> None:
    """Memory, SQLite and PostgreSQL stores all satisfy AsyncIndexStore."""
    assert isinstance(store, AsyncIndexStore)


def test_apersist_then_aload_renders_identically(store: Any) -> None:
    """apersist/aload round-trip: the same payload, the same versions as the sync path."""
    tl = new_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("Project rule: never touch migrations."), pin=True)
    work(tl, 12)
    before = tl.render("sys")
    assert before.blocks[0].type == "conv.range.summary"

    async def main() -> tuple[int, str, Timeline, int]:
        version = await tl.apersist(store)
        again = await aload(store)
        payload = json.dumps(again.render("sys").to_anthropic())
        again.begin_turn()
        again.append(blocks.user_prompt("and one more thing"))
        return version, payload, again, await again.apersist(store)

    version, payload, again, second = arun(store, main)
    assert (version, second) == (1, 2)
    assert payload == json.dumps(before.to_anthropic())
    fresh = load(store)
    assert fresh.version == 2
    assert fresh.render("sys").to_openai() == again.render("sys").to_openai()


def test_async_reads_match_the_sync_ones(store: Any) -> None:
    """asearch, aget_block, aread and aturn_log answer exactly as search, get_block, read
    and turn_log, evicted blocks included."""
    tl = new_tl()
    work(tl, 14)
    tl.persist(store)
    first = store.turn_log("c1")[1]

    async def main() -> tuple[Any, ...]:
        return (
            await store.asearch("c1", "worker 2 backoff", limit=5),
            await store.aget_block("c1", first.id),
            await store.aread("c1", first.path),
            await store.aturn_log("c1"),
            await store.aturn_log("c1", first.turn_id),
            await store.asearch("c1", "", limit=5),
        )

    hits, got, read, log, turn, none = arun(store, main)
    assert hits and hits == store.search("c1", "worker 2 backoff", limit=5)
    assert got == first == store.get_block("c1", first.id)
    assert read == store.read("c1", first.path)
    assert log == store.turn_log("c1")
    assert turn == store.turn_log("c1", first.turn_id)
    assert none == []


def test_asearch_reads_outside_a_transaction(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's asearch, like search, runs each statement on its own (autocommit),
    with no BEGIN and COMMIT around a read; the pooled connection then writes in a
    transaction again."""
    from psycopg.pq import TransactionStatus

    store = open_store("postgres", tmp_path)
    seen: list[TransactionStatus] = []
    real = pg_async._arun

    async def watched(cur: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(cur.connection.info.transaction_status)
        return await real(cur, *args, **kwargs)

    monkeypatch.setattr(pg_async, "_arun", watched)
    try:
        tl = new_tl()
        work(tl, 3)
        tl.persist(store)
        want = store.search("c1", "worker backoff", limit=5)

        async def main() -> Any:
            hits = await store.asearch("c1", "worker backoff", limit=5)
            work(tl, 1, start=3)
            await tl.apersist(store)
            return hits

        hits = arun(store, main)
        assert hits and hits == want
        assert seen[0] == TransactionStatus.IDLE
        assert seen[1:] and set(seen[1:]) == {TransactionStatus.INTRANS}
    finally:
        store.close()


def test_stale_async_writer_gets_a_conflict_and_loses_nothing(store: Any) -> None:
    """Two timelines from one version: the second apersist is a ConflictError and the
    store still holds the first writer's blocks; the loser keeps its blocks in memory."""
    tl = new_tl()
    work(tl, 2)
    tl.persist(store)
    a, b = load(store), load(store)
    a.begin_turn()
    a.append(blocks.user_prompt("writer a"))
    b.begin_turn()
    b.append(blocks.user_prompt("writer b wants this kept"))

    async def main() -> None:
        await a.apersist(store)
        with pytest.raises(ConflictError):
            await b.apersist(store)

    arun(store, main)
    assert [h.block.text for h in store.search("c1", "writer")] == ["writer a"]
    assert b.blocks[-1].text == "writer b wants this kept"
    assert b.version == 1


def test_many_tasks_persist_concurrently(store: Any) -> None:
    """Twelve conversations apersisted and asearched from concurrent tasks all land."""

    async def one(i: int) -> int:
        tl = new_tl(f"task-{i}")
        work(tl, 3, start=i)
        await tl.apersist(store)
        hits = await store.asearch(f"task-{i}", f"worker {i}")
        return len(hits)

    async def main() -> list[int]:
        return list(await asyncio.gather(*(one(i) for i in range(12))))

    assert all(n > 0 for n in arun(store, main))
    assert sorted(store.conversations()) == sorted(f"task-{i}" for i in range(12))


class SyncOnly:
    """A store with only the sync protocol (a user's own): apersist uses a thread."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.threads: set[str] = set()

    def commit(self, *args: Any, **kwargs: Any) -> int:
        import threading

        self.threads.add(threading.current_thread().name)
        return int(self.inner.commit(*args, **kwargs))

    def load_window(self, cid: str) -> Any:
        return self.inner.load_window(cid)


def test_apersist_on_a_sync_only_store_runs_off_the_loop() -> None:
    """A store without acommit is committed from a worker thread, never the loop's."""
    import threading

    import index_store

    store = SyncOnly(index_store.open("memory://"))
    tl = new_tl()
    work(tl, 2)

    async def main() -> Timeline:
        await tl.apersist(store)  # type: ignore[arg-type]
        return await Timeline.aload(store, "c1", policy=POLICY)  # type: ignore[arg-type]

    again = asyncio.run(main())
    assert threading.main_thread().name not in store.threads
    assert again.version == 1


class GatedStore:
    """A memory store whose acommit waits for the test to open a gate."""

    def __init__(self) -> None:
        import index_store

        self.inner = index_store.open("memory://")
        self.gate = asyncio.Event()

    async def acommit(self, *args: Any, **kwargs: Any) -> int:
        await self.gate.wait()
        return int(self.inner.commit(*args, **kwargs))

    def commit(self, *args: Any, **kwargs: Any) -> int:
        return int(self.inner.commit(*args, **kwargs))

    def load_window(self, cid: str) -> Any:
        return self.inner.load_window(cid)


def test_blocks_appended_while_apersist_is_pending_are_kept() -> None:
    """Appends made while a commit is awaited stay in memory and reach the next persist."""
    store = GatedStore()
    tl = new_tl()
    work(tl, 12)

    async def main() -> None:
        pending = asyncio.create_task(tl.apersist(store))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        tl.begin_turn()
        tl.append(blocks.user_prompt("appended during the commit"))
        store.gate.set()
        await pending
        assert tl.blocks[-1].text == "appended during the commit"
        await tl.apersist(store)  # type: ignore[arg-type]

    asyncio.run(main())
    texts = [b.text for b in store.inner.turn_log("c1")]
    assert "appended during the commit" in texts
    assert Timeline.load(store, "c1", policy=POLICY).blocks[-1].text == (  # type: ignore[arg-type]
        "appended during the commit"
    )


def test_logs_compaction_persist_and_conflict_without_block_text(
    store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Logger ``timeline`` reports compaction start/end with tokens, persist versions and
    conflicts; no record at INFO or above quotes a block's text."""
    secret = "zanzibar-secret-phrase"
    caplog.set_level(logging.DEBUG, logger="timeline")
    tl = new_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"remember {secret}"))
    work(tl, 12)
    tl.persist(store)
    stale = load(store)
    tl.begin_turn()
    tl.append(blocks.user_prompt(secret))
    tl.persist(store)
    stale.begin_turn()
    stale.append(blocks.user_prompt(secret))
    with pytest.raises(ConflictError):
        stale.persist(store)
    messages = [r.getMessage() for r in caplog.records if r.name == "timeline"]
    assert any(m.startswith("compaction start") and "tokens_before=" in m for m in messages)
    assert any(m.startswith("compaction end") and "tokens_after=" in m for m in messages)
    assert any("persist conversation=c1 version=2" in m for m in messages)
    assert any(m.startswith("persist conflict") for m in messages)
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert loud and not any(secret in m or "worker_1.py" in m for m in loud)
