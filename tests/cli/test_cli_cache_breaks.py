"""``timeline inspect`` and its HTML page show the provider's cache figures and the
cache breaks ``record_usage`` found, with their likely cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import index_store
from tests.helpers.cache_breaks import SYSTEM, Provider, conversation, step
from tests.helpers.cli import cli


def _stored(tmp_path: Path) -> Path:
    """A conversation whose second request read nothing back: one break, stored."""
    db = tmp_path / "t.db"
    tl, found, _ = conversation()
    provider = Provider()
    tl.record_usage(provider.usage(step(tl, 0)))
    tl.record_usage(provider.usage(step(tl, 1), read=0))
    assert len(found) == 1
    tl.render(SYSTEM)
    store = index_store.open(f"sqlite:///{db}")
    tl.persist(store)
    store.close()
    return db


@pytest.mark.slow
def test_inspect_reports_the_cache_and_its_breaks(tmp_path: Path) -> None:
    """--json has the last request's cache figures and the breaks; the text says them."""
    db = _stored(tmp_path)
    usage = json.loads(cli("inspect", "c", "--db", str(db), "--json").stdout)
    assert usage["breakdown_report"]["cache_read_tokens"] == 0
    assert usage["breakdown_report"]["cache_write_tokens"] > 0
    (brk,) = usage["cache_breaks"]
    assert brk["cause"] == "unknown" and brk["read_tokens"] == 0
    text = cli("inspect", "c", "--db", str(db)).stdout
    assert "prompt cache, last request: read 0, wrote " in text
    assert "cache breaks: 1 (the latest 1):" in text
    assert "unknown: read 0 of " in text


@pytest.mark.slow
def test_the_html_page_has_a_prompt_cache_section(tmp_path: Path) -> None:
    """inspect --html adds a Prompt cache section naming each break and its cause."""
    db = _stored(tmp_path)
    out = tmp_path / "page.html"
    assert cli("inspect", "c", "--db", str(db), "--html", str(out)).returncode == 0
    page = out.read_text()
    assert '<h2 id="cache-h">Prompt cache</h2>' in page
    assert "<strong>unknown</strong>: read 0 of " in page


@pytest.mark.slow
def test_a_conversation_without_cache_figures_shows_no_section(tmp_path: Path) -> None:
    """Without cache figures the report and the page stay as they were."""
    db = tmp_path / "t.db"
    tl, _, _ = conversation()
    step(tl, 0)
    store = index_store.open(f"sqlite:///{db}")
    tl.persist(store)
    store.close()
    assert "prompt cache" not in cli("inspect", "c", "--db", str(db)).stdout
    out = tmp_path / "page.html"
    cli("inspect", "c", "--db", str(db), "--html", str(out))
    assert "Prompt cache" not in out.read_text()
