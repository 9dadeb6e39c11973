"""The import rows of ``python -m benchmarks.store`` on small files: each import runs in
a fresh process, and the store of tiny messages is measured against the file and its
text, with where its bytes go."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from benchmarks.store import IMPORT_ID, imports


@pytest.mark.slow
def test_the_import_rows_measure_time_memory_and_the_store(tmp_path: Path) -> None:
    out = imports(argparse.Namespace(import_mb=1, tiny_mb=1, import_id=IMPORT_ID), tmp_path)
    row = out["timeline import tiny messages into SQLite"]
    found = re.search(r"store [\d.]+ MiB \(([\d.]+)x the file, ([\d.]+)x the text\)", row)
    assert found is not None, row
    # a one-character message: about 30 bytes of JSON around one byte of text
    assert float(found[2]) > 20 * float(found[1]) > 0
    assert "+" in out["timeline import one big string into SQLite"]
    per_block = out["tiny messages: store bytes a block"]
    assert per_block == "" or per_block.startswith("blocks ")
