"""Edges of ``Timeline.apersist`` / ``Timeline.aload`` (``timeline._core.persist``): a store's
own async API is used when it has one, and a missing conversation is named. Written
against mutants that the broader tests let through."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import index_store
from tests.helpers.conversations import coding_turn
from timeline import NotFoundError, StoreError, Timeline, blocks


class RecordingStore:
    """A memory store with both APIs, recording which one each call went through."""

    def __init__(self) -> None:
        self.inner = index_store.open("memory://")
        self.calls: list[str] = []

    def commit(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append("commit")
        return int(self.inner.commit(*args, **kwargs))

    async def acommit(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append("acommit")
        return int(self.inner.commit(*args, **kwargs))

    def load_window(self, conversation_id: str) -> Any:
        self.calls.append("load_window")
        return self.inner.load_window(conversation_id)

    async def aload_window(self, conversation_id: str) -> Any:
        self.calls.append("aload_window")
        return self.inner.load_window(conversation_id)


def test_the_async_api_of_the_store_is_used_when_it_has_one() -> None:
    """``apersist`` awaits ``acommit`` and ``aload`` awaits ``aload_window``; neither
    falls back to the sync calls in a thread when the store offers the async ones."""
    store = RecordingStore()
    tl = Timeline("c1")
    coding_turn(tl, 0)

    async def main() -> Timeline:
        assert await tl.apersist(store) == 1  # type: ignore[arg-type]
        return await Timeline.aload(store, "c1")  # type: ignore[arg-type]

    again = asyncio.run(main())
    assert store.calls == ["acommit", "aload_window"]
    assert again.blocks == tl.blocks and again.version == 1


def test_aload_of_an_unknown_conversation_names_it() -> None:
    """The ``NotFoundError`` of ``aload`` carries the conversation asked for, like
    ``load``'s."""
    store = index_store.open("memory://")

    def sync() -> Timeline:
        return Timeline.load(store, "nowhere")

    def via_async() -> Timeline:
        return asyncio.run(Timeline.aload(store, "nowhere"))

    for load in (sync, via_async):
        with pytest.raises(NotFoundError, match="'nowhere' is not in the store") as err:
            load()
        assert err.value.conversation_id == "nowhere"


def test_a_pinned_block_is_stored_once_without_a_summary() -> None:
    """Before any compaction the stored window is the whole timeline: a pinned block is
    in it once: persisting leaves the timeline as it was, and loading gives it back."""
    store = index_store.open("memory://")
    tl = Timeline("c1")
    tl.begin_turn()
    tl.append(blocks.user_prompt("Project rule: never touch migrations."), pin=True)
    coding_turn(tl, 0)
    before = tl.blocks
    tl.persist(store)
    assert tl.blocks == before  # nothing evicted, nothing doubled
    again = Timeline.load(store, "c1")
    assert again.blocks == before
    assert again.pinned_ids == tl.pinned_ids


@pytest.mark.parametrize("where", ["agent.db", "sqlite:///agent.db"])
def test_persist_to_a_path_names_index_store_open(
    where: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tl.persist("agent.db")`` is a StoreError naming ``index_store.open``; nothing is
    created and the timeline keeps its blocks."""
    monkeypatch.chdir(tmp_path)
    tl = Timeline("c")
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(StoreError, match=rf"index_store\.open\('{where}'\)"):
        tl.persist(where)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match=r"index_store\.open"):
        asyncio.run(tl.apersist(where))  # type: ignore[arg-type]
    with pytest.raises(StoreError, match=r"index_store\.open"):
        Timeline.load(where, "c")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    assert len(tl.blocks) == 2
    assert tl.version == 0
