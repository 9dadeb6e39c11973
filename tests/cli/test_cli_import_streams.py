"""``timeline import`` reads a pipe, a FIFO or standard input with its format detected,
and an import that fails writing a new store (a full disk) leaves no file behind and
names ``--db``."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import index_store
from timeline import Timeline

RESPONSES = {
    "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "list the files"}]},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py b.py " * 3000},
        {"type": "message", "role": "assistant", "content": "Two files."},
    ],
}


def _run(*args: str, stdin: bytes | None = None, limit: int | None = None) -> Any:
    def fence() -> None:  # writes past ``limit`` bytes fail as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        assert limit is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "timeline", "import", *args],
        input=stdin,
        capture_output=True,
        preexec_fn=fence if limit is not None else None,
        timeout=120,
    )


def _imported(db: Path, conversation: str) -> Timeline:
    store = index_store.open(str(db))
    try:
        return Timeline.load(store, conversation)
    finally:
        store.close()


def test_a_fifo_without_format_is_detected_and_imported(tmp_path: Path) -> None:
    """A FIFO (one read, no seeking) imports with its format detected from the bytes
    detection already read."""
    fifo = tmp_path / "conv.fifo"
    os.mkfifo(fifo)
    data = json.dumps(RESPONSES).encode()

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    done = _run(str(fifo), "--db", str(tmp_path / "f.db"), "--conversation", "f")
    writer.join()
    assert done.returncode == 0, done.stderr
    assert b"format responses (detected)" in done.stdout
    tl = _imported(tmp_path / "f.db", "f")
    assert [b.type for b in tl.blocks].count("react.tool.result") == 1


def test_standard_input_is_read_with_a_dash(tmp_path: Path) -> None:
    """``-`` reads standard input, format detected too."""
    done = _run(
        "-",
        "--db",
        str(tmp_path / "s.db"),
        "--conversation",
        "s",
        stdin=json.dumps(RESPONSES).encode(),
    )
    assert done.returncode == 0, done.stderr
    assert b"format responses (detected)" in done.stdout
    assert _imported(tmp_path / "s.db", "s").blocks


@pytest.mark.parametrize("limit", [20_000, 40_000, 100_000])
def test_a_failed_import_leaves_no_file_and_names_the_db(tmp_path: Path, limit: int) -> None:
    """Writes failing part way (a disk that fills up while the new store is built, or
    while the import commits): the import fails naming ``--db``, never its temporary
    file, and leaves no file of the store behind."""
    source = tmp_path / "in" / "conv.json"
    source.parent.mkdir()
    source.write_text(json.dumps(RESPONSES))
    out = tmp_path / "out"
    out.mkdir()
    db = out / "agent.db"
    done = _run(str(source), "--db", str(db), "--conversation", "c", limit=limit)
    assert done.returncode == 1
    message = done.stderr.decode()
    assert f"--db {db}" in message and "importing" not in message
    assert sorted(os.listdir(out)) == []
