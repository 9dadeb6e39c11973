"""The docs' code runs: the quickstart loop and the snapshot-testing example."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).parent.parent / "docs"


def code_blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), re.DOTALL)


def test_quickstart_loop_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 30-line ReAct loop and the driver example run as written."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for code in code_blocks("quickstart.md"):
        exec(compile(code, "quickstart.md", "exec"), namespace)
    assert (tmp_path / "quickstart.db").exists()
    assert "SearchHit" in capsys.readouterr().out
    assert namespace["result"].stopped == "answer"


def test_snapshot_testing_example_builds() -> None:
    """The snapshot-testing example's timeline builds and renders deterministically."""
    namespace: dict[str, Any] = {}
    exec(compile(code_blocks("snapshot-testing.md")[0], "snapshot-testing.md", "exec"), namespace)
    build = namespace["build"]
    assert build().render("sys").to_anthropic() == build().render("sys").to_anthropic()
