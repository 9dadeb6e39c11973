"""``python -m benchmarks.store`` at a tiny size (the 1M-block run is documented in
docs/benchmarks.md): every backend's row has every figure, as numbers."""

from __future__ import annotations

import argparse
import os
import re

import pytest

from benchmarks import store as bench

FIGURE = re.compile(r"^\d+\.\d / \d+\.\d$")
TIMED = (
    "persist ms (median / p95)",
    "load ms",
    "search common, first after the build ms",
    "search common ms",
    "search rare ms",
    "search two words ms",
    "search one-block conv ms",
)


def _args() -> argparse.Namespace:
    return argparse.Namespace(conversations=3, blocks=20, block_bytes=200, queries=4, loads=2)


def _check(row: dict[str, str]) -> None:
    assert row["blocks"] == "60"
    for name in TIMED:
        assert FIGURE.match(row[name]), (name, row[name])
    assert re.match(r"^\d+\.\d\dx \(\d+ MiB text\)$", row["size / text"])


def test_sqlite_row(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "store.db")
    _check(bench.measure(f"sqlite:///{path}", _args(), lambda s: s.size_bytes()))


def test_postgres_row_settles_the_store() -> None:
    dsn = os.environ.get("BLOCK_TIMELINE_PG_DSN")
    if not dsn:
        pytest.skip("BLOCK_TIMELINE_PG_DSN is not set")
    _check(bench._pg(dsn, _args()))
