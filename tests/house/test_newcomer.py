"""A newcomer's first commands, run as written: the README's main-job command in a fresh
copy of the checkout (a new venv, installed with pip), then every command the demo
prints, from a shell where that venv is not activated, and the examples without their
extras. Slow: it creates a venv and installs into it (skipped when pip cannot reach a
package index)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv", "venv", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", "mutants", ".ci-artifacts", "*.db", "*.db-*", "*.html", "dist", "build",
)  # fmt: skip


def readme_command(start: str) -> str:
    """The first line of the first ``sh`` block after the README line starting with
    ``start`` (what ``.ci/run`` runs)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(start))
    fence = next(i for i in range(at, len(lines)) if lines[i].startswith("```sh"))
    return lines[fence + 1]


def shell_env() -> dict[str, str]:
    """The environment of a new shell: no venv activated, this interpreter's venv off
    ``PATH``."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    ours = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)
    return env


def sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def suggested(out: str) -> list[str]:
    """The commands the demo prints after ``try next:``."""
    tail = out.split("try next:", 1)[1]
    return [line.strip() for line in tail.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A fresh copy of the checkout after the README's main-job command: (its folder,
    what the command printed)."""
    work = tmp_path_factory.mktemp("newcomer") / "block-timeline"
    shutil.copytree(ROOT, work, ignore=LEFT_OUT)
    done = sh(readme_command("Run the main job"), work)
    unreachable = re.search(r"No matching distribution|Could not find a version", done.stderr)
    if done.returncode != 0 and unreachable:
        pytest.skip("pip cannot reach a package index here")
    assert done.returncode == 0, done.stderr[-3000:]
    yield work, done.stdout


def test_the_demos_suggestions_run_as_printed(checkout: tuple[Path, str]) -> None:
    """Every command the demo prints runs as printed, in a shell without the venv."""
    work, out = checkout
    commands = suggested(out)
    assert len(commands) == 5
    for command in commands:
        done = sh(command, work)
        assert done.returncode == 0, (command, done.stderr)
    assert (work / "timeline-demo.html").is_file()


def test_a_second_demos_suggestions_run_too(checkout: tuple[Path, str]) -> None:
    """After a second demo, with the page of the first one in place, every printed command
    still runs (the page is replaced)."""
    work, _ = checkout
    (work / "timeline-demo.html").write_text("an older page", encoding="utf-8")
    again = sh(readme_command("Run the main job").rsplit("&& ", 1)[1], work)
    assert again.returncode == 0, again.stderr
    for command in suggested(again.stdout):
        done = sh(command, work)
        assert done.returncode == 0, (command, done.stderr)
    assert "an older page" not in (work / "timeline-demo.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("script", "extra"),
    [
        ("langchain_agent.py", "langchain"),
        ("pydantic_ai_agent.py", "pydantic-ai"),
        ("openai_agents_session.py", "openai-agents"),
    ],
)
def test_an_example_without_its_extra_says_what_to_install(
    checkout: tuple[Path, str], script: str, extra: str
) -> None:
    """Run without its framework, an example stops with MissingExtraError and the install
    line for this checkout, not a bare ModuleNotFoundError."""
    work, _ = checkout
    done = sh(f".venv/bin/python examples/{script}", work)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("timeline.integrations.MissingExtraError"), last
    assert f"pip install -e '{work}[{extra}]'" in last
