"""Shared fixtures: deterministic clock, counting token counter, timeline factory, stores."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import index_store
from timeline import HeuristicCounter, Timeline

# `pytest --hypothesis-profile=mutation` (the mutation run, docs/testing.md): code under
# mutmut's trampolines runs several times slower, so no deadline, and every run of a test
# draws the same examples, so a mutant is killed by what it breaks, not by the draw.
settings.register_profile("mutation", deadline=None, derandomize=True, database=None)


class FixedClock:
    """Ticks one second per call from 2026-01-01T00:00:00Z."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class CountingCounter:
    """Wraps a counter and counts calls and characters (tokenizer work)."""

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner or HeuristicCounter()
        self.calls = 0
        self.chars = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return int(self.inner.count(text))


@pytest.fixture
def make_tl() -> Callable[..., Timeline]:
    def make(conversation_id: str = "c1", **kw: Any) -> Timeline:
        kw.setdefault("clock", FixedClock())
        kw.setdefault("token_counter", HeuristicCounter())
        return Timeline(conversation_id, **kw)

    return make


PG_DSN = os.environ.get("BLOCK_TIMELINE_PG_DSN")
STORE_KINDS = ["memory", "sqlite", "postgres"]


def open_store(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return index_store.open("memory://")
    if kind == "sqlite":
        return index_store.open(f"sqlite:///{tmp_path / 'store.db'}")
    if not PG_DSN:
        pytest.skip("PostgreSQL store tests need BLOCK_TIMELINE_PG_DSN (set by .ci/run)")
    store = index_store.open(PG_DSN)
    for cid in store.conversations():
        store.delete(cid)
    with store._tx() as cur:
        cur.execute("DELETE FROM bt_blocks")
        cur.execute("DELETE FROM bt_checkpoints")
    return store


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    s = open_store(request.param, tmp_path)
    yield s
    s.close()
