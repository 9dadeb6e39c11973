"""Edges of ``timeline._compaction`` (the summarizers' transcript lines, the clearing
tier's placeholders, what the digest remembers of a search), written against mutants of
the sampled mutation campaign (docs/dev/mutation-testing.md, "Sampled campaign") that the broader
tests let through; each was checked to fail with its mutant applied."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta

import msgspec
import pytest

from tests.helpers.conversations import coding_turn
from timeline import (
    ClearingPolicy,
    CompactionPolicy,
    HeuristicCounter,
    PolicyError,
    SummaryRequest,
    Timeline,
    blocks,
)
from timeline._compaction.clearing import signature
from timeline._compaction.cuts import _kept_tokens
from timeline._compaction.digest import build_digest
from timeline._compaction.digest_records import CompactionDigest, classify_tool
from timeline._compaction.digest_tools import command_of, search_record
from timeline._compaction.run import summarize_sync
from timeline._compaction.summarizers._page import Page
from timeline._compaction.summarizers._progress import turn_items
from timeline._compaction.summarizers._sentences import first_sentence
from timeline._compaction.summarizers.base import block_line
from timeline._compaction.summarizers.cache_warm import _quote
from timeline._compaction.summarizers.inventory import InventorySummarizer
from timeline._compaction.summarizers.llm import build_prompt, finish_summary
from timeline._compaction.truncation import truncate_to_fit
from timeline._model.block import CONV_RANGE_SUMMARY


def test_a_tool_result_line_names_its_tool() -> None:
    """A result reads ``tool -> text`` in a summarizer's transcript ("tool" when the
    result names none), so the summary can tell which tool said what."""
    assert block_line(blocks.tool_result("c1", "ok", tool_id="grep")) == "[Tool]: grep -> ok"
    assert block_line(blocks.tool_result("c1", "ok")) == "[Tool]: tool -> ok"


def test_a_cleared_placeholder_without_tool_or_call_says_tool() -> None:
    assert signature(None, None) == "tool()"
    assert signature(None, " read  file ") == "read file()"


def test_a_search_count_field_wins_over_its_hit_list() -> None:
    """A search result with a count field and a (first page of a) hit list reports the
    count: the list may be truncated, the count is the tool's own figure."""
    call = blocks.tool_call("search", {"query": "TODO"})
    out = blocks.tool_result("c", json.dumps({"hits": ["a.py", "b.py"], "total": 57}))
    assert search_record(call, {"query": "TODO"}, [out]).hits == 57
    listed = blocks.tool_result("c", json.dumps({"hits": ["a.py", "b.py"]}))
    assert search_record(call, {"query": "TODO"}, [listed]).hits == 2


def test_the_cache_warm_instruction_names_a_blank_block_by_its_type() -> None:
    """A block with no text to quote is named by its type in the instruction."""
    assert _quote(blocks.user_prompt(" \n ")) == "the user.prompt block"
    assert _quote(blocks.user_prompt("\n fix the build \n")) == (
        'the message that starts "fix the build"'
    )


def test_a_call_without_a_tool_name_is_classified_other() -> None:
    """As documented: overrides, then the defaults, else "other" (a nameless call too)."""
    assert classify_tool(None) == "other"
    assert classify_tool("", {"": "read"}) == "other"
    assert classify_tool("fetch_page", {"fetch_page": "read"}) == "read"


def test_a_failed_summarizer_is_recorded_in_the_summary_meta(
    make_tl: Callable[..., Timeline],
) -> None:
    """The summary block itself says the inventory stood in and why (the HTML view and
    a loaded timeline read it there, not from the render's stats)."""

    class Broken:
        name = "broken"

        def summarize(self, request: SummaryRequest) -> str:
            raise RuntimeError("model down")

    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    tl = make_tl(policy=policy, summarizer=Broken())
    for i in range(10):
        coding_turn(tl, i)
    summary = tl.render("sys").blocks[0]
    assert summary.meta["summarizer"] == "inventory"
    assert summary.meta["summarizer_error"] == "RuntimeError: model down"


def test_a_plan_history_never_takes_the_id_of_its_summary() -> None:
    """The summary's id is not in the ledger yet when the plan history block gets its
    id: an id factory giving one id to two sequence numbers must not make them share."""

    def paired(kind: str, seq: int) -> str:
        return f"{kind}-{(seq + 1) // 2}"

    policy = CompactionPolicy(max_tokens=1_000, keep_recent_turns=0)
    tl = Timeline("c", policy=policy, token_counter=HeuristicCounter(), id_factory=paired)
    tl.begin_turn()
    huge = "word " * 400
    made = [
        blocks.user_prompt("Fix the failing test in a.py"),
        blocks.tool_call("read_file", {"i": 0}, call_id="x0"),
        blocks.tool_result("x0", huge, tool_id="read_file"),
        blocks.plan("Fix the failing test in a.py"),
        blocks.plan(huge),
    ]
    for i, block in enumerate(made):
        tl.append(msgspec.structs.replace(block, id=f"u{i}"))
    assert tl.compact(force=False) is not None
    ids = [b.id for b in tl.blocks if b.type in (CONV_RANGE_SUMMARY, "react.plan.history")]
    assert len(ids) == 2 and len(set(ids)) == 2


@pytest.mark.parametrize("key", ["command", "cmd", "script", "code"])
def test_an_exec_command_is_read_under_each_key(key: str) -> None:
    assert command_of({key: "make test", "timeout": 60}) == "make test"
    assert command_of({key: ["pytest", "-q"]}) == "pytest -q"
    assert command_of({"timeout": 60, "cwd": "/"}) == '{"cwd":"/","timeout":60}'


def test_a_constraint_outlives_the_compaction_that_summarized_it(
    make_tl: Callable[..., Timeline],
) -> None:
    """The inventory carries the previous summary's constraints into the next one: a
    rule the user gave once stays in every later summary."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Build the parser."))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Never edit the migrations folder."))
    tl.append(blocks.assistant_completion("Understood."))
    seen = 0
    for i in range(30):
        coding_turn(tl, i)
        view = tl.render("sys")
        if view.compaction is not None:
            seen += 1
            assert "\n- Never edit the migrations folder.\n" in view.blocks[0].text
    assert seen >= 3


def test_a_turn_not_started_is_named_by_its_prompt_not_a_later_note() -> None:
    """A turn with a request and no work yet is Not Started under the request's first
    sentence; a note after it (any other block with text) is not the request."""
    tl = Timeline("p")
    tl.begin_turn()
    tl.append(blocks.user_prompt("Add a --verbose flag. Keep the defaults."))
    tl.append(blocks.note("The repository was checked out at main."))
    done, in_progress, not_started = turn_items(tl.blocks, {})
    assert (done, in_progress) == ([], [])
    assert not_started == ["t1: Add a --verbose flag."]


def test_truncation_never_cuts_a_tool_call_or_a_protected_block() -> None:
    """Tool calls (their JSON params) and protected (pinned) blocks are never cut, each
    on its own: a run with nothing else to cut removes nothing."""
    call = blocks.tool_call("write_file", {"path": "a.py", "text": "x " * 4_000}, call_id="c1")
    made = [
        msgspec.structs.replace(call, id="b1", path="tc:t1.tool_calls.c1.in.json"),
        msgspec.structs.replace(
            blocks.user_prompt("rule " * 4_000), id="b2", path="ar:t1.user.prompt"
        ),
    ]
    costs = [len(b.text) // 4 for b in made]
    removed, paths = truncate_to_fit(made, costs, 3_000, lambda b: len(b.text) // 4, ["b2"])
    assert (removed, paths) == (0, [])
    removed, paths = truncate_to_fit(made, costs, 3_000, lambda b: len(b.text) // 4)
    assert removed >= 3_000 and paths == ["ar:t1.user.prompt"]
    assert truncate_to_fit(made[:1], costs[:1], 1_000, lambda b: len(b.text) // 4) == (0, [])


def test_a_truncation_that_saves_nothing_is_not_applied() -> None:
    """A cut that does not lower the block's cost leaves it whole and unlisted."""
    prompt = msgspec.structs.replace(
        blocks.user_prompt("rule " * 4_000), id="b1", path="ar:t1.user.prompt"
    )
    made = [prompt]
    assert truncate_to_fit(made, [5_000], 3_000, lambda b: 5_000) == (0, [])
    assert made == [prompt]


def test_the_seed_layout_keeps_the_trigger_ratio_of_an_explicit_budget() -> None:
    """Seed 000's layout triggers at ``context_window - reserve`` (ratio 1.0) only when
    no ``max_tokens`` is given; with one the default ratio stays."""
    default = CompactionPolicy().trigger_ratio
    assert default != 1.0
    explicit = CompactionPolicy.from_mapping({"compaction": {"max_tokens": 10_000}})
    assert explicit.trigger_ratio == default
    seeded = CompactionPolicy.from_mapping({"compaction": {}, "context_window": 200_000})
    assert seeded.trigger_ratio == 1.0


def test_an_empty_summary_falls_back_to_the_inventory_text(
    make_tl: Callable[..., Timeline],
) -> None:
    """``summarize_sync`` itself stands the inventory in for an empty summary (the
    result carries its text and the reason), unless told not to fall back."""
    asked: list[SummaryRequest] = []

    class Empty:
        name = "empty"

        def summarize(self, request: SummaryRequest) -> str:
            asked.append(request)
            return "  "

    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1), summarizer=Empty())
    for i in range(10):
        coding_turn(tl, i)
    tl.render("sys")
    assert asked
    result = summarize_sync(Empty(), asked[0], None)
    assert result.text.strip() and result.error == "summarizer returned an empty summary"
    bare = summarize_sync(Empty(), asked[0], None, fallback=False)
    assert (bare.text, bare.error) == ("", "summarizer returned an empty summary")


def test_a_compaction_that_cleared_nothing_reports_no_freed_tokens(
    make_tl: Callable[..., Timeline],
) -> None:
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    stats = None
    for i in range(10):
        coding_turn(tl, i)
        stats = tl.render("sys").compaction or stats
    assert stats is not None and stats.tier == "summarize"
    assert (stats.cleared_blocks, stats.cleared_tokens) == (0, 0)


def test_a_ttl_pruning_that_was_enough_is_reported_as_the_clear_tier() -> None:
    """Pruning results past the cache TTL is the cheapest tier: the stats of a pruning
    that brought the prompt under the trigger name the "clear" tier and no summary."""
    from tests.helpers.checkpoints import ttl_timeline

    tl, clock = ttl_timeline()
    clock.now += timedelta(minutes=10)
    tl.begin_turn()
    tl.append(blocks.user_prompt("task 3"))
    stats = tl.render("sys").compaction
    assert stats is not None and stats.pruned_blocks == 2
    assert stats.tier == "clear" and stats.skipped is not None


def test_a_turn_prefix_without_tool_calls_says_so() -> None:
    """The summary of a split turn's prefix lists its tool calls as Early Progress, or
    says there were none."""
    tl = Timeline("tp")
    tl.begin_turn()
    tl.append(blocks.user_prompt("Plan the migration."))
    tl.append(blocks.assistant_completion("Here is a first outline."))
    request = SummaryRequest(kind="turn_prefix", blocks=tuple(tl.blocks))
    text = InventorySummarizer().summarize(request)
    assert "### Early Progress\n- (no tool calls)\n" in text
    assert "### Original Request\nPlan the migration.\n" in text


def test_kept_tokens_are_exactly_what_stays_after_a_cut() -> None:
    """What a cut keeps: every block from the cut on plus the pinned ones before it,
    nothing more (cutting after the last block keeps only the pins)."""
    made = [msgspec.structs.replace(blocks.user_prompt(f"p{i}"), id=f"b{i}") for i in range(4)]
    kept = _kept_tokens(made, 1, [5, 10, 20, 30], {"b1"})
    assert [kept(c) for c in range(1, 5)] == [60, 60, 40, 10]
    plain = _kept_tokens(made, 0, [5, 10, 20, 30], set())
    assert [plain(c) for c in range(5)] == [65, 60, 50, 30, 0]


def test_an_llm_summary_missing_requests_lists_them_and_the_omitted_count() -> None:
    """A model summary that dropped user requests gets them appended verbatim, with how
    many earlier ones only the turn log holds."""
    digest = CompactionDigest(user_requests=["Fix the parser.", "Add tests."])
    digest = msgspec.structs.replace(digest, user_requests_omitted=3)
    request = SummaryRequest(kind="history", blocks=(), digest=digest)
    text = finish_summary("## Goal\nParser work.", request)
    assert "## User Requests (verbatim)\n1. Fix the parser.\n2. Add tests.\n" in text
    assert "\n(3 earlier requests are in the turn log)" in text


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"max_tokens": -1}, "cfg.max_tokens: must be a positive integer, got -1"),
        ({"max_tokens": "x"}, "cfg.max_tokens: expected a number, got str"),
        ({"keep_ratio": 2.0}, "cfg.keep_ratio: must be in (0, 1), got 2.0"),
        ({"bogus": 1}, "cfg: extra fields found (bogus)"),
        (
            {"max_tokens": 1_000, "keep_recent_tokens": 1_000},
            "cfg.keep_recent_tokens: must be below the budget (1000), got 1000",
        ),
    ],
)
def test_a_policy_error_names_the_field_under_the_given_path(
    config: dict[str, object], message: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy.from_mapping(config, path="cfg")
    assert str(caught.value) == message


def test_an_attachment_artifact_keeps_the_sources_it_used() -> None:
    tl = Timeline("a")
    tl.begin_turn()
    tl.append(
        blocks.user_attachment(
            name="r.pdf", mime="application/pdf", data=b"%PDF", sources_used=["s1", 2]
        )
    )
    artifacts = build_digest(tl.blocks, None).artifacts
    assert [a.sources_used for a in artifacts] == [["s1", "2"]]


def test_a_goal_of_several_items_is_one_per_line() -> None:
    page = Page({}, ["Build the parser.", "Keep the old API."], [], CompactionDigest())
    assert page.goal == "Build the parser.\nKeep the old API."
    assert Page({}, [], [], CompactionDigest()).goal == "(not stated)"


def test_a_first_sentence_ends_at_its_mark() -> None:
    assert first_sentence("Fix the build. Then run the tests.", 100) == "Fix the build."
    assert first_sentence("Why? Because.", 100) == "Why?"


def test_clearing_reads_the_policy_tool_classification(make_tl: Callable[..., Timeline]) -> None:
    """A tool the policy classifies as a write supersedes an earlier read of its path
    (the clearing tier asks the policy's ``tool_classification``, not the defaults only)."""
    from tests.helpers.clearing import read, shown

    clearing = ClearingPolicy(keep_tool_results=3, dedupe_reads=True)
    classified = {"put_file": "write"}
    tl = make_tl(
        policy=CompactionPolicy(max_tokens=2_400, clearing=clearing, tool_classification=classified)
    )
    tl.begin_turn()
    tl.append(blocks.user_prompt("edit it"))
    for i in range(3):
        read(tl, f"src/o{i}.py", 2_000)
    first = read(tl, "src/a.py", 2_000)
    put = tl.append(blocks.tool_call("put_file", {"path": "src/a.py", "content": "y"}))
    tl.append(blocks.tool_result(put.call_id or "", "written", tool_id="put_file"))
    assert "superseded by a later put_file of the same path" in shown(tl)[first]


def test_a_summary_block_is_the_systems(make_tl: Callable[..., Timeline]) -> None:
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    for i in range(10):
        coding_turn(tl, i)
    summary = tl.render("sys").blocks[0]
    assert summary.type == CONV_RANGE_SUMMARY and summary.author == "system"


def test_an_async_summarizer_in_a_sync_render_is_timed_out(
    make_tl: Callable[..., Timeline],
) -> None:
    """The policy's ``summary_timeout_seconds`` holds for an async summarizer run by a
    sync ``render()`` too: the inventory stands in, the stats say why."""

    class Slow:
        name = "slow"

        async def asummarize(self, request: SummaryRequest) -> str:
            await asyncio.sleep(3)
            return "a late summary"

    policy = CompactionPolicy(max_tokens=2_000, keep_recent_turns=1, summary_timeout_seconds=0.2)
    tl = make_tl(policy=policy, summarizer=Slow())
    for i in range(10):
        coding_turn(tl, i)
    stats = tl.render("sys").compaction
    assert stats is not None and stats.summarizer_error is not None
    assert "timed out" in stats.summarizer_error


def test_an_llm_prompt_without_a_focus_adds_nothing_for_it() -> None:
    plain = build_prompt(SummaryRequest(kind="history", blocks=(), max_tokens=900))
    assert "Focus" not in plain
    # the format's last line, then the length limit: nothing between them
    assert plain.endswith("oldest first]\n\nKeep the summary under about 900 tokens.")
    focused = build_prompt(SummaryRequest(kind="history", blocks=(), focus="the parser"))
    assert "\n\nFocus: the parser" in focused
