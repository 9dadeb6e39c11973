"""The CLI as a newcomer meets it: help, version, list, --json shapes, quiet pipes, colour,
wording, errors in flag terms, and the demo's safety around existing conversations
(the demo itself: tests/cli/test_cli_demo.py)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.cli import LONG_MESSAGES, OPENAI_MESSAGES, cli, import_file, stdout_on_tty
from timeline._cli import _parser
from timeline._cli.words import plural
from timeline._html.breakdown import percent_shares

SUBCOMMANDS = (
    "demo",
    "import",
    "list",
    "render",
    "inspect",
    "search",
    "compact",
    "export",
    "delete",
)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "t.db"
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(OPENAI_MESSAGES))
    assert import_file(src, "openai", path, "c1").returncode == 0
    return path


@pytest.mark.slow
def test_version() -> None:
    """--version prints the installed package version."""
    out = cli("--version")
    assert (0, f"timeline {version('block-timeline')}\n") == (out.returncode, out.stdout)


def test_every_subcommand_is_listed_and_every_option_has_help() -> None:
    """All subcommands exist and no option or argument lacks help text."""
    subs = _subparsers()
    assert set(SUBCOMMANDS) == set(subs)
    for name, parser in [("timeline", _parser()), *subs.items()]:
        for action in parser._actions:
            assert action.help, f"{name}: {action.option_strings or action.dest} has no help"


@pytest.mark.slow
def test_top_level_help_has_no_rest_markup() -> None:
    """The top-level help is plain text (no ``literal`` or :role: markup)."""
    out = cli("--help")
    assert out.returncode == 0
    assert "``" not in out.stdout and ":class:" not in out.stdout
    assert "timeline demo" in out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(command: str) -> None:
    """`timeline COMMAND --help` exits 0 and describes every flag."""
    out = cli(command, "--help")
    assert out.returncode == 0, out.stderr
    assert f"usage: timeline {command}" in out.stdout and "--debug" in out.stdout


def test_every_default_and_limit_is_in_the_help() -> None:
    """An option with a default says it in its help (``default: 40``, ``16,000``), and one
    with a minimum above 1 says the minimum (``at least 1,000``)."""
    for name, parser in _subparsers().items():
        for action in parser._actions:
            default = action.default
            if default not in (None, False, argparse.SUPPRESS) and action.option_strings:
                shown = f"{default:,}" if isinstance(default, int) else str(default)
                assert f"default: {shown}" in str(action.help), (name, action.dest)
            minimum = getattr(action.type, "minimum", 1)
            if minimum > 1:
                assert f"at least {minimum:,}" in str(action.help), (name, action.dest)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_before_or_after_the_subcommand(tmp_path: Path, where: str) -> None:
    """--debug shows the traceback wherever it is given."""
    args = ["render", "missing", "--db", str(tmp_path / "e.db")]
    out = cli("--debug", *args) if where == "before" else cli(*args, "--debug")
    assert out.returncode == 1 and "Traceback" in out.stderr


@pytest.mark.slow
def test_list_text_and_json(db: Path) -> None:
    """list shows each conversation; --json is an array with the documented keys."""
    text = cli("list", "--db", str(db))
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[1].split()[:5] == ["c1", "1", "10", "2", "0"]
    assert text.stdout.splitlines()[-1] == "1 conversation"
    rows = json.loads(cli("list", "--db", str(db), "--json").stdout)
    assert [{k: v for k, v in r.items() if k != "updated"} for r in rows] == [
        {
            "conversation": "c1",
            "version": 1,
            "blocks": 10,
            "window_blocks": 10,
            "turns": 2,
            "summaries": 0,
            "error": None,
        }
    ]
    assert rows[0]["updated"].endswith("Z")


@pytest.mark.slow
def test_list_of_an_empty_store(tmp_path: Path) -> None:
    """An empty store lists nothing (text) and [] (json)."""
    import index_store

    index_store.open(tmp_path / "e.db").close()
    assert "no conversations" in cli("list", "--db", str(tmp_path / "e.db")).stdout
    assert json.loads(cli("list", "--db", str(tmp_path / "e.db"), "--json").stdout) == []


def _inspect_json(db: Path, *extra: str) -> dict[str, Any]:
    out = cli("inspect", "c1", "--db", str(db), "--json", *extra)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


@pytest.mark.slow
def test_inspect_json_adds_up_after_truncation(tmp_path: Path) -> None:
    """With a block truncated for the render, per-type tokens add up to the prompt's tokens
    and the shares to 100%."""
    messages = [*OPENAI_MESSAGES[:4], {**OPENAI_MESSAGES[4], "content": "log line\n" * 3000}]
    src = tmp_path / "big.json"
    src.write_text(json.dumps(messages))
    db = tmp_path / "big.db"
    assert import_file(src, "openai", db, "c1").returncode == 0
    usage = _inspect_json(db, "--max-tokens", "600", "--system", "be brief")
    assert usage["truncated"] == ["tc:t1.tool_calls.call_2.out.json"]
    types = usage["types"]
    assert usage["tokens"] == sum(t["tokens"] for t in types.values())
    assert round(sum(t["share"] for t in types.values()), 6) == 100.0
    assert usage["tokens"] <= usage["budget"] == 600
    assert usage["free"] == 600 - usage["tokens"]


@pytest.mark.slow
def test_inspect_json_shape(db: Path) -> None:
    """inspect --json: the documented keys, per-type blocks/tokens/share, no budget."""
    usage = _inspect_json(db)
    assert {
        "conversation",
        "version",
        "compaction",
        "tokens",
        "budget",
        "free",
        "used",
        "blocks",
        "calibration",
        "types",
        "cache_checkpoints",
        "summaries",
        "truncated",
        "trigger",
        "categories",
        "breakdown_report",
        "cache_breaks",
        "tools",
    } == set(usage)
    assert (usage["budget"], usage["free"], usage["used"]) == (None, None, None)
    assert (usage["trigger"], usage["breakdown_report"]) == (None, None)
    assert {"blocks", "tokens", "share"} == set(usage["types"]["react.tool.result"])
    assert usage["types"]["react.tool.result"]["blocks"] == 2


@pytest.mark.slow
def test_inspect_says_when_there_is_no_budget(db: Path) -> None:
    """Without --max-tokens inspect says compaction is off."""
    assert "no budget: compaction off" in cli("inspect", "c1", "--db", str(db)).stdout


@pytest.mark.slow
def test_search_json(db: Path) -> None:
    """search --json: an array of hits with path, turn, kind, score, type, snippet, and
    the snippet's plain text with the matches' positions in it."""
    hits = json.loads(cli("search", "c1", "backoff", "--db", str(db), "--json").stdout)
    assert hits and set(hits[0]) == {
        "path",
        "turn_id",
        "kind",
        "score",
        "type",
        "block_id",
        "snippet",
        "text",
        "matches",
    }
    none = cli("search", "c1", "zebra", "--db", str(db), "--json")
    assert json.loads(none.stdout) == []


@pytest.mark.slow
def test_compact_json(tmp_path: Path) -> None:
    """compact --json says what it did; the version moves on."""
    db = tmp_path / "long.db"
    src = tmp_path / "long.json"
    src.write_text(json.dumps(LONG_MESSAGES))
    assert import_file(src, "openai", db, "c1").returncode == 0
    out = cli("compact", "c1", "--db", str(db), "--keep-recent", "20", "--json")
    result = json.loads(out.stdout)
    assert result["compacted"] is True and result["version"] == 2
    assert result["summary_path"].startswith("su:") and result["compacted_blocks"] > 0
    assert isinstance(result["tokens_after"], int) and isinstance(result["tokens_before"], int)


@pytest.mark.slow
def test_compact_json_skipped(db: Path) -> None:
    """compact --json on a chat too small to shrink: not compacted, the reason given."""
    out = cli("compact", "c1", "--db", str(db), "--keep-recent", "20", "--json")
    result = json.loads(out.stdout)
    assert result["compacted"] is False and result["version"] == 1
    assert result["skipped"].startswith("the summary (")


@pytest.mark.slow
def test_compact_without_a_budget_names_the_flags(db: Path) -> None:
    """compact with neither budget flag: one error naming --max-tokens and --keep-recent."""
    out = cli("compact", "c1", "--db", str(db))
    assert out.returncode == 1
    assert "--max-tokens" in out.stderr and "--keep-recent" in out.stderr
    assert "keep_recent_tokens" not in out.stderr and "max_tokens" not in out.stderr


@pytest.mark.slow
def test_errors_are_in_flag_terms(db: Path) -> None:
    """A system prompt over the budget is reported in terms of --system and --max-tokens."""
    out = cli("inspect", "c1", "--db", str(db), "--max-tokens", "5", "--system", "word " * 50)
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert "raise --max-tokens" in out.stderr and "shorten --system" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("demo", "--turns", "0"),
        ("demo", "--max-tokens", "lots"),
        ("import", "f.json", "--db", "x.db"),
        ("import", "f.json", "--db", "x.db", "--conversation", "c", "--format", "yaml"),
        ("list",),
        ("render", "c1", "--db", "x.db", "--max-tokens", "-3"),
        ("inspect", "c1", "--db", "x.db", "--max-tokens", "0"),
        ("search", "c1", "q", "--db", "x.db", "--limit", "0"),
        ("compact", "c1", "--db", "x.db", "--keep-recent", "x"),
    ],
)
def test_bad_flags_are_usage_errors(args: tuple[str, ...]) -> None:
    """A missing or bad flag value: exit 2 naming the flag, no traceback."""
    out = cli(*args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "error: " in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", ["render", "inspect", "compact", "search", "delete"])
def test_unknown_conversation_is_one_error_line(db: Path, command: str) -> None:
    """A conversation that is not stored: exit 1, one line saying so (search too)."""
    query = ["q"] if command == "search" else []
    budget = ["--keep-recent", "5"] if command == "compact" else []
    out = cli(command, "nope", *query, "--db", str(db), *budget)
    assert out.returncode == 1 and out.stderr.startswith("error: ")
    assert len(out.stderr.splitlines()) == 1 and "'nope' is not in the store" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "expected"),
    [("be terse\n", "be terse"), ("be terse\n\n", "be terse\n"), ("be terse", "be terse")],
)
def test_system_from_file_strips_one_trailing_newline(
    db: Path, tmp_path: Path, content: str, expected: str
) -> None:
    """--system @file drops exactly one trailing newline."""
    path = tmp_path / "system.txt"
    path.write_text(content)
    out = cli("render", "c1", "--db", str(db), "--format", "openai", "--system", f"@{path}")
    assert expected == json.loads(out.stdout)[0]["content"]


@pytest.mark.slow
def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    """`timeline render ... | head -c 100` ends quietly: exit 0, nothing on stderr."""
    src = tmp_path / "big.json"
    src.write_text(json.dumps([{"role": "user", "content": "many words here " * 40_000}]))
    assert import_file(src, "openai", tmp_path / "b.db", "b").returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "timeline", "render", "b", "--db", str(tmp_path / "b.db")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    err = proc.stderr.read()
    assert (proc.wait(timeout=60), err) == (0, b"")


@pytest.mark.slow
@pytest.mark.parametrize(("no_color", "coloured"), [(None, True), ("1", False)])
def test_colour_only_on_a_tty_and_not_with_no_color(
    db: Path, no_color: str | None, coloured: bool
) -> None:
    """On a terminal inspect colours its bars, unless NO_COLOR is set; never in a pipe."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = no_color
    assert coloured == ("\x1b[" in stdout_on_tty("inspect", "c1", "--db", str(db), env=env))
    assert "\x1b[" not in cli("inspect", "c1", "--db", str(db)).stdout


@pytest.mark.slow
def test_plural_wording(db: Path) -> None:
    """Counts of one are singular: "1 block", "1 conversation"."""
    assert [
        plural(1, "turn"),
        plural(2, "turn"),
        plural(0, "summary", "summaries"),
        plural(1, "summary", "summaries"),
        plural(1000, "block"),
    ] == ["1 turn", "2 turns", "0 summaries", "1 summary", "1,000 blocks"]
    assert cli("list", "--db", str(db)).stdout.splitlines(True)[-1] == "1 conversation\n"


@given(st.lists(st.integers(min_value=-50, max_value=10_000), min_size=1, max_size=12))
def test_percent_shares_add_up_to_100(values: list[int]) -> None:
    """Shares of values that add up to a positive total add up to exactly 100.0."""
    total = sum(values)
    if total <= 0:
        return
    shares = percent_shares(values, total)
    assert round(sum(shares) * 10) == 1000
    assert all(abs(s - 100 * v / total) < 0.1 + 1e-9 for s, v in zip(shares, values, strict=True))


@pytest.mark.slow
def test_demo_refuses_to_replace_a_conversation_it_did_not_create(db: Path) -> None:
    """The demo will not delete an imported conversation unless --force is given."""
    out = cli("demo", "--turns", "2", "--db", str(db), "--conversation", "c1")
    assert out.returncode == 1 and "--force" in out.stderr
    rows = json.loads(cli("list", "--db", str(db), "--json").stdout)
    assert rows[0]["blocks"] == 10
    forced = cli("demo", "--turns", "2", "--db", str(db), "--conversation", "c1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(cli("list", "--db", str(db), "--json").stdout)[0]["turns"] == 2


@pytest.mark.slow
def test_list_reports_an_unreadable_conversation_and_goes_on(db: Path, tmp_path: Path) -> None:
    """A conversation with a damaged row is listed with its error; the others as usual."""
    import sqlite3

    src = tmp_path / "two.json"
    src.write_text(json.dumps(OPENAI_MESSAGES[:2]))
    assert import_file(src, "openai", db, "c2").returncode == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE conversations SET live_window = x'00' WHERE conversation_id = 'c1'")
    rows = json.loads(cli("list", "--db", str(db), "--json").stdout)
    assert [r["conversation"] for r in rows] == ["c1", "c2"]
    assert rows[0]["error"] and rows[0]["version"] is None
    assert rows[1]["error"] is None and rows[1]["blocks"] == 2
    text = cli("list", "--db", str(db))
    assert text.returncode == 0 and "c1" in text.stdout and "unreadable: " in text.stdout
