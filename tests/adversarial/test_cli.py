"""The CLI corpus: bad files and flag values end in one ``error: ...`` line (or a valid
result), never a traceback, and the store keeps what it held."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import index_store
from tests.adversarial.cases import load
from tests.adversarial.cli_files import (
    ANTHROPIC_BAD,
    GOOD_OPENAI,
    OPENAI_BAD,
    RAW_BAD,
    VALID_FILES,
    file_cases,
)
from timeline._cli import main
from timeline._io.importers import import_messages


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A SQLite store already holding conversation 'good'."""
    path = str(tmp_path / "cli.db")
    store = index_store.open(f"sqlite:///{path}")
    tl, _ = import_messages(GOOD_OPENAI, "openai", "good")
    tl.persist(store)
    store.close()
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err: str) -> None:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err


def _intact(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """'good' is as it was, the bad import stored nothing, a good import still works."""
    store = index_store.open(f"sqlite:///{db}")
    try:
        assert store.load_window("bad") is None
        assert [b.type for b in load(store, "good").blocks][:2] == ["turn.header", "user.prompt"]
    finally:
        store.close()
    path = Path(db).with_suffix(".good.json")
    path.write_text(json.dumps(GOOD_OPENAI))
    code, _, err = _run(
        capsys, "import", str(path), "--format", "openai", "--db", db, "--conversation", "after"
    )
    assert code == 0, err


@pytest.mark.parametrize(("fmt", "raw"), file_cases())
def test_bad_import_file(
    db: str, fmt: str, raw: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad messages file: one error line, status 1, nothing stored."""
    path = tmp_path / "bad.json"
    path.write_bytes(raw)
    code, _, err = _run(
        capsys, "import", str(path), "--format", fmt, "--db", db, "--conversation", "bad"
    )
    assert code == 1
    _one_error_line(err)
    _intact(db, capsys)


@pytest.mark.parametrize(
    ("fmt", "raw"),
    [
        pytest.param(fmt, raw, id=f"valid-cli-file-{name}")
        for name, (fmt, raw) in VALID_FILES.items()
    ],
)
def test_odd_but_valid_import_file(
    db: str, fmt: str, raw: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A BOM, an escaped lone surrogate (the parser reads "?"), junk in a system list."""
    path = tmp_path / "odd.json"
    path.write_bytes(raw)
    code, _, err = _run(
        capsys, "import", str(path), "--format", fmt, "--db", db, "--conversation", "odd"
    )
    assert code == 0, err
    store = index_store.open(f"sqlite:///{db}")
    texts = [b.text for b in load(store, "odd").blocks]
    store.close()
    assert all("\ud800" not in t for t in texts)  # the JSON parser makes it "?"
    assert {"a?b", "x", "hello"} & set(texts)


FLAGS_BAD: dict[str, tuple[int, list[str]]] = {
    "render-max-tokens-zero": (2, ["render", "good", "--max-tokens", "0"]),
    "render-max-tokens-negative": (2, ["render", "good", "--max-tokens", "-5"]),
    "render-max-tokens-word": (2, ["render", "good", "--max-tokens", "many"]),
    "render-format-unknown": (2, ["render", "good", "--format", "xml"]),
    "render-unknown-conversation": (1, ["render", "nope"]),
    "render-system-missing-file": (1, ["render", "good", "--system", "@/nonexistent/sys.txt"]),
    "inspect-max-tokens-zero": (2, ["inspect", "good", "--max-tokens", "0"]),
    "search-limit-zero": (2, ["search", "good", "hello", "--limit", "0"]),
    "search-limit-negative": (2, ["search", "good", "hello", "--limit", "-1"]),
    "compact-keep-recent-negative": (2, ["compact", "good", "--keep-recent", "-1"]),
    "compact-unknown-conversation": (1, ["compact", "nope", "--max-tokens", "5000"]),
    "demo-turns-negative": (2, ["demo", "--turns", "-1"]),
    "demo-turns-zero": (2, ["demo", "--turns", "0"]),
    "demo-turns-word": (2, ["demo", "--turns", "x"]),
    "conversation-nul": (1, ["render", "go\x00od"]),
    "conversation-surrogate": (1, ["render", "\udcff"]),
}


@pytest.mark.parametrize(
    ("code", "argv"),
    [
        pytest.param(code, argv, id=f"typed-cli-flag-{name}")
        for name, (code, argv) in FLAGS_BAD.items()
    ],
)
def test_bad_flag_value(
    db: str, code: int, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad flag value or id: status 1 or 2 with an error line, no traceback."""
    if argv[0] != "demo":
        argv = [*argv, "--db", db]
    else:
        argv = [*argv, "--db", str(Path(db).with_name("demo.db"))]
    if code == 2:
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "error:" in err
    else:
        status, _, err = _run(capsys, *argv)
        assert status == 1
        _one_error_line(err)
    _intact(db, capsys)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["search", "good", "zz\udcffqq"], id="valid-cli-search-surrogate-query"),
        pytest.param(["search", "good", "!!! ??? ..."], id="valid-cli-search-no-words"),
    ],
)
def test_odd_but_valid_search(db: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A query with a lone surrogate or without words: no hits, status 0."""
    code, out, err = _run(capsys, *argv, "--db", db)
    assert code == 0, err
    assert "no matches" in out


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, id=f"typed-cli-corrupt-row-{c}") for c in ("render", "inspect", "compact")],
)
def test_corrupt_row_is_one_error_line(
    db: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged stored row makes render print one error line naming it."""
    store = index_store.open(f"sqlite:///{db}")
    store._query("UPDATE blocks SET body = x'00ff' WHERE block_id = 'b2'")
    store._conn.commit()
    store.close()
    extra = ["--max-tokens", "5000"] if command == "compact" else []
    code, _, err = _run(capsys, command, "good", "--db", db, *extra)
    assert code == 1
    _one_error_line(err)
    assert "'good'" in err and "corrupt" in err


SUBPROCESS: dict[str, tuple[str, bytes]] = {
    "arguments-object": ("openai", json.dumps(OPENAI_BAD["arguments-object"]).encode()),
    "tool-calls-number": ("openai", json.dumps(OPENAI_BAD["tool-calls-number"]).encode()),
    "type-list": ("anthropic", json.dumps(ANTHROPIC_BAD["type-list"]).encode()),
    "nested-100000": ("openai", RAW_BAD["nested-100000"]),
    "responses-nested-100000": ("responses", RAW_BAD["nested-100000"]),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fmt", "raw"),
    [
        pytest.param(fmt, raw, id=f"typed-cli-process-{name}")
        for name, (fmt, raw) in SUBPROCESS.items()
    ],
)
def test_bad_file_in_a_real_process(db: str, fmt: str, raw: bytes, tmp_path: Path) -> None:
    """The installed entry point prints one error line and exits 1 (no traceback)."""
    path = tmp_path / "bad.json"
    path.write_bytes(raw)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "timeline",
            "import",
            str(path),
            "--format",
            fmt,
            "--db",
            db,
            "--conversation",
            "bad",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    _one_error_line(done.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("turns", [pytest.param("-1", id="typed-cli-process-demo-turns-negative")])
def test_demo_turns_negative_in_a_real_process(tmp_path: Path, turns: str) -> None:
    """`timeline demo --turns -1` exits 2 with an error line, no traceback."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "timeline",
            "demo",
            "--turns",
            turns,
            "--db",
            str(tmp_path / "d.db"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "error:" in done.stderr
    assert not (tmp_path / "d.db").exists()


HOSTILE = "</title></script><script>alert(1)</script><img src=x onerror=alert(2)>\"'"


@pytest.mark.slow
def test_hostile_conversation_page_runs_only_its_own_script(tmp_path: Path) -> None:
    """A conversation whose id, tool name, arguments, output, image mime and block type
    carry markup: inspect --html writes a page with exactly one executable script (the
    page's own), no event-handler attribute and no element the writer did not make."""
    from html.parser import HTMLParser

    from timeline import Block, Timeline, blocks

    db = tmp_path / "h.db"
    store = index_store.open(db)
    tl = Timeline(f"c{HOSTILE}")
    tl.begin_turn()
    tl.append(blocks.user_prompt(HOSTILE))
    call = tl.append(blocks.tool_call(f"tool{HOSTILE}", {"path": HOSTILE}))
    tl.append(blocks.tool_result(call.call_id or "", HOSTILE))
    tl.append(blocks.user_attachment(name=HOSTILE, mime=f"image/png{HOSTILE}", data=b"\x89PNG"))
    tl.append(Block(type=f"x.{HOSTILE}", text=HOSTILE))
    tl.render(HOSTILE)
    tl.persist(store)
    store.close()
    page = tmp_path / "p.html"
    argv = ["inspect", tl.conversation_id, "--db", str(db), "--html", str(page)]
    done = subprocess.run(
        [sys.executable, "-m", "timeline", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    class Seen(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[str] = []
            self.attrs: list[str] = []
            self.runnable = 0

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append(tag)
            self.attrs += [k for k, _ in attrs]
            if tag == "script" and "type" not in dict(attrs):
                self.runnable += 1

    seen = Seen()
    seen.feed(page.read_text())
    assert seen.runnable == 1  # the page's own
    assert seen.tags.count("img") <= 1
    assert seen.tags.count("title") == 1
    assert not [a for a in seen.attrs if a.startswith("on")]
    assert "<script>alert(1)" not in page.read_text()
