"""The inventory summary stays within its cap at any session length (#16 item 10)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.conversations import coding_turn
from tests.helpers.summary_sections import parse_sections
from timeline import (
    CompactionDigest,
    CompactionPolicy,
    InventorySummarizer,
    SummaryRequest,
    Timeline,
    blocks,
)
from timeline._compaction.digest import build_digest, cap_request
from timeline._compaction.summarizers.base import SummaryResult, estimate_tokens


def long_session(tl: Timeline, turns: int, words: int, offset: int = 0) -> None:
    for i in range(offset, offset + turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {i}: " + "please refactor the parser " * words))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/module_{i}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "x" * 50, is_error=i % 7 == 0))
        tl.append(blocks.assistant_completion(f"Changed module_{i}. Next is {i + 1}."))


@settings(max_examples=40, deadline=None)
@given(
    turns=st.integers(1, 120),
    words=st.integers(0, 40),
    max_tokens=st.integers(16, 3_000),
    rounds=st.integers(1, 3),
    opaque=st.booleans(),
)
def test_inventory_summary_never_exceeds_max_tokens(
    turns: int, words: int, max_tokens: int, rounds: int, opaque: bool
) -> None:
    """Chained summaries of any length stay within max_tokens (chars/4), however small:
    extending the previous sections (as compaction does) or a previous text carried
    verbatim (``opaque``: a summary without sections)."""
    tl = Timeline("cap")
    previous, digest = SummaryResult(""), None
    for r in range(rounds):
        long_session(tl, turns, words, offset=r * turns)
        window = tl.blocks[-4 * turns :]
        digest = build_digest(window, digest)
        request = SummaryRequest(
            "history",
            window,
            previous_summary=previous.text,
            previous_sections=None if opaque else previous.sections,
            digest=digest,
            max_tokens=max_tokens,
        )
        previous = InventorySummarizer().summarize_sections(request)
        assert estimate_tokens(previous.text) <= max_tokens
        prefix = SummaryRequest("turn_prefix", window, digest=digest, max_tokens=max_tokens)
        assert estimate_tokens(InventorySummarizer().summarize(prefix)) <= max_tokens


def test_older_requests_fold_keeping_the_goal_and_the_newest() -> None:
    """Over the cap even at the shortest request cap: the goal and the newest requests
    stay verbatim, the ones between are counted as omitted."""
    tl = Timeline("fold")
    long_session(tl, 60, 30)
    digest = build_digest(tl.blocks, None)
    request = SummaryRequest("history", tl.blocks, digest=digest, max_tokens=900)
    text = InventorySummarizer().summarize(request)
    requests = parse_sections(text)["User Requests"]
    assert estimate_tokens(text) <= 900
    assert requests[0].startswith("- request 0: please")
    assert requests[-1].startswith("- request 59: please")
    kept = len(requests) - 2
    assert f"({60 - 1 - kept} earlier requests omitted here" in requests[1]
    assert 0 < kept < 59


def test_compaction_summaries_stay_within_summary_max_tokens() -> None:
    """Through the timeline: every summary of a long session is within the policy's cap."""
    policy = CompactionPolicy(max_tokens=4_000, summary_max_tokens=300)
    tl = Timeline("tl", policy=policy)
    for chunk in range(6):
        long_session(tl, 20, 25, offset=chunk * 20)
        tl.render("sys")
    summaries = [b for b in tl.blocks if b.type == "conv.range.summary"]
    assert len(summaries) >= 3
    assert all(estimate_tokens(s.text) <= 300 + 8 for s in summaries)


def test_a_request_over_a_one_character_cap_is_cut() -> None:
    """Only a cap of 0 means "no cap": a cap of 1 still cuts (``cap <= 1`` kept it)."""
    assert cap_request("hello world", 1) == " [... 11 more chars]"
    assert cap_request("hello world", 0) == "hello world"


def test_requests_take_the_longest_cap_their_lines_fit_in() -> None:
    """The inventory sizes the request lines with their ``- `` and line break each: four
    long requests are listed at 240 characters from a budget of 381 tokens on, at 120 below
    it (counting a character less a line would move that step to a larger budget)."""
    tl = Timeline("r")
    for i in range(3):
        coding_turn(tl, i)
    requests = [f"request {i} " + "x" * 700 for i in range(4)]
    for max_tokens, shown in ((380, 120), (381, 240)):
        request = SummaryRequest(
            kind="history",
            blocks=tuple(tl.blocks),
            digest=CompactionDigest(user_requests=requests),
            max_tokens=max_tokens,
        )
        text = InventorySummarizer().summarize(request)
        listed = [line for line in text.splitlines() if line.startswith("- request ")]
        assert [line.split(" [... ")[0] for line in listed] == [f"- {r[:shown]}" for r in requests]
