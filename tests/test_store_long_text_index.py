"""A long text the SQLite store just wrote is indexed from its row by SQL, not from a
Python copy kept for the index (``_sqlite_commit.LONG_TEXT``): a streamed import then
holds one copy less of it while FTS5 takes it in. Such rows are found like any other,
by words anywhere in them, and a commit keeps no long text for the index."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import index_store
from index_store import _sqlite_commit, _sqlite_search
from timeline.io.streamed import StreamedImport


@pytest.fixture
def short_long_text(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, Any, bool]]:
    """LONG_TEXT made 64 characters; the rows indexed, with their text and ``ours``."""
    monkeypatch.setattr(_sqlite_commit, "LONG_TEXT", 64)
    seen: list[tuple[int, Any, bool]] = []
    real = _sqlite_search._index_row

    def spy(db: Any, seq: int, indexed: Any, text: Any, ours: bool = False) -> None:
        seen.append((seq, text, ours))
        real(db, seq, indexed, text, ours)

    monkeypatch.setattr(_sqlite_search, "_index_row", spy)
    return seen


def test_long_texts_are_indexed_from_their_rows(
    tmp_path: Path, short_long_text: list[tuple[int, Any, bool]]
) -> None:
    long = "alpha " + "filler " * 40 + "omega"
    data = [{"role": "user", "content": "short beta"}, {"role": "user", "content": long}]
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    streamed = StreamedImport(io.BytesIO(json.dumps(data).encode()), "openai", "c")
    store.commit_stream("c", blocks=streamed, finish=streamed.state)
    texts = [text for _, text, ours in short_long_text if ours]
    assert "short beta" in texts and None in texts  # the long one came from its row
    assert long not in texts
    for word, text in (("alpha", long), ("omega", long), ("beta", "short beta")):
        assert [h.block.text for h in store.search("c", word)] == [text]
    assert store.check_integrity() == []
    store.close()


def test_a_streamed_commit_keeps_no_long_text_for_the_index(
    short_long_text: list[tuple[int, Any, bool]],
) -> None:
    """A persist keeps every text it wrote (the timeline holds them anyway: reading one
    back from its row would be a second copy); a streamed commit lets long ones go."""
    at = _sqlite_commit.CommitRange(1, 5)
    at.wrote("x" * 63)
    at.wrote("x" * 64)
    assert dict(at.texts) == {5: "x" * 63, 6: "x" * 64}
    at.streamed()
    at.indexed()
    at.wrote("x" * 63)
    at.wrote("x" * 64)
    assert dict(at.texts) == {7: "x" * 63, 8: None}


def test_a_persist_indexes_long_texts_from_the_timeline(
    tmp_path: Path, short_long_text: list[tuple[int, Any, bool]]
) -> None:
    from timeline import Timeline, blocks

    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    tl = Timeline("c")
    tl.begin_turn()
    long = tl.append(blocks.user_prompt("alpha " + "filler " * 40 + "omega")).text
    tl.persist(store)
    assert long in [text for _, text, ours in short_long_text if ours]
    assert [h.block.text for h in store.search("c", "omega")] == [long]
    store.close()
