"""``python -m benchmarks.import_shapes`` at a tiny size (the 10 MiB run is in
docs/benchmarks.md): every shape imports, and its row has every figure, as numbers; the
documents are the shapes they are named for."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from benchmarks import import_shapes as bench

ROW = re.compile(
    r"^\d+\.\d s$|^\+\d+ MiB \(\d+\.\dx\)$"
    r"|^\d+\.\d MiB \(\d+\.\d\dx the file, \d+\.\d\dx the text\)$|^\d+\.\d\d s$"
)


@pytest.mark.slow
def test_every_shape_imports_and_is_measured(tmp_path: Path) -> None:
    rows = bench.measure(0.02, tmp_path)
    assert [r[0] for r in rows] == list(bench.SHAPES)
    for name, mib, *figures in rows:
        assert float(mib) < 0.1, name
        for figure in figures:
            assert ROW.match(figure), (name, figure)
    assert "| one base64 image |" in bench.table(rows)


def test_the_shapes_hold_what_they_say() -> None:
    rng = random.Random(1)
    n = 30_000
    tiny, text = bench._tiny(n, rng)
    assert len(bench._compact(tiny)) <= n + 2 and text == len(tiny)
    (big,), text = bench._random_words(n, rng)
    words = big["content"].split()
    assert len(set(words)) > 0.99 * len(words) and text == len(big["content"])
    (one,), text = bench._parts(n, rng)
    assert {p["text"] for p in one["content"]} == {"a"} and len(one["content"]) == text
    calls, _ = bench._arguments(n, rng)
    assert json.loads(calls[1]["tool_calls"][0]["function"]["arguments"])[:2] == [{}, {}]
