"""A long text a streamed commit just wrote is indexed from its row, not from a copy of
its block kept for the index (``_sqlite_commit.LONG_TEXT``): the import then holds one
copy less of it while the index takes it in. Such rows are found like any other, by
words anywhere in them, and a streamed commit keeps no long text for the index."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import index_store
from index_store import _sqlite_commit, _sqlite_index
from timeline import Block
from timeline._io.streamed import StreamedImport


@pytest.fixture
def short_long_text(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """LONG_TEXT made 64 characters; the texts of the blocks the index was handed (None:
    a row it read back)."""
    monkeypatch.setattr(_sqlite_commit, "LONG_TEXT", 64)
    seen: list[str | None] = []
    real = _sqlite_index._Indexer.index

    def spy(self: Any, seq: int, block: Block | None) -> None:
        seen.append(None if block is None else block.text)
        real(self, seq, block)

    monkeypatch.setattr(_sqlite_index._Indexer, "index", spy)
    return seen


def test_long_texts_are_indexed_from_their_rows(
    tmp_path: Path, short_long_text: list[str | None]
) -> None:
    long = "alpha " + "filler " * 40 + "omega"
    data = [{"role": "user", "content": "short beta"}, {"role": "user", "content": long}]
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    streamed = StreamedImport(io.BytesIO(json.dumps(data).encode()), "openai", "c")
    store.commit_stream("c", blocks=streamed, finish=streamed.state)
    assert "short beta" in short_long_text and None in short_long_text  # the long one: its row
    assert long not in short_long_text
    for word, text in (("alpha", long), ("omega", long), ("beta", "short beta")):
        assert [h.block.text for h in store.search("c", word)] == [text]
    assert store.check_integrity() == []
    store.close()


def test_a_streamed_commit_keeps_no_long_text_for_the_index(
    short_long_text: list[str | None],
) -> None:
    """A persist keeps every block it wrote (the timeline holds them anyway: reading one
    back from its row would be a second copy); a streamed commit lets long ones go."""
    from timeline import blocks

    short, long = blocks.note("x" * 63), blocks.note("x" * 64)
    at = _sqlite_commit.CommitRange(1, 5)
    at.wrote(short)
    at.wrote(long)
    assert dict(at.blocks) == {5: short, 6: long}
    at.streamed()
    at.indexed()
    at.wrote(short)
    at.wrote(long)
    assert dict(at.blocks) == {7: short, 8: None}


def test_a_persist_indexes_long_texts_from_the_timeline(
    tmp_path: Path, short_long_text: list[str | None]
) -> None:
    from timeline import Timeline, blocks

    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    tl = Timeline("c")
    tl.begin_turn()
    long = tl.append(blocks.user_prompt("alpha " + "filler " * 40 + "omega")).text
    tl.persist(store)
    assert long in short_long_text
    assert [h.block.text for h in store.search("c", "omega")] == [long]
    store.close()
