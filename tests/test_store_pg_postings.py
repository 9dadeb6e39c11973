"""PostgreSQL's postings (schema 5) whatever plan the server picks: appending a commit's
postings must read the table once, not once per word."""

from __future__ import annotations

import pytest
from conftest import PG_DSN

import index_store
from timeline import Timeline, blocks

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
