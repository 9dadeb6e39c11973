"""The HTML page searches as the stores do: each row lists the terms
:mod:`timeline._model.search_text` finds it by, and the page's script reads a query into
the same terms (``assets/search.js``, run here with Node.js against the Python)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import index_store
from timeline import CompactionPolicy, Timeline, blocks
from timeline._cli.html_view import timeline_html
from timeline._html.page import query_script
from timeline._model.block import CONV_RANGE_SUMMARY
from timeline._model.search_text import STOP_WORDS, block_counts, query_terms

QUERIES = [
    "connection leak",
    "What did Caroline research about the agencies?",
    "retry_with_backoff getUserName HTTPServer IDs worker3 src/worker_3.py",
    "version 3.14 and 10.0.0.1, port 007, build a1b2c3d4e5f6",
    "Ünïcödé café naïve résumé Straße ΣΊΣΥΦΟΣ",
    "日本語のテキスト 東京タワー ภาษาไทย",
    "the and of it is",
    "hopeful hopefulness generalization relational conditional rational",
    "caresses ponies ties caress cats feed agreed plastered bled motoring sing",
    "conflated troubled sized hopping tanned falling hissing fizzed failing filing",
    "happy sky triplicate formative formalize electriciti electrical hopeful goodness",
    "revival allowance inference airliner gyroscopic adjustable defensible irritant",
    "replacement adjustment dependent adoption homologou communism activate angulariti",
    "homologous effective bowdlerize probate rate cease controll roll",
    "x y z _ __init__ a_b c9 9c",
]


def run_script(expression: str) -> object:
    """``expression`` (JavaScript, with the page's ``TimelineSearch`` as ``T``) evaluated
    by Node.js, its value as JSON."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed (the browser test runs the same script)")
    harness = (
        "const vm = require('vm'); const fs = require('fs');"
        "const ctx = {}; vm.createContext(ctx);"
        "vm.runInContext(fs.readFileSync(0, 'utf8') + '\\nthis.T = TimelineSearch;', ctx);"
        "const T = ctx.T;"
    )
    code = harness + f"console.log(JSON.stringify({expression}));"
    done = subprocess.run(
        [node, "-e", code], input=query_script(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def node_terms() -> dict[str, list[str]]:
    """Each query's terms as the page's script reads them, run by Node.js."""
    found = run_script(f"{json.dumps(QUERIES)}.map((q) => T.queryTerms(q))")
    assert isinstance(found, list)
    return dict(zip(QUERIES, found, strict=True))


@pytest.mark.parametrize("query", QUERIES)
def test_the_page_reads_a_query_as_the_stores_do(
    node_terms: dict[str, list[str]], query: str
) -> None:
    """The page's script gives a query the terms the stores search by."""
    assert node_terms[query] == query_terms(query)


def test_the_script_carries_the_stores_stop_words() -> None:
    """The stop words are written into the page from the Python module."""
    listed = re.search(r'new Set\("([^"]*)"\.split', query_script())
    assert listed is not None
    assert set(listed.group(1).split()) == STOP_WORDS


def test_each_row_lists_the_terms_search_finds_it_by() -> None:
    """A row's ``data-t`` numbers are its block's terms in the page's term list; a tool
    result is found by its call's words too."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=20_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Why does the pool leak connections?"))
    call = tl.append(blocks.tool_call("grep", {"pattern": "acquire"}))
    result = tl.append(blocks.tool_result(call.call_id or "", "pool.py:12: conn = get()"))
    page = tl.render("sys").to_html()
    listed = json.loads(re.search(r'id="search-terms">([^<]*)<', page).group(1))  # type: ignore[union-attr]
    rows = dict(re.findall(r'data-path="([^"]*)" data-turn="[^"]*" data-t="([^"]*)"', page))
    for block, call_of in ((tl.blocks[1], None), (result, call)):
        numbers = rows[block.path].split()
        assert {listed[int(n, 36)] for n in numbers} == set(block_counts(block, call_of))
    assert "acquir" in {listed[int(n, 36)] for n in rows[result.path].split()}


FOUND_BY = [
    "connection leak",  # some rows hold both words, others one: every one of them
    "leaking connections",  # the same terms, other forms of the words
    "connection zebra",  # no row holds both: the rows holding either
    "leak",
    "pool connections",
    "zebra",  # nowhere: nothing
]


def page_rows(page: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The page's term list and every row's block type and terms (the live window's, then
    the history's), as the page's data holds them."""
    listed = json.loads(re.search(r'id="search-terms">([^<]*)<', page).group(1))  # type: ignore[union-attr]
    payload = re.search(r'id="history-data">([^<]*)<', page)
    history = json.loads(zlib.decompress(base64.b64decode(payload.group(1)))) if payload else []
    body = page.split("<script")[0] + "".join(e["b"] for e in history)
    found = re.findall(r'data-type="([^"]*)"[^>]*? data-t="([^"]*)"', body)
    return listed, [(kind, [listed[int(n, 36)] for n in r.split()]) for kind, r in found]


def test_the_page_finds_the_blocks_the_store_finds(tmp_path: Path) -> None:
    """The page's search, run by Node.js over the page's own rows, finds the turn-log
    blocks the store's search finds (what ``timeline search`` ranks) for each query: the
    blocks holding any of its words; and every summary holding one, where the store
    searches the latest."""
    store = index_store.open(tmp_path / "c.db")
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1_200))
    for t in range(10):
        tl.begin_turn()
        words = ["the connection leaks in pool.py", "a leak in the cache", "connection reset"]
        tl.append(blocks.user_prompt(f"Turn {t}: {words[t % 3]}, please look."))
        call = tl.append(blocks.tool_call("grep", {"pattern": "acquire"}))
        output = f"pool.py:{t}: conn = pool.acquire()\n" * 20
        tl.append(blocks.tool_result(call.call_id or "", output))
        tl.append(blocks.assistant_completion(f"Fixed it in turn {t}."))
        tl.render("sys")
        tl.persist(store)
    log, summaries = store.turn_log("c"), store.summaries("c")
    assert summaries and len(tl.blocks) < len(log)
    listed, rows = page_rows(timeline_html(tl, "sys", log=log, summaries=summaries))
    assert len(rows) == len(log) + len(summaries)
    known = {term: n for n, term in enumerate(listed)}
    wanted = [[known.get(t, -1) for t in query_terms(q)] for q in FOUND_BY]
    numbered = [[known[t] for t in terms] for _, terms in rows]
    script = (
        f"{json.dumps(wanted)}.map((w) => {{"
        f"const rows = {json.dumps(numbered)}.map((r) => new Set(r));"
        "const finds = T.finder(w.map((n) => (n < 0 ? undefined : n)));"
        "return rows.map(finds); })"
    )
    on_page = run_script(script)
    assert isinstance(on_page, list)
    summary = {n for n, (kind, _) in enumerate(rows) if kind == CONV_RANGE_SUMMARY}
    for query, found in zip(FOUND_BY, on_page, strict=True):
        hits = store.search("c", query, limit=1_000)
        in_log = [n for n, hit in enumerate(found) if hit and n not in summary]
        assert len(in_log) == sum(h.kind == "log" for h in hits), query
        assert any(found[n] for n in summary) == any(h.kind == "summary" for h in hits)
    counts = [len(store.search("c", q, limit=1_000)) for q in FOUND_BY]
    store.close()
    assert counts[0] > counts[3] and counts[2] > 0 and counts[-1] == 0
