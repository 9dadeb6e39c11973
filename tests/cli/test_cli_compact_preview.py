"""``timeline compact ID --dry-run``: what the compaction would do, the store unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import LONG_MESSAGES, cli, import_file, tool_heavy_messages


def _imported(tmp_path: Path, messages: object) -> Path:
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(messages))
    db = tmp_path / "t.db"
    assert import_file(src, "openai", db, "c1").returncode == 0
    return db


@pytest.mark.slow
def test_dry_run_prints_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    """--dry-run names the tier, the cut and what is summarized and kept; the stored
    conversation (its version and its render) is as before, and the real compaction
    then summarizes what the dry run said."""
    db = _imported(tmp_path, LONG_MESSAGES)
    render = ("render", "c1", "--db", str(db), "--format", "text")
    before = cli(*render).stdout
    out = cli("compact", "c1", "--db", str(db), "--keep-recent", "200", "--dry-run")
    assert out.returncode == 0, out.stderr
    first, *rest = out.stdout.splitlines()
    assert first.startswith("dry run, nothing changed: tier summarize, ")
    assert rest[0].lstrip().startswith("summarize ") and " before " in rest[0]
    assert rest[1].lstrip().startswith("keep ")
    assert cli(*render).stdout == before
    listed = cli("list", "--db", str(db), "--json").stdout
    assert json.loads(listed)[0]["version"] == 1
    args = ("compact", "c1", "--db", str(db), "--keep-recent", "200", "--json")
    plan = json.loads(cli(*args, "--dry-run").stdout)
    done = json.loads(cli(*args).stdout)
    assert plan["dry_run"] and plan["tier"] == done["tier"] == "summarize"
    assert plan["summarized_blocks"] == done["compacted_blocks"]
    assert plan["tokens_before"] == done["tokens_before"]


@pytest.mark.slow
def test_dry_run_of_a_clearing_pass(tmp_path: Path) -> None:
    """--dry-run --clear previews the clearing tier: the blocks and tokens it would free."""
    db = _imported(tmp_path, tool_heavy_messages(6))
    args = ("compact", "c1", "--db", str(db), "--clear", "--max-tokens", "8000")
    plan = json.loads(cli(*args, "--dry-run", "--json").stdout)
    done = json.loads(cli(*args, "--json").stdout)
    assert (
        (plan["tier"], plan["cleared_blocks"])
        == ("clear", 3)
        == (
            done["tier"],
            done["cleared_blocks"],
        )
    )
    assert plan["cleared_tokens"] == done["cleared_tokens"]
