"""The HTML page searches as the stores do: each row lists the terms
:mod:`timeline.model.search_text` finds it by, and the page's script reads a query into
the same terms (``assets/search.js``, run here with Node.js against the Python)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from timeline import CompactionPolicy, Timeline, blocks
from timeline.model.search_text import STOP_WORDS, block_counts, query_terms
from timeline.render.html import query_script

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


@pytest.fixture(scope="module")
def node_terms() -> dict[str, list[str]]:
    """Each query's terms as the page's script reads them, run by Node.js."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed (the browser test runs the same script)")
    harness = (
        "const vm = require('vm'); const fs = require('fs');"
        "const ctx = {}; vm.createContext(ctx);"
        "vm.runInContext(fs.readFileSync(0, 'utf8') + '\\nthis.T = TimelineSearch;', ctx);"
    )
    script = query_script()
    queries = json.dumps(QUERIES)
    code = harness + f"console.log(JSON.stringify({queries}.map((q) => ctx.T.queryTerms(q))));"
    done = subprocess.run(
        [node, "-e", code], input=script, capture_output=True, text=True, timeout=60, check=True
    )
    return dict(zip(QUERIES, json.loads(done.stdout), strict=True))


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
