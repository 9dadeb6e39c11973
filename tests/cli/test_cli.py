"""The timeline CLI, run as a subprocess against a temporary SQLite file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import (
    ANTHROPIC_MESSAGES,
    LONG_MESSAGES,
    OPENAI_MESSAGES,
    cli,
    import_file,
    tool_heavy_messages,
)

"""Long enough that a compaction's summary is smaller than what it replaces."""


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    db = tmp_path / "t.db"
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(OPENAI_MESSAGES))
    done = import_file(src, "openai", str(db), "c1")
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.slow
def test_import_openai_and_render_back(imported: Path) -> None:
    """Imported Chat Completions messages render back to the same conversation."""
    out = cli(
        "render",
        "c1",
        "--db",
        str(imported),
        "--format",
        "openai",
        "--system",
        "You are a helpful coding agent.",
    )
    assert out.returncode == 0, out.stderr
    rendered = json.loads(out.stdout)
    assert [m["role"] for m in OPENAI_MESSAGES] == [m["role"] for m in rendered]
    assert OPENAI_MESSAGES[2]["tool_calls"][0]["id"] == rendered[2]["tool_calls"][0]["id"]
    assert rendered[4]["content"] == "1 failed: test_retry"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["anthropic", "responses", "text", "document"])
def test_render_formats(imported: Path, fmt: str) -> None:
    """Every format renders from the stored conversation."""
    out = cli("render", "c1", "--db", str(imported), "--format", fmt)
    assert out.returncode == 0, out.stderr
    assert "backoff" in out.stdout


@pytest.mark.slow
def test_import_keeps_the_system_prompt_as_the_conversations_own(tmp_path: Path) -> None:
    """The import says how many blocks it stored and that it kept the system prompt,
    which render uses without --system (and --system still overrides)."""
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(OPENAI_MESSAGES))
    db = str(tmp_path / "x.db")
    out = import_file(src, "openai", db, "c9")
    assert out.returncode == 0
    assert "imported 10 blocks into 'c9'" in out.stdout
    assert "its system prompt (1 system message, 31 chars) is kept with it" in out.stdout
    rendered = json.loads(cli("render", "c9", "--db", db, "--format", "openai").stdout)
    assert rendered[0] == OPENAI_MESSAGES[0]
    other = cli("render", "c9", "--db", db, "--format", "openai", "--system", "Be brief.")
    assert json.loads(other.stdout)[0] == {"role": "system", "content": "Be brief."}


@pytest.mark.slow
def test_import_anthropic(tmp_path: Path) -> None:
    """Anthropic Messages JSON with tool_use/tool_result imports and renders natively."""
    src = tmp_path / "a.json"
    src.write_text(json.dumps(ANTHROPIC_MESSAGES))
    db = str(tmp_path / "a.db")
    assert import_file(src, "anthropic", db, "a").returncode == 0
    out = json.loads(cli("render", "a", "--db", db, "--format", "anthropic").stdout)
    kinds = [[p["type"] for p in m["content"]] for m in out["messages"]]
    assert kinds == [["text"], ["text", "tool_use"], ["tool_result"], ["text"]]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}], "messages[1]"),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "nope", "content": "x"},
            ],
            "messages[1]",
        ),
        ([{"role": "wizard", "content": "hi"}], "messages[0].role"),
        (
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 5}}],
                }
            ],
            "messages[0].tool_calls[0].function.arguments",
        ),
        ({"not": "messages"}, "messages"),
    ],
)
def test_malformed_import_names_the_element_and_stores_nothing(
    tmp_path: Path, messages: Any, where: str
) -> None:
    """Bad input: exit 1, a one-line message naming the element, nothing stored."""
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(messages))
    db = tmp_path / "bad.db"
    out = import_file(src, "openai", str(db), "b")
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: {where}")
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr
    assert not db.exists()  # nothing stored: not even an empty store file
    render = cli("render", "b", "--db", str(db))
    assert render.returncode == 1 and "--db: no SQLite store at" in render.stderr


@pytest.mark.slow
def test_import_refuses_an_existing_conversation(imported: Path, tmp_path: Path) -> None:
    """Importing into an id that exists is an error and changes nothing."""
    src = tmp_path / "chat2.json"
    src.write_text(json.dumps(OPENAI_MESSAGES[:2]))
    out = import_file(src, "openai", str(imported), "c1")
    assert out.returncode == 1 and "already exists" in out.stderr


@pytest.mark.slow
def test_not_json_is_a_runtime_error(tmp_path: Path) -> None:
    """A file that is not JSON: exit 1 with the reason."""
    src = tmp_path / "x.json"
    src.write_text("{nope")
    out = import_file(src, "openai", str(tmp_path / "x.db"), "x")
    assert out.returncode == 1 and "not valid JSON" in out.stderr


@pytest.mark.slow
def test_inspect_shows_usage_by_type(imported: Path) -> None:
    """inspect: tokens per block type with bars, checkpoints."""
    out = cli("inspect", "c1", "--db", str(imported), "--max-tokens", "240", "--system", "sys")
    assert out.returncode == 0, out.stderr
    assert "react.tool.result" in out.stdout and "█" in out.stdout
    assert "of 240 tokens" in out.stdout and "cache checkpoints: system +" in out.stdout


@pytest.mark.slow
def test_search(imported: Path) -> None:
    """search prints scored hits with path and turn, each snippet with its matches
    underlined (no colour in a pipe)."""
    out = cli("search", "c1", "backoff retry", "--db", str(imported))
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    paths = [line.split()[2] for line in lines if "(turn " in line]
    # one BM25 over the query's words: the two blocks holding both words come first
    both = {"tc:t1.tool_calls.call_1.out.json", "ar:t1.assistant.completion"}
    assert set(paths[:2]) == both and len(paths) > 2
    at = next(i for i, line in enumerate(lines) if "def retry(): return backoff(0)" in line)
    marked = "".join(c for c, m in zip(lines[at], lines[at + 1], strict=False) if m == "^")
    assert marked == "retrybackoff"
    none = cli("search", "c1", "zebra", "--db", str(imported))
    assert "no matches" in none.stdout


@pytest.mark.slow
def test_compact_that_would_grow_the_prompt_changes_nothing(imported: Path) -> None:
    """A compaction whose summary is not smaller than what it replaces is skipped."""
    before = cli("render", "c1", "--db", str(imported), "--format", "text").stdout
    out = cli("compact", "c1", "--db", str(imported), "--keep-recent", "20")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("not compacted (the summary (")
    assert before == cli("render", "c1", "--db", str(imported), "--format", "text").stdout


@pytest.mark.slow
def test_compact_then_render_starts_with_the_summary(tmp_path: Path) -> None:
    """compact persists a summary; the next render starts with it."""
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(LONG_MESSAGES))
    imported = tmp_path / "t.db"
    assert import_file(src, "openai", imported, "c1").returncode == 0
    out = cli("compact", "c1", "--db", str(imported), "--keep-recent", "200")
    assert out.returncode == 0, out.stderr
    assert "compacted" in out.stdout and "su:" in out.stdout
    text = cli("render", "c1", "--db", str(imported), "--format", "text").stdout
    # the conversation's own system prompt (kept by the import), then the summary
    assert text.startswith("[SYSTEM]\nYou are a helpful coding agent.\n\n[CONVERSATION SUMMARY]")


@pytest.mark.slow
def test_compact_clear_clears_old_tool_results_first(tmp_path: Path) -> None:
    """compact --clear runs the clearing tier first: old tool results become placeholders
    and, as that is enough, no summary is made; the output names the tier."""
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(tool_heavy_messages(6)))
    db = tmp_path / "t.db"
    assert import_file(src, "openai", db, "c1").returncode == 0
    out = cli("compact", "c1", "--db", str(db), "--clear", "--max-tokens", "8000", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["tier"], result["cleared_blocks"], result["summary_path"]) == ("clear", 3, None)
    assert result["tokens_before"] - result["tokens_after"] == result["cleared_tokens"] > 0
    text = cli("render", "c1", "--db", str(db), "--format", "text").stdout
    assert text.count("[cleared: read_file(path=") == 3
    assert not text.startswith("[CONVERSATION SUMMARY]")


@pytest.mark.slow
def test_compact_clear_says_what_it_cleared(tmp_path: Path) -> None:
    """Without --json, one line: what was cleared, the tokens before and after, the tier."""
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(tool_heavy_messages(6)))
    db = tmp_path / "t.db"
    assert import_file(src, "openai", db, "c1").returncode == 0
    out = cli("compact", "c1", "--db", str(db), "--clear", "--max-tokens", "8000")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("cleared 3 blocks (")
    assert "(tier clear, version 2)" in out.stdout


@pytest.mark.slow
def test_usage_errors_exit_2(tmp_path: Path) -> None:
    """Missing arguments or unknown commands are usage errors (exit 2)."""
    assert cli("render").returncode == 2
    assert cli("frobnicate").returncode == 2
    assert cli("render", "c1", "--db", "x.db", "--format", "yaml").returncode == 2


@pytest.mark.slow
def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    """--debug prints the traceback of a runtime error; without it, one line."""
    plain = cli("render", "missing", "--db", str(tmp_path / "e.db"))
    debug = cli("--debug", "render", "missing", "--db", str(tmp_path / "e.db"))
    assert (plain.returncode, debug.returncode) == (1, 1)
    assert "Traceback" not in plain.stderr and "Traceback" in debug.stderr


@pytest.mark.slow
def test_demo_runs_the_pipeline(tmp_path: Path) -> None:
    """The demo runs a scripted session on SQLite and prints turns and the closing table."""
    out = cli("demo", "--turns", "12", "--max-tokens", "8000", "--db", "demo.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("timeline demo: 12 turns, budget 8,000 tokens, conversation 'demo'")
    assert any(line.strip().startswith("12 ") for line in lines)
    for key in (
        "compactions",
        "overflow retries",
        "blocks",
        "window",
        "prefix reuse",
        "store size",
    ):
        assert any(line.strip().startswith(key) for line in lines), key
    assert (tmp_path / "demo.db").exists()


@pytest.mark.slow
def test_rendering_commands_warm_the_tokenizer_up(
    imported: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """render loads the tokenizer at start; search, which counts nothing, does not."""
    from timeline import _cli as cli_module
    from timeline import _tokens as tokens

    calls: list[str] = []
    monkeypatch.setattr(tokens, "warm_up", lambda: calls.append("warm"))
    assert cli_module.main(["search", "c1", "backoff", "--db", str(imported)]) == 0
    assert calls == []
    assert cli_module.main(["render", "c1", "--db", str(imported)]) == 0
    assert calls == ["warm"]
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("render", "c", "--db", "x.db", "--max-tokens", "0"), "--max-tokens"),
        (("demo", "--turns", "-1"), "--turns"),
        (("search", "c", "--db", "x.db"), "QUERY"),
        (("nonsense",), "COMMAND"),
    ],
)
def test_usage_errors_are_one_error_line(args: tuple[str, ...], flag: str, tmp_path: Path) -> None:
    """A bad flag or command prints one ``error:`` line naming it (no usage block), status 2."""
    out = cli(*args, cwd=tmp_path)
    lines = out.stderr.splitlines()
    assert (out.returncode, len(lines)) == (2, 1)
    assert lines[0].startswith("error: ") and flag in lines[0] and "--help" in lines[0]
