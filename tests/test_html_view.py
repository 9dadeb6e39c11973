"""The HTML view: one self-contained page per prompt or conversation, checked as parsed
HTML and in a real headless Chromium (skipped only when chromium is not installed)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.test_cli import cli
from timeline import CompactionPolicy, Timeline, blocks
from timeline.cli.html_view import timeline_html

RESULT = "line of tool output with some words in it\n" * 40


class _Elements(HTMLParser):
    """Collects (tag, classes, attributes) of every element."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, set[str], dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.found.append((tag, set(values.get("class", "").split()), values))


def elements(page: str, cls: str) -> list[dict[str, str]]:
    parser = _Elements()
    parser.feed(page)
    return [attrs for _, classes, attrs in parser.found if cls in classes]


def conversation(turns: int = 6) -> tuple[Timeline, Any]:
    """A persisted conversation with compactions, a hidden and a pinned block."""
    store = index_store.open("memory://")
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1_500))
    for t in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {t}: look at file_{t}.py"), pin=t == 0)
        call = tl.append(blocks.tool_call("read_file", {"path": f"file_{t}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", f"<script>x</script> {t}\n{RESULT}"))
        tl.append(blocks.assistant_completion(f"file_{t}.py is fine"))
        if t == turns - 1:
            tl.hide([call.path.replace(".in.json", ".out.json")], "(hidden output)")
        tl.render("sys")
        tl.persist(store)
    return tl, store


def test_view_to_html_has_a_turn_per_turn_and_a_block_per_block() -> None:
    """RenderedContext.to_html: one .block per rendered block, one .turn per turn run."""
    tl = Timeline("v", policy=CompactionPolicy(max_tokens=1_000))
    for t in range(3):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"q{t}"))
        tl.append(blocks.assistant_completion(f"a{t}"))
    view = tl.render("be brief")
    page = view.to_html()
    assert 9 == len(elements(page, "block")) == len(view.blocks)
    assert len(elements(page, "turn")) == 3
    assert [e["data-type"] for e in elements(page, "block")[1:3]] == [
        "user.prompt",
        "assistant.completion",
    ]


def test_page_is_self_contained_and_escaped() -> None:
    """No external URL, script or stylesheet link; block text is escaped."""
    tl, store = conversation()
    page = timeline_html(tl, "sys", log=store.turn_log("c"), summaries=store.summaries("c"))
    for needle in ("http://", "https://", "<script", "<link", "src="):
        assert needle not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page


def test_marks_and_compactions() -> None:
    """Evicted, hidden, pinned blocks and cache checkpoints are marked; every compaction
    says where it cut and what it kept, with its summary and digest openable in place."""
    tl, store = conversation()
    log, summaries = store.turn_log("c"), store.summaries("c")
    page = timeline_html(tl, "sys", log=log, summaries=summaries)
    blocks_ = elements(page, "block")
    assert len(log) + len(summaries) == len(blocks_)
    for mark in ("evicted", "hidden", "pinned", "checkpoint"):
        assert elements(page, mark), mark
    compactions = elements(page, "compaction")
    assert len(summaries) == len(compactions) >= 1
    assert page.count("kept verbatim from") == len(summaries)
    assert page.count("cut at turn") == len(summaries)
    assert len(elements(page, "digest")) == len(summaries)
    assert elements(page, "budget-line") and elements(page, "prompt-start")
    sizes = [int(b["data-tokens"]) for b in blocks_]
    assert max(sizes) > 0 and all("--w:" in b["style"] for b in blocks_)


def test_inspect_html_writes_the_page(tmp_path: Path) -> None:
    """`timeline inspect ID --db PATH --html OUT` writes the page and still reports."""
    db = tmp_path / "d.db"
    assert cli("demo", "--turns", "6", "--max-tokens", "4000", "--db", str(db)).returncode == 0
    out = tmp_path / "out.html"
    done = cli("inspect", "demo", "--db", str(db), "--html", str(out), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["conversation"] == "demo"
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and elements(page, "turn")


CHROMIUM = os.environ.get("BLOCK_TIMELINE_CHROMIUM") or shutil.which("chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"
)
def test_page_in_a_real_browser(tmp_path: Path) -> None:
    """In headless Chromium the page loads without console errors, the DOM holds the
    expected turns and blocks, and a screenshot is written (BLOCK_TIMELINE_SCREENSHOT_DIR)."""
    from playwright.sync_api import sync_playwright

    tl, store = conversation()
    log, summaries = store.turn_log("c"), store.summaries("c")
    page_path = tmp_path / "timeline.html"
    page_path.write_text(timeline_html(tl, "sys", log=log, summaries=summaries))
    turn_ids = {b.turn_id for b in log}
    splits = sum(1 for s in summaries if s.meta.get("split_turn_id"))
    shots = Path(os.environ.get("BLOCK_TIMELINE_SCREENSHOT_DIR") or tempfile.mkdtemp())
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_path.as_uri())
            turns = page.locator(".turn").count()
            block_count = page.locator(".block").count()
            page.locator(".compaction .block > summary").first.click()
            opened = page.locator(".compaction .block[open] pre").first.is_visible()
            page.screenshot(path=str(shots / "timeline.png"), full_page=True)
        finally:
            browser.close()
    print(f"screenshot: {shots / 'timeline.png'}")
    assert errors == []
    assert (len(turn_ids) + splits, len(log) + len(summaries)) == (turns, block_count)
    assert opened
    assert (shots / "timeline.png").stat().st_size > 10_000
