"""PostgreSQL's postings (schema 5) whatever plan the server picks: appending a commit's
postings must read the table once, not once per word; and a search ranks the same
whether it scores every row its postings hold or takes them in the order of their bound."""

from __future__ import annotations

import random
from typing import Any

import pytest

import index_store
import index_store._pg_search as pg_search
from tests.helpers.clock import FixedClock
from tests.helpers.search_reference import hits
from tests.helpers.stores import PG_DSN, open_store
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks

SLOW_PLANNER = "-c enable_indexscan=off -c enable_bitmapscan=off -c statement_timeout=20000"
"""A server that plans table scans (index scans off), and gives a statement 20 s."""


def _with_options(dsn: str, options: str) -> str:
    joined = options.replace(" ", "%20").replace("=", "%3D")
    return f"{dsn}{'&' if '?' in dsn else '?'}options={joined}"


def test_a_commit_of_many_new_words_reads_the_postings_once() -> None:
    """100,000 words the conversation never held persist within the statement timeout
    when the server scans tables instead of using their indexes: a lookup of each word's
    last chunk, planned as a table scan, would also pass every row the statement had
    inserted so far (a commit of 250,000 new words ran for over 15 minutes that way)."""
    if not PG_DSN:
        pytest.skip("PostgreSQL store tests need BLOCK_TIMELINE_PG_DSN (set by .ci/run)")
    store = index_store.open(_with_options(PG_DSN, SLOW_PLANNER))
    try:
        if "postings-scan" in store.conversations():
            store.delete("postings-scan")
        tl = Timeline("postings-scan")
        tl.begin_turn()
        words = " ".join(f"p{i:x}" for i in range(100_000))
        prompt = tl.append(blocks.user_prompt(f"needle {words}"))
        tl.persist(store)
        tl.begin_turn()
        tl.append(blocks.user_prompt("needle p1f p2e again"))
        tl.persist(store)  # appends to the chunks the first commit made
        found = [h.block.id for h in store.search("postings-scan", "p1f", limit=5)]
        assert prompt.id in found
        store.delete("postings-scan")
    finally:
        store.close()


def _session(rng: random.Random) -> Timeline:
    """Prompts, tool calls (some answered twice) and their results over common and rare
    words, repeated texts (equal scores), compacted as it goes (summaries)."""
    common = ["alpha", "beta", "gamma"]
    rare = [f"word{n}" for n in range(30)]
    tl = Timeline(
        "c",
        policy=CompactionPolicy(max_tokens=900, keep_recent_turns=1),
        token_counter=HeuristicCounter(),
        clock=FixedClock(),
    )
    for n in range(70):
        tl.begin_turn()
        text = " ".join(rng.choices(common, k=rng.randint(1, 5)) + rng.sample(rare, 2))
        tl.append(blocks.user_prompt(text if n % 7 else "alpha beta word1"))
        call = tl.append(blocks.tool_call("grep", {"pattern": rng.choice(rare)}))
        for _ in range(1 + (n % 5 == 0)):
            out = " ".join(rng.choices(common + rare, k=rng.randint(1, 40)))
            tl.append(blocks.tool_result(call.call_id or "", out, tool_id="grep"))
        tl.render("You search.")
    return tl


def test_scoring_every_row_ranks_as_the_order_of_bounds(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that scores every row of its postings (few of them) gives the hits,
    order, scores, snippets and attached calls and results of one taking the rows in the
    order of their bound, and of the memory store, whatever the limit."""
    store, reference = open_store("postgres", tmp_path), index_store.open("memory://")
    try:
        _session(random.Random(3)).persist(store)
        _session(random.Random(3)).persist(reference)
        assert store.summaries("c")
        rng = random.Random(4)
        words = ["alpha", "beta", "gamma", "word1", "word2", "word7", "grep"]
        for _ in range(25):
            query = " ".join(rng.sample(words, rng.randint(1, 4)))
            for limit in (1, 2, 5, 40):
                want = hits(reference, "c", query, limit)
                monkeypatch.setattr(pg_search, "EVERY", 0)
                assert hits(store, "c", query, limit) == want, (query, limit)
                monkeypatch.setattr(pg_search, "EVERY", 1_000_000)
                assert hits(store, "c", query, limit) == want, (query, limit)
    finally:
        store.close()
