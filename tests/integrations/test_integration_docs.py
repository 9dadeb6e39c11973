"""docs/integrations.md's examples and the examples/ scripts run offline."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
NEEDS = {
    "langchain_agent": "langchain.agents",
    "pydantic_ai_agent": "pydantic_ai",
    "openai_agents_session": "agents",
}


def test_every_example_is_listed() -> None:
    """Each examples/ script has its framework named here (so none goes untested)."""
    assert sorted(p.stem for p in EXAMPLES) == sorted(NEEDS)


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
def test_example_script_runs(
    script: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The script runs to the end and finds earlier turns in its store."""
    pytest.importorskip(NEEDS[script.stem])
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    assert re.search(r"[1-9]\d* hits for service-1", out)
    assert "model sees" in out


def test_integrations_doc_blocks_run() -> None:
    """Every python block of docs/integrations.md runs as written."""
    for name in ("langchain.agents", "pydantic_ai", "agents"):
        pytest.importorskip(name)
    text = (ROOT / "docs" / "integrations.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 4
    for code in blocks:
        exec(compile(code, "integrations.md", "exec"), {"__name__": "docs"})
