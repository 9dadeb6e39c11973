"""The HTML view: one self-contained page per prompt or conversation that opens on what
the model sees next, checked as parsed HTML and in a real headless Chromium (Debian's,
driven by Playwright; skipped without chromium except in CI, where it must run): no
console errors, DOM counts, history on demand, search and jumps, size and first paint at
2,000+ blocks, an axe-core accessibility pass, and a screenshot artifact."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import struct
import tempfile
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import msgspec
import pytest

import index_store
from tests.helpers.cli import cli
from tests.helpers.conversations import coding_turn
from tests.helpers.html_page import conversation, history, listing_page, png, stored_page
from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    Timeline,
    blocks,
)
from timeline._cli.inspect import breakdown_report
from timeline._html.breakdown import CATEGORIES
from timeline._html.rows import TEXT_LIMIT, Item, compaction_html, digest_text
from timeline._html.top import toolbar
from timeline._model.search_text import query_terms

VENDOR = Path(__file__).parent.parent / "data" / "vendor" / "axe-core"


class _Elements(HTMLParser):
    """Collects (tag, classes, attributes) of every element, and the text of scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, set[str], dict[str, str]]] = []
        self.scripts: list[tuple[dict[str, str], str]] = []
        self._in_script: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.found.append((tag, set(values.get("class", "").split()), values))
        if tag == "script":
            self._in_script = values

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self.scripts.append((self._in_script, data))
            self._in_script = None


def parse(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


def elements(page: str, cls: str) -> list[dict[str, str]]:
    return [attrs for _, classes, attrs in parse(page).found if cls in classes]


def test_view_to_html_has_a_turn_per_turn_and_a_block_per_block() -> None:
    """RenderedContext.to_html: one .block per rendered block, one .turn per turn run,
    nothing in the history."""
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
    assert history(page) == [] and "every block is in the next prompt" in page


def test_page_is_self_contained_escaped_and_locked_down() -> None:
    """No external URL, link or src (images are data: URIs); conversation text is
    escaped; exactly one executable script, allowed by its hash in the page's
    Content-Security-Policy, which allows nothing else (the history and the search terms
    are data)."""
    tl, store = conversation()
    page = stored_page(tl, store)
    for needle in ("http://", "https://", "<link", "<iframe", "<object"):
        assert needle not in page
    assert all(src.startswith('"data:') for src in re.findall(r"src=(\S+)", page))
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<script>x</script>" not in page and "<script>x</script>" not in json.dumps(
        history(page)
    )
    parsed = parse(page)
    runnable = [text for attrs, text in parsed.scripts if "type" not in attrs]
    data = sorted(attrs.get("type", "") for attrs, _ in parsed.scripts if "type" in attrs)
    assert len(runnable) == 1 and data == ["application/json", "application/octet-stream"]
    digest = base64.b64encode(hashlib.sha256(runnable[0].encode()).digest()).decode()
    (policy,) = [a["content"] for t, _, a in parsed.found if a.get("http-equiv")]
    assert policy.startswith("default-src 'none';") and f"script-src 'sha256-{digest}'" in policy


def test_opens_on_the_next_prompt_then_the_live_window_then_history() -> None:
    """The page's order: the /context-style section (bar by category with the budget
    and trigger, a strip with the checkpoints), the live window, the collapsed history;
    the live window holds exactly the prompt's blocks and the history the rest."""
    tl, store = conversation()
    page = stored_page(tl, store)
    view = tl.render("sys")
    assert page.index('id="next"') < page.index('id="live"') < page.index('id="history"')
    assert elements(page, "ctx") and elements(page, "trigger") and elements(page, "budget-line")
    assert len(elements(page, "ckpt")) == len(view.cache_points)
    assert "compaction at 1,350 (90%)" in page
    segs = [e["style"] for e in elements(page, "seg")]
    shown = {c.name for c in CATEGORIES if any(c.color in s for s in segs)}
    assert {"system", "summary", "user", "assistant", "tool calls", "tool results"} <= shown
    assert len(elements(page, "block")) == len(view.blocks)
    assert '<details id="history-box">' in page  # collapsed: not open


def test_marks_compactions_and_every_block() -> None:
    """Every block the conversation held is on the page once (the live rows plus the
    history's); hidden, pinned, cleared and checkpoint blocks are marked; each compaction
    says where it cut and what it kept, with its summary and digest openable in place."""
    tl, store = conversation()
    log, summaries = store.turn_log("c"), store.summaries("c")
    page = stored_page(tl, store)
    entries = history(page)
    rows = "".join(e["b"] for e in entries)
    everything = page + rows
    assert len(log) + len(summaries) == len(elements(page, "block")) + len(elements(rows, "block"))
    for mark in ("hidden", "pinned", "checkpoint", "cleared", "superseded", "error"):
        assert elements(everything, mark), mark
    assert len(elements(everything, "compaction")) == len(summaries)
    assert everything.count("kept verbatim from") == len(summaries)
    assert everything.count("cut after") == len(summaries)
    assert len(elements(everything, "digest")) == len(summaries)
    kinds = [e["k"] for e in entries]
    assert kinds.count("compaction") == len(summaries) - 1  # the latest is in the prompt
    assert {e["id"] for e in entries if e["k"] == "turn"} <= {b.turn_id for b in log}


def test_a_block_truncated_for_the_render_is_marked() -> None:
    """A tool result cut to fit the budget carries the truncated badge in the live window;
    the other blocks do not."""
    tl = Timeline("t", policy=CompactionPolicy(max_tokens=600))
    tl.begin_turn()
    tl.append(blocks.user_prompt("show me the log"))
    call = tl.append(blocks.tool_call("read_log", {"path": "app.log"}))
    tl.append(blocks.tool_result(call.call_id or "", "log line\n" * 3000))
    view = tl.render("be brief")
    assert view.truncated_paths
    page = view.to_html()
    marked = [e["data-path"] for e in elements(page, "truncated") if "data-path" in e]
    assert marked == list(view.truncated_paths)
    assert '<span class="badge truncated">truncated</span>' in page


def test_a_result_pruned_by_the_cache_ttl_is_marked_as_such() -> None:
    """The cache-TTL pruning tier's hidden results say "pruned (cache TTL)" (a block the
    caller hid says "hidden")."""
    from datetime import timedelta

    from tests.helpers.checkpoints import ttl_timeline

    tl, clock = ttl_timeline()
    clock.now += timedelta(minutes=10)
    tl.begin_turn()
    tl.append(blocks.user_prompt("task 3"))
    view = tl.render("sys")
    assert view.compaction is not None and view.compaction.pruned_blocks == 2
    page = view.to_html()
    pruned = [e["data-path"] for e in elements(page, "pruned") if "data-path" in e]
    assert pruned == [b.path for b in view.blocks if b.hidden]
    assert page.count('<span class="badge pruned">pruned (cache TTL)</span>') == 2
    assert not [e for e in elements(page, "hidden") if "data-path" in e]


def test_rows_name_the_tool_its_arguments_and_a_preview() -> None:
    """A tool call's row names the tool and its key arguments (path first); its result's
    row names the tool too and previews the first line with the line count; an image is
    a thumbnail; a custom type shows its name and first line."""
    tl, store = conversation()
    page = stored_page(tl, store)
    everything = page + "".join(e["b"] for e in history(page))
    assert '<b>read_file</b> <span class="line">path=file_5.py, limit=40</span>' in everything
    assert (
        '<b>read_file</b> <span class="line">&lt;script&gt;x&lt;/script&gt; 1 (41 lines)</span>'
        in everything
    )
    (thumb,) = elements(page, "thumb")
    assert thumb["src"] == "data:image/png;base64," + base64.b64encode(png()).decode()
    assert thumb["alt"].startswith("image/png image")
    assert '<span class="kind">stage.gate</span>' in page
    assert '<span class="line">gate passed: all checks green</span>' in page


def test_provider_items_and_referenced_media_read_well() -> None:
    """An opaque provider item names its provider and kind with a one-line preview (its
    bytes are not shown as media); an image by URL and a file by id say what they
    reference (never fetched: no URL in any src); audio says what it is; an
    attachment's row names the file."""
    tl = Timeline("m", policy=CompactionPolicy(max_tokens=8_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("what is in these?"))
    tl.append(blocks.media_url("https://example.com/cat.png", name="cat.png"))
    tl.append(blocks.media_file("file-123", provider="openai", name="report.pdf"))
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    wav = b"RIFF" + struct.pack("<I", 40) + b"WAVEfmt " + struct.pack("<I", 16) + fmt
    wav += b"data" + struct.pack("<I", 4) + b"\x80" * 4  # 4 samples: a 48-byte clip
    tl.append(blocks.user_attachment(name="note.wav", mime="audio/wav", data=wav))
    tl.append(
        blocks.provider_block(
            "responses", {"type": "web_search_call", "id": "ws_1", "status": "completed"}
        )
    )
    tl.append(blocks.assistant_completion("a cat, a report and a note"))
    page = tl.render("sys").to_html()
    assert "<b>responses web_search_call</b>" in page
    media = re.findall(r'<span class="media">([^<]*)</span>', page)
    assert len(media) == 3 and not [m for m in media if "block-timeline" in m]
    assert "image at https://example.com/cat.png (not fetched)" in page
    assert "document at openai file file-123 (not fetched)" in page
    assert "audio: audio/wav, 48 bytes" in page
    assert "<b>cat.png</b>" in page and "<b>note.wav</b>" in page
    assert not elements(page, "thumb")
    assert all(src.startswith('"data:') for src in re.findall(r"src=(\S+)", page))


def test_colours_match_the_terminal() -> None:
    """Each category's page colour is the terminal palette's colour for the ANSI code
    inspect paints it with (VS Code's terminal palette), and both views use them."""
    palette = {
        "2": "#3c3c3c",
        "32": "#0dbc79",
        "33": "#e5e510",
        "34": "#2472c8",
        "35": "#bc3fbc",
        "36": "#11a8cd",
        "37": "#e5e5e5",
        "90": "#8c8c8c",
        "91": "#f14c4c",
        "94": "#3b8eea",
    }
    assert {c.name: c.color for c in CATEGORIES} == {c.name: palette[c.ansi] for c in CATEGORIES}
    tl, store = conversation()
    page = stored_page(tl, store)
    from timeline._cli.inspect import context_breakdown

    text = breakdown_report(context_breakdown(tl, "sys"), color=True)
    for name in ("tool results", "user", "summary"):
        (cat,) = [c for c in CATEGORIES if c.name == name]
        assert f"\x1b[{cat.ansi}m■\x1b[0m {name}" in text
        assert f"background:{cat.color}" in page


# -- in a real browser -------------------------------------------------------------------

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
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install -y chromium); CI requires it",
)
FIRST_PAINT = """new Promise((done) => new PerformanceObserver((list) => {
  const hit = list.getEntries().find((e) => e.name === "first-contentful-paint");
  if (hit) done(hit.startTime);
}).observe({ type: "paint", buffered: true }))"""


def _shots() -> Path:
    shots = Path(os.environ.get("BLOCK_TIMELINE_SCREENSHOT_DIR") or tempfile.mkdtemp())
    shots.mkdir(parents=True, exist_ok=True)
    return shots


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "chromium is needed (CI installs Debian's)"
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser: Any, path: Path, errors: list[str], **context: Any) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}, **context).new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    return page


@pytest.mark.slow
@needs_chromium
def test_page_in_a_real_browser(browser: Any, tmp_path: Path) -> None:
    """In headless Chromium the page loads without console errors (a CSP violation would
    be one), shows the live window only, loads the history when opened, and then holds
    every block; a summary opens in place."""
    tl, store = conversation()
    log, summaries = store.turn_log("c"), store.summaries("c")
    path = tmp_path / "timeline.html"
    path.write_text(stored_page(tl, store))
    errors: list[str] = []
    page = _open(browser, path, errors)
    assert page.locator("#live .block").count() == len(tl.render("sys").blocks)
    assert page.locator("#history-entries > *").count() == 0
    page.click("#history-box > summary")
    page.wait_for_selector("#history-entries > .entry")
    for entry in page.locator("#history-entries > details").all():
        entry.locator("summary").first.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('#history-entries > details')]"
        ".every(d => d.dataset.filled)"
    )
    assert page.locator(".block").count() == len(log) + len(summaries)
    page.locator(".compaction .block > summary").first.click()
    assert page.locator(".compaction .block[open] pre").first.is_visible()
    assert page.locator("img.thumb").first.evaluate("img => img.naturalWidth") == 4
    assert errors == []


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The demo's 240 turns (over 2,000 blocks) as a page; (page, blocks on it)."""
    where = tmp_path_factory.mktemp("demo")
    db = where / "demo.db"
    done = cli("demo", "--turns", "240", "--db", str(db))
    assert done.returncode == 0, done.stderr
    page = where / "demo.html"
    shown = cli("inspect", "demo", "--db", str(db), "--html", str(page))
    assert shown.returncode == 0, shown.stderr
    store = index_store.open(db)
    count = len(store.turn_log("demo")) + len(store.summaries("demo"))
    store.close()
    return page, count


def rows_found_by(html: str, query: str) -> list[str]:
    """The rows of a page (live and history) a query finds as the stores find them: those
    holding any term of the query."""
    listed = json.loads(re.search(r'id="search-terms">([^<]*)<', html).group(1))  # type: ignore[union-attr]
    terms = set(query_terms(query))
    wanted = {n for n, term in enumerate(listed) if term in terms}
    payload = re.search(r'id="history-data">([^<]*)<', html)
    history = json.loads(zlib.decompress(base64.b64decode(payload.group(1)))) if payload else []
    body = html.split("<script>")[0]  # not the page's own script
    rows = re.findall(r'data-t="([^"]*)"', body + "".join(e["b"] for e in history))
    return [r for r in rows if wanted & {int(n, 36) for n in r.split()}]


@pytest.mark.slow
@needs_chromium
def test_two_thousand_blocks_stay_usable(browser: Any, demo_page: tuple[Path, int]) -> None:
    """At 2,000+ blocks the page is under 1 MB and paints in under a second; search
    finds blocks across the live window and the history and shows only them; a turn
    and the next compaction are one jump away. Writes the screenshot artifact."""
    path, count = demo_page
    assert count > 2_000
    assert path.stat().st_size < 1_000_000
    errors: list[str] = []
    page = _open(browser, path, errors)
    first_paint = page.evaluate(FIRST_PAINT)
    assert first_paint < 1_000, first_paint
    assert page.locator(".block").count() < 200  # history not built yet
    shots = _shots()
    page.screenshot(path=str(shots / "timeline.png"))
    page.fill("#q", "connection leak")
    page.wait_for_function("() => document.querySelector('#q-count').textContent.includes('match')")
    hits = page.locator(".block.hit")
    assert hits.count() == len(rows_found_by(path.read_text(), "connection leak")) > 1
    store = index_store.open(path.parent / "demo.db")
    # the store ranks the same blocks, a call and its result as one hit, the latest summary
    assert 0 < len(store.search("demo", "connection leak", limit=10_000)) <= hits.count()
    store.close()
    assert page.locator("#history-entries .block:not(.hit)").first.is_hidden()
    page.screenshot(path=str(shots / "timeline-search.png"))
    page.fill("#q", "")
    page.wait_for_function("() => !document.body.classList.contains('searching')")
    page.fill("#turn", "t12")
    page.press("#turn", "Enter")
    target = page.locator('#history-entries > .entry[data-turn="t12"]')
    target.wait_for()
    header = page.locator(".top").evaluate("e => e.getBoundingClientRect().bottom")
    top = target.evaluate("e => e.getBoundingClientRect().top")
    assert target.evaluate("e => e.open") and header <= top <= header + 40
    page.click("#cmp-next")
    page.wait_for_timeout(100)
    landed = page.evaluate(
        """() => [...document.querySelectorAll('#history-entries > .entry.compaction')]
        .map(e => e.getBoundingClientRect().top).filter(t => t >= 0 && t < 200).length"""
    )
    assert landed == 1
    assert errors == []
    assert (shots / "timeline.png").stat().st_size > 10_000


def _axe(page: Any) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(VENDOR / "axe.min.js"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [v for v in result["violations"] if v["impact"] in ("serious", "critical")]


@pytest.mark.slow
@needs_chromium
def test_accessibility(browser: Any, demo_page: tuple[Path, int], tmp_path: Path) -> None:
    """axe-core (vendored, tests/data/vendor/axe-core) finds no serious or critical
    violation, on the page as it opens and with the history, a turn and a block open,
    nor on a prompt's to_html page (the CSP is bypassed only to inject axe)."""
    path, _ = demo_page
    errors: list[str] = []
    page = _open(browser, path, errors, bypass_csp=True)
    assert _axe(page) == []
    page.click("#history-box > summary")
    page.locator("#history-entries > details").first.wait_for()
    page.locator("#history-entries > details > summary").nth(2).click()
    page.locator("#history-entries .block > summary").first.click()
    page.locator("#live .block > summary").first.click()
    assert _axe(page) == []
    tl, _ = conversation()
    single = tmp_path / "view.html"
    single.write_text(tl.render("sys").to_html())
    assert _axe(_open(browser, single, errors, bypass_csp=True)) == []
    assert errors == []


def test_the_block_type_table_has_one_row_per_type() -> None:
    """The "by block type" table is the header row then one row per type (the system
    prompt's included), nothing between them."""
    tl, page = listing_page()
    found = re.search(
        r'<details class="types"><summary>by block type</summary><table>(.*?)'
        r"</table></details>",
        page,
    )
    assert found is not None
    rows = re.findall(r"<tr>.*?</tr>", found.group(1))
    assert "".join(rows) == found.group(1)
    assert len(rows) == 1 + len({b.type for b in tl.blocks}) + 1


def test_a_digest_lists_each_entry_of_a_section() -> None:
    """The page's digest text: a section with its count, then one line per entry."""
    digest = {"files_read": ["src/a.py", {"path": "src/b.py", "turn": "t2"}], "goal": ""}
    assert digest_text(digest) == "files_read (2):\n  src/a.py\n  path=src/b.py · turn=t2"
    assert digest_text({"goal": "", "searches": []}) == "(empty)"


def test_a_block_of_exactly_the_text_limit_is_shown_whole() -> None:
    tl = Timeline("h", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("x" * TEXT_LIMIT))
    assert "more characters: store.read(" not in tl.render("sys").to_html()
    tl.append(blocks.user_prompt("y" * (TEXT_LIMIT + 1)))
    assert "[... 1 more characters: store.read(" in tl.render("sys").to_html()


def test_a_summary_row_names_the_turns_it_covers() -> None:
    tl = Timeline("s", policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    covered = view.blocks[0].meta["covered_turn_ids"]
    assert covered
    assert f"turns {covered[0]} to {covered[-1]}: " in view.to_html()


def test_a_row_without_a_tool_names_nothing() -> None:
    """A prompt's row has no name before its preview (the default is empty, not text)."""
    _, page = listing_page()
    row = re.search(r'data-type="user.prompt".*?<span class="what">(.*?)</span></span>', page)
    assert row is not None
    assert row.group(1) == '<span class="line">list the files'


class _Inputs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict[str, str | None]] = []
        self.stray = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "input":
            self.inputs.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.stray += data


def test_the_turn_field_is_labelled_and_nothing_leaks_as_text() -> None:
    """The toolbar's turn field carries its accessible label; no markup spills into the
    page as text (the browser tests check the same, but mutation runs leave them out)."""
    parser = _Inputs()
    parser.feed(toolbar())
    turn = next(i for i in parser.inputs if i.get("id") == "turn")
    assert turn["aria-label"] == "jump to turn" and turn["autocomplete"] == "off"
    assert "=" not in parser.stray and "autocomplete" not in parser.stray


def test_a_summary_recording_one_tier_names_it_on_its_card() -> None:
    """The compaction card reads a summary's ``tiers`` list, or the single ``tier`` a
    summary of an earlier version recorded."""
    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    tl = Timeline("s", policy=policy)
    for i in range(10):
        coding_turn(tl, i)
    tl.render("sys")
    snap = tl.snapshot()
    summary = next(b for b in snap.blocks if b.type == "conv.range.summary")
    assert "tiers" not in summary.meta and "tier: " not in tl.render("sys").to_html()
    older = msgspec.structs.replace(summary, meta={**summary.meta, "tier": "clear"})
    restored = Timeline("s", policy=policy)
    restored.restore(
        msgspec.structs.replace(snap, blocks=[older if b is summary else b for b in snap.blocks])
    )
    assert "<li>tier: clear</li>" in restored.render("sys").to_html()


def test_a_result_row_counts_lines_only_past_one() -> None:
    tl = Timeline("r", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    one = tl.append(blocks.tool_call("pwd", {}))
    tl.append(blocks.tool_result(one.call_id or "", "/home/dev"))
    two = tl.append(blocks.tool_call("ls", {"path": "."}))
    tl.append(blocks.tool_result(two.call_id or "", "a.py\nb.py"))
    page = tl.render("sys").to_html()
    assert '<span class="line">/home/dev</span>' in page
    assert '<span class="line">a.py (2 lines)</span>' in page


def test_the_largest_block_fills_its_token_meter() -> None:
    """Token meters are scaled to the largest row of the page: it fills its meter."""
    _, page = listing_page()
    widths = [float(w) for w in re.findall(r'<i style="width:([0-9.]+)%"></i>', page)]
    assert widths and max(widths) == 100.0 and min(widths) > 0.0


def test_a_plan_row_is_labelled_by_the_last_part_of_its_type() -> None:
    tl = Timeline("k", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.plan("1. read the code"))
    tl.append(blocks.custom("stage.gate", "open"))
    page = tl.render("sys").to_html()
    assert '<span class="kind">plan</span>' in page
    assert '<span class="kind">stage.gate</span>' in page


def test_earlier_compactions_in_the_history_are_numbered_in_order() -> None:
    from tests.helpers.html_page import conversation, history, stored_page

    tl, store = conversation(turns=8)
    heads = [e["h"] for e in history(stored_page(tl, store)) if e["k"] == "compaction"]
    assert heads
    assert [h.split(" in turn ")[0] for h in heads] == [
        f"compaction {n}" for n in range(1, len(heads) + 1)
    ]


def test_the_prompt_strip_is_an_image_with_its_label() -> None:
    tl, _ = listing_page()
    view = tl.render("sys")
    label = (
        "the prompt's blocks in order, "
        f"{len(view.cache_points)} cache checkpoint{'' if len(view.cache_points) == 1 else 's'}"
    )
    assert f'<div class="strip" role="img" aria-label="{label} (dashed)">' in (view.to_html())


def test_a_compaction_card_of_a_summary_without_covered_turns() -> None:
    """A summary whose meta names no covered turns (one written by hand, or by an older
    version) still gets its card: it summarized "nothing" there."""
    summary = msgspec.structs.replace(blocks.summary("earlier work"), id="s1", path="su:t1.s")
    card = compaction_html(Item(summary, 10, ()), 1, None, None)
    assert "nothing" in card


def test_the_history_holds_one_entry_per_earlier_turn() -> None:
    from tests.helpers.html_page import conversation, history, stored_page

    tl, store = conversation(turns=8)
    entries = [e for e in history(stored_page(tl, store)) if e["k"] == "turn"]
    turns = [e["id"] for e in entries]
    assert turns and len(turns) == len(set(turns))
    assert all(e["h"].startswith(f"turn {e['id']} · ") for e in entries)


def test_the_live_window_opens_and_closes_every_section() -> None:
    """The live window starting on a summary: its card's section is the first one
    opened, and every section opened is closed once."""
    tl = Timeline("s", policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    assert view.blocks[0].type == "conv.range.summary"
    page = view.to_html()
    assert page.count("<section") == page.count("</section>")


def test_only_a_turn_header_row_has_the_header_class() -> None:
    _, page = listing_page()
    rows = re.findall(r'<details class="([^"]*)"[^>]*data-type="([^"]+)"', page)
    assert {t for c, t in rows if "header" in c.split()} == {"turn.header"}


def test_the_html_live_window_counts_blocks_in_lower_case() -> None:
    tl = Timeline("h", policy=CompactionPolicy(max_tokens=10_000), token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    page = tl.render("sys").to_html()
    assert 'in order <span class="count">(2 blocks)</span>' in page


def test_the_html_context_bar_without_a_trigger_has_no_trigger_mark() -> None:
    """Without a budget there is no compaction trigger: the context bar holds only its
    category slices (an unset mark must add nothing, not "None")."""
    tl = Timeline("h", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.warns(Warning):
        page = tl.render("sys").to_html()
    bar = re.search(r'<div class="ctx"[^>]*>(.*?)</div>', page)
    assert bar is not None and bar.group(1).startswith('<span class="seg"')
    assert bar.group(1).endswith("></span>") and "trigger" not in bar.group(1)
