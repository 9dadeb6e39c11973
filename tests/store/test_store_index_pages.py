"""The SQLite search index is brought up to date a page of queued rows at a time
(``_sqlite_index.PAGE``): a first persist of more rows than a page, and a plain-SQL edit
of every row, leave every row found once, at the page edges too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import index_store
from index_store._sqlite_index import PAGE
from timeline import HeuristicCounter, Timeline, blocks

N = 2 * PAGE + 60
EDGES = (0, 1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE - 1, 2 * PAGE, N - 1)


def _word(i: int) -> str:
    return "w" + "".join("abcdefghij"[int(d)] for d in str(i))  # w0 -> "wa", w12 -> "wbc"


def _found(store: object, i: int) -> list[str]:
    return [h.block.text for h in store.search("c", _word(i))]  # type: ignore[attr-defined]


def test_more_rows_than_a_page_are_all_indexed_once(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = index_store.open(f"sqlite:///{db}")
    tl = Timeline("c", token_counter=HeuristicCounter())
    tl.begin_turn()
    for i in range(N):
        tl.append(blocks.note(f"note {_word(i)}"))
    tl.persist(store)  # one commit queues every row
    try:
        for i in EDGES:
            assert _found(store, i) == [f"note {_word(i)}"]
        assert len(store.search("c", "note", limit=N + 5)) == N
    finally:
        store.close()
    with sqlite3.connect(db) as conn:  # every row changed outside the library
        conn.execute("UPDATE blocks SET body = body")  # the store holds conversation c alone
        queued = conn.execute("SELECT count(*) FROM fts_pending").fetchone()[0]
    assert queued == N + 1  # and the turn header
    store = index_store.open(f"sqlite:///{db}")
    try:
        for i in EDGES:
            assert _found(store, i) == [f"note {_word(i)}"]
        assert len(store.search("c", "note", limit=N + 5)) == N
        assert store.check_integrity() == []
    finally:
        store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM fts_pending").fetchone()[0] == 0
