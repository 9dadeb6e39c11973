"""Every ```python block in README.md and docs/*.md runs.

The blocks of one page run in order in one namespace, started from a small shared prelude
(``PRELUDE``) that gives fragments the names they assume: a timeline ``tl`` with a few
turns, a ``store``, a ``system`` prompt, ``call_model`` and an Anthropic-like ``client``
whose first call overflows. Pages are found when the tests are collected, so a new page
is tested without being listed here. Anything that is not Python goes in a ```text or
```sh fence.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

PRELUDE = r'''
import index_store
from timeline import CompactionPolicy, Timeline, blocks, is_context_overflow
from timeline._driver import ModelReply
from timeline._driver.scripted import overflow_error

system = "You are a careful coding agent."
store = index_store.open("memory://")
tl = Timeline("conv-1", policy=CompactionPolicy(max_tokens=32_000))
for _turn in range(5):
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"Fix the failing test, step {_turn}"))
    if _turn >= 2:
        _call = tl.append(blocks.tool_call("read_file", {"path": f"a{_turn}.py"}))
        _source = "def f(x):\n    return x + 1\n\n" * 100
        tl.append(blocks.tool_result(_call.call_id, _source, tool_id="read_file"))
    tl.append(blocks.assistant_completion(f"Done with step {_turn}."))

_calls = []


def call_model(payload):
    """The first call overflows like Anthropic's API, later ones answer."""
    _calls.append(payload)
    if len(_calls) == 1:
        raise overflow_error("anthropic", 210_000, 200_000)
    return ModelReply(text="ok")


class _Messages:
    def create(self, **request):
        return call_model(request)


class _Client:
    messages = _Messages()


client = _Client()
'''


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), re.DOTALL | re.MULTILINE)


def run_page(page: Path) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem}"}
    exec(compile(PRELUDE, "prelude", "exec"), namespace)
    for i, code in enumerate(python_blocks(page)):
        exec(compile(code, f"{page.name} block {i + 1}", "exec"), namespace)
    return namespace


@pytest.mark.parametrize(
    "page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's Python blocks run in order, after the shared prelude, in an empty
    directory."""
    monkeypatch.chdir(tmp_path)
    run_page(page)


def test_pages_with_python_are_found() -> None:
    """The collection sees the README and the docs pages that hold Python."""
    names = {p.name for p in PAGES if python_blocks(p)}
    assert {"README.md", "quickstart.md", "overflow.md", "compaction.md"} <= names


def test_readme_retry_sends_the_smaller_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's overflow retry gets a reply, from a forced render with the same
    system prompt."""
    monkeypatch.chdir(tmp_path)
    namespace = run_page(ROOT / "README.md")
    first, retry = namespace["_calls"]
    assert namespace["reply"].text == "ok"
    assert first["system"] == retry["system"]


def test_readme_usage_runs_twice_in_one_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's usage snippet, run twice in a row on its agent.db, carries on with the
    stored conversation (no ConflictError): the second run holds both runs' turns."""
    monkeypatch.chdir(tmp_path)
    first = run_page(ROOT / "README.md")
    first["store"].close()
    second = run_page(ROOT / "README.md")
    assert (tmp_path / "agent.db").is_file()
    assert second["tl"].version == first["tl"].version + 1
    turns = {b.turn_id for b in second["store"].turn_log("conv-1")}
    assert len(turns) == 2
    second["store"].close()


def test_quickstart_runs_twice_in_one_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The quickstart continues its stored conversation when run again (no ConflictError)."""
    monkeypatch.chdir(tmp_path)
    run_page(ROOT / "docs" / "quickstart.md")
    namespace = run_page(ROOT / "docs" / "quickstart.md")
    assert (tmp_path / "quickstart.db").exists()
    assert "SearchHit" in capsys.readouterr().out
    assert namespace["result"].stopped == "answer"


def test_snapshot_testing_example_builds() -> None:
    """The snapshot-testing example's timeline builds and renders deterministically."""
    namespace = run_page(ROOT / "docs" / "snapshot-testing.md")
    build = namespace["build"]
    assert build().render("sys").to_anthropic() == build().render("sys").to_anthropic()


def test_overflow_corpus_size_is_stated_right() -> None:
    """docs/overflow.md states the overflow test corpus's real size."""
    from tests.helpers.overflow_errors import NOT_OVERFLOWS, OVERFLOWS

    text = (ROOT / "docs" / "overflow.md").read_text()
    total, yes, no = (len(OVERFLOWS) + len(NOT_OVERFLOWS), len(OVERFLOWS), len(NOT_OVERFLOWS))
    assert f"holds {total} real messages and bodies ({yes} overflows, {no} not)" in text


def test_the_readmes_wheel_is_the_one_pip_builds() -> None:
    """The wheel the README installs carries this version's file name."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"dist/block_timeline-{version}-py3-none-any.whl" in readme
