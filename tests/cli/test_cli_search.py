"""``timeline search``: matches given as positions in ``--json`` and marked on a terminal
in a way the text's own brackets cannot be mistaken for. The CLI runs in-process."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

import index_store
from timeline import Timeline, blocks
from timeline._cli import main

OUTPUT = "config [ZEBRA] loaded; the [note] says the zebra pool leaks connections"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "s.db")
    store = index_store.open(path)
    tl = Timeline("c")
    tl.begin_turn()
    tl.append(blocks.user_prompt("why does the pool leak?"))
    call = tl.append(blocks.tool_call("bash", {"command": "cat pool.log"}))
    tl.append(blocks.tool_result(call.call_id or "", OUTPUT, tool_id="bash"))
    tl.persist(store)
    store.close()
    return path


def run(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def result_hit(hits: list[dict[str, Any]]) -> dict[str, Any]:
    return next(h for h in hits if h["type"] == "react.tool.result")


def test_json_gives_the_text_and_the_match_positions(db: str) -> None:
    """``--json`` adds the snippet's plain ``text`` and ``matches`` as [start, end]
    positions in it: the query's words (stems too: ``leaks``), never a bracketed word of
    the text that does not match (``[note]``), and the text's own brackets kept."""
    hit = result_hit(json.loads(run("search", "c", "zebra leak", "--db", db, "--json")))
    text = hit["text"]
    found = [text[a:b] for a, b in hit["matches"]]
    assert found == ["ZEBRA", "zebra", "leaks"]
    assert "[ZEBRA]" in text and "[note]" in text
    assert text.replace("[ZEBRA]", "ZEBRA") in OUTPUT.replace("[ZEBRA]", "ZEBRA")


def test_a_pipe_gets_the_matches_underlined(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without colour the snippet is printed as it is, with ``^`` under each match."""
    monkeypatch.setenv("NO_COLOR", "1")
    lines = run("search", "c", "zebra", "--db", db).splitlines()
    at = next(i for i, line in enumerate(lines) if "[ZEBRA]" in line)
    line, marks = lines[at], lines[at + 1]
    assert set(marks.strip()) == {"^", " "}
    underlined = [line[i] for i, ch in enumerate(marks) if ch == "^"]
    assert "".join(underlined) == "ZEBRAzebra"
    assert "[note]" in line


def test_wide_characters_keep_the_marks_aligned() -> None:
    """A wide character takes two columns: the marks stay under their words."""
    from timeline._cli.search import highlight

    line, marks = highlight("日本語 の [zebra] です", "zebra", color=False).split("\n")
    assert line == "日本語 の zebra です"
    assert marks.strip() == "^^^^^"
    assert marks.startswith(" " * 10)  # under the snippet, which is printed indented
    assert marks.index("^") - 10 == 2 * 4 + 2  # four wide characters and two spaces
