"""SQLite search over long texts (#28): FTS5's ``highlight()`` and ``snippet()`` over one
document take time quadratic in its instances of a term (a search hitting one 20 MiB
text of a common word ran for minutes). Rows of ``LONG_TOKENS`` tokens or more are
counted from their text indexed again in pieces, and get their snippet from
``make_snippet``: the same hits and the same scores as counting the whole document."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import index_store
from index_store import _sqlite_search
from index_store._common import make_snippet
from timeline import Timeline, blocks

WORDS = ["retry", "retries", "backoff", "loop", "make", "the", "off", "jitter", "queue"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.fixture
def store(tmp_path: Path) -> Any:
    rng = random.Random(3)
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    tl = Timeline("c")
    for n in (9_000, 12_000, 40, 300, 8_191, 8_192):
        tl.begin_turn()
        tl.append(blocks.user_prompt(_text(rng, n)))
    tl.begin_turn()
    tl.append(blocks.user_prompt("only jitter here " * 5_000))  # long, one term of two
    tl.persist(store)
    yield store
    store.close()


def _ranked(store: Any, terms: list[str]) -> tuple[list[tuple[int, float]], bool]:
    lo = store._query("SELECT conv_no FROM conversations")[0][0] << 32
    scored, every = _sqlite_search.rank(store._conn, lo, lo | 0xFFFFFFFF, terms)
    return sorted(scored), every


@pytest.mark.parametrize(
    "terms", [["retry"], ["retri"], ["backoff", "queue"], ["jitter", "nowhere"], ["here", "loop"]]
)
def test_long_rows_score_as_the_whole_document(
    store: Any, monkeypatch: pytest.MonkeyPatch, terms: list[str]
) -> None:
    pieces = _ranked(store, terms)
    assert any(s for s, _ in pieces[0])
    monkeypatch.setattr(_sqlite_search, "LONG_TOKENS", 10**9)  # every row by highlight()
    assert _ranked(store, terms) == pieces


def test_long_rows_are_counted_from_pieces(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    real = _sqlite_search._long_counts

    def spy(db: Any, lo: int, hi: int, terms: list[str]) -> dict[int, list[int]]:
        found = real(db, lo, hi, terms)
        asked.extend(found)
        return found

    monkeypatch.setattr(_sqlite_search, "_long_counts", spy)
    _ranked(store, ["retry"])
    assert len(asked) == 3  # the 9,000, 12,000 and 8,192 words holding it (not 8,191)
    asked.clear()
    _ranked(store, ["jitter"])
    assert len(asked) == 4  # and the 15,000 of "only jitter here"


def test_a_long_hit_gets_a_snippet_around_its_first_term(store: Any) -> None:
    hits = store.search("c", "jitter", limit=10)
    long = [h for h in hits if h.block.text.startswith("only jitter here")]
    assert long and long[0].snippet == make_snippet(long[0].block.text, ["jitter"])
    short = [h for h in hits if len(h.block.text) < _sqlite_search.SNIPPET_FROM_FTS]
    assert short and all("[jitter]" in h.snippet for h in short)
