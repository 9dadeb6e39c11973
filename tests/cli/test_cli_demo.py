"""``timeline demo`` as a newcomer runs it: what it prints and wrote, its figures, a quiet
stderr (the log with --debug), and the progress bar on a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from index_store import shown_dsn
from tests.helpers.cli import cli, cli_on_tty
from tests.helpers.stores import PG_DSN


@pytest.mark.slow
def test_demo_prints_the_conversation_and_next_commands(tmp_path: Path) -> None:
    """The demo names the conversation it wrote and what to run next."""
    out = cli("demo", "--turns", "3", "--db", "d.db", "--conversation", "mine", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "wrote conversation 'mine' to d.db" in out.stdout
    for command in ("inspect", "search", "render"):
        assert f"timeline {command} mine --db d.db" in out.stdout
    again = cli("demo", "--turns", "2", "--db", "d.db", "--conversation", "mine", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


@pytest.mark.slow
def test_demo_request_figures_mean_the_same_thing(tmp_path: Path) -> None:
    """The per-turn 'request' column and the closing 'largest request' are one measure."""
    out = cli("demo", "--turns", "6", "--max-tokens", "6000", "--db", "d.db", cwd=tmp_path)
    lines = out.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["turn", "request"])
    column = [int(line.split()[1].replace(",", "")) for line in lines[header + 1 : header + 7]]
    largest = next(line for line in lines if line.strip().startswith("largest request"))
    assert f"{max(column):,} tokens" in largest


@pytest.mark.slow
def test_demo_is_quiet_on_stderr_and_logs_with_debug(tmp_path: Path) -> None:
    """The demo (overflow retry included) writes nothing to stderr; --debug shows the log."""
    out = cli("demo", "--turns", "12", "--max-tokens", "8000", "--db", "q.db", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    lines = out.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["turn", "request"])
    assert any(line.split()[5:6] == ["1"] for line in lines[header + 1 : header + 13])
    debug = cli("demo", "--turns", "2", "--db", "q.db", "--debug", cwd=tmp_path)
    assert "timeline: persist conversation=demo" in debug.stderr


@pytest.mark.slow
def test_demo_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """With stderr on a terminal the demo draws a progress bar over its turns."""
    code, out, drawn = cli_on_tty("demo", "--turns", "3", "--db", "p.db", cwd=tmp_path)
    assert code == 0 and b"wrote conversation 'demo'" in out
    assert b"demo turns" in drawn


@pytest.mark.slow
def test_demo_on_postgresql_prints_no_password() -> None:
    """The header names the store without its password (the output of a run ends up
    in logs and CI pages)."""
    if not PG_DSN or shown_dsn(PG_DSN) == PG_DSN:
        pytest.skip("needs BLOCK_TIMELINE_PG_DSN with a password (set by .ci/run)")
    out = cli("demo", "--turns", "1", "--db", PG_DSN, "--conversation", "no-password-shown")
    header = out.stdout.splitlines()[0]
    assert shown_dsn(PG_DSN) in header
    assert PG_DSN not in header
