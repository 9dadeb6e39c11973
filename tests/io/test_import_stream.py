"""Streaming import: the same timeline as the whole-document importer, in about the memory
of the blocks themselves, with a progress bar only on a terminal."""

from __future__ import annotations

import codecs
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import ANTHROPIC_MESSAGES, OPENAI_MESSAGES, cli_on_tty, import_file
from timeline._io.importers import import_messages
from timeline._io.stream import import_file as stream_file
from timeline._model.errors import InvalidBlockError


def _plain(blocks: Any) -> list[tuple[str, str, str, str | None]]:
    return [(b.type, b.text, b.path, b.call_id) for b in blocks]


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        (OPENAI_MESSAGES, "openai"),
        ({"messages": OPENAI_MESSAGES}, "openai"),
        (ANTHROPIC_MESSAGES, "anthropic"),
        ({"messages": ANTHROPIC_MESSAGES["messages"], "system": "later"}, "anthropic"),
        (
            {
                "system": [{"type": "text", "text": "a list"}],
                "messages": ANTHROPIC_MESSAGES["messages"],
            },
            "anthropic",
        ),
    ],
)
def test_stream_matches_the_whole_document_importer(data: Any, fmt: Any) -> None:
    """Blocks and the skipped-system count equal import_messages' for every input shape."""
    streamed, skipped = stream_file(io.BytesIO(json.dumps(data).encode()), fmt, "c")
    whole, whole_skipped = import_messages(data, fmt, "c")
    assert _plain(whole.blocks) == _plain(streamed.blocks)
    assert whole_skipped == skipped


def test_a_utf8_bom_is_skipped() -> None:
    """A file starting with a UTF-8 byte order mark imports like one without."""
    raw = codecs.BOM_UTF8 + json.dumps(OPENAI_MESSAGES).encode()
    streamed, _ = stream_file(io.BytesIO(raw), "openai", "c")
    assert len(streamed.blocks) == 10


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{nope", "not valid JSON"),
        (b'[{"role": "user", "content": "hi"}', "not valid JSON"),
        (b'{"messages": 3}', "messages: expected a list"),
        (b'{"other": []}', "messages: expected a list"),
        (b"42", "messages: expected a list"),
        (b"", "not valid JSON"),
    ],
)
def test_bad_documents_are_typed_errors(raw: bytes, message: str) -> None:
    """Broken or misshapen JSON raises InvalidBlockError saying what is wrong."""
    with pytest.raises(InvalidBlockError, match=message):
        stream_file(io.BytesIO(raw), "openai", "c")


def test_memory_is_about_the_blocks_not_the_document_twice() -> None:
    """Peak Python memory while importing stays under 1.5x the file (the whole-document
    path needs about 2x: the parsed document and the blocks)."""
    result = "a log line with a few words in it\n" * 1500
    messages: list[dict[str, Any]] = []
    for n in range(60):
        messages.append({"role": "user", "content": f"check worker {n}"})
        messages.append({"role": "assistant", "content": result})
    raw = json.dumps(messages).encode()
    tracemalloc.start()
    try:
        tl, _ = stream_file(io.BytesIO(raw), "openai", "c")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(tl.blocks) == 180
    assert peak < 1.5 * len(raw)


@pytest.mark.slow
def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    """With stderr on a terminal import draws a progress bar; in a pipe it prints none."""
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(OPENAI_MESSAGES))
    piped = import_file(src, "openai", tmp_path / "a.db", "a")
    assert piped.returncode == 0 and piped.stderr == ""
    code, out, drawn = cli_on_tty(
        "import",
        str(src),
        "--format",
        "openai",
        "--db",
        str(tmp_path / "b.db"),
        "--conversation",
        "b",
    )
    assert code == 0 and b"imported 10 blocks" in out
    assert b"importing chat.json" in drawn and "━".encode() in drawn


@pytest.mark.slow
def test_cli_imports_responses_input(tmp_path: Path) -> None:
    """--format responses imports Responses API input items (read whole)."""
    src = tmp_path / "r.json"
    items = [
        {"role": "user", "content": "list the files"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    ]
    src.write_text(json.dumps({"instructions": "be terse", "input": items}))
    out = import_file(src, "responses", tmp_path / "r.db", "r")
    assert out.returncode == 0, out.stderr
    assert "imported 4 blocks into 'r'" in out.stdout
    assert "its system prompt (1 system message, 8 chars) is kept with it" in out.stdout
