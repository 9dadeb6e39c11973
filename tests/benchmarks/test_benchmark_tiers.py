"""The tiered-compaction benchmark (benchmarks/tiers.py) on a short session: each strategy
does what its row says, and the scores are computed the way the table states."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from benchmarks import tiers
from benchmarks.evaluate import Evaluator
from benchmarks.peer_strategies import Stacked, Summarize
from benchmarks.peers import feed_together
from benchmarks.session import generate

pytestmark = pytest.mark.slow  # benchmark runs

BUDGET = 8_000


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    # Strands is a benchmark-only peer (benchmarks/requirements.txt); these tests are
    # about ours and the LangChain peers, which the test extra installs
    return tiers.run(turns=25, budget=BUDGET, strands=False)


def test_every_strategy_is_scored_on_every_request(result: dict[str, Any]) -> None:
    counts = {r["name"]: r["requests"] for r in result["rows"]}
    assert len(set(counts.values())) == 1, counts
    assert {tiers.SUMMARIZE_ONLY, tiers.TIERED, tiers.PEER, tiers.STACKED} <= set(counts)


def test_ours_stay_within_budget_without_orphans(result: dict[str, Any]) -> None:
    for r in result["rows"]:
        if r["name"].startswith("ours"):
            assert r["over_budget"] == 0 and r["orphans"] == 0, r["name"]


def test_the_peers_summary_requests_are_billed(result: dict[str, Any]) -> None:
    """SummarizationMiddleware's transcript prompts are paid in full (nothing cached);
    the cache-warm summary requests are mostly read from cache."""
    by = {r["name"]: r for r in result["rows"]}
    peer = by[tiers.PEER]
    assert peer["summary_requests"] > 0 and peer["summary_cached"] == 0
    assert peer["total_cost_per_request"] > peer["cost_per_request"]
    warm = by["ours, tiered + CacheWarmSummarizer"]
    assert warm["summary_requests"] > 0 and warm["summary_cached"] > 0.5


def test_the_stacked_pair_clears_tool_results_in_what_it_sends() -> None:
    """ContextEditingMiddleware edits the request, not the state: the messages sent carry
    its placeholder and are smaller than SummarizationMiddleware's alone."""
    events = list(generate(25, 0))
    alone, stacked = Summarize(BUDGET, memoized=True), Stacked(BUDGET, memoized=True)
    plain, edited = feed_together([alone, stacked], events)
    assert any(p[2] == "[cleared]" for parts in edited for p in parts)
    assert not any(p[2] == "[cleared]" for parts in plain for p in parts)
    ev = Evaluator(BUDGET)
    assert ev.score(edited)["mean_tokens"] < ev.score(plain)["mean_tokens"]


def test_user_messages_verbatim_count_exact_texts_only() -> None:
    ev = Evaluator(BUDGET)
    request = [
        ("system", "text", "sys", "", True),
        ("user", "text", "fix the parser", "", False),
        ("user", "text", "fix the parser, summarized", "", False),
        ("assistant", "text", "fix the parser", "", False),
    ]
    assert ev.score([request], user_messages={"fix the parser"})["user_visible"] == 1


def test_offload_costs_less_than_the_tiered_default(result: dict[str, Any]) -> None:
    """Offloading big results on arrival costs less per request than the tiered default
    and leaves more of the user's messages verbatim, within budget and without orphans."""
    by = {r["name"]: r for r in result["rows"]}
    offload, tiered = by[tiers.OFFLOAD], by[tiers.TIERED]
    assert offload["cost_per_request"] < tiered["cost_per_request"]
    assert offload["user_visible"] > tiered["user_visible"]
    assert offload["over_budget"] == 0 and offload["orphans"] == 0
