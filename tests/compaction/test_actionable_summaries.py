"""Upstream v2 behaviours: actionable summary, plan carry, digest from tool results, cut
points by author, summary failure policy, and the snapshots of all of them (the mid-turn
checkpoint and TTL pruning are tested in test_mid_turn_checkpoints.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

import index_store
from tests.helpers.checkpoints import StepClock, exchange, mid_turn_timeline, ttl_timeline
from tests.helpers.conversations import coding_turn, summaries
from timeline import (
    AsyncSummarizerError,
    Block,
    CompactionPolicy,
    HeuristicCounter,
    PolicyError,
    SlidingWindowSummarizer,
    SummaryRequest,
    Timeline,
    TruncateSummarizer,
    UnknownPathError,
    blocks,
)
from timeline._compaction import cut_boundary, valid_cuts
from timeline._compaction.digest import build_digest
from timeline._compaction.summarizers.llm import build_prompt
from timeline._render.context import RenderedContext


class TestCutsByAuthor:
    @pytest.mark.parametrize(
        ("block", "boundary"),
        [
            (Block(type="stage.gate", author="user"), "message"),
            (Block(type="stage.gate", author="assistant"), "message"),
            (Block(type="stage.gate", author="planner-bot"), "message"),
            (Block(type="stage.gate", author="system"), "none"),
            (Block(type="stage.gate", author="tool"), "none"),
            (Block(type="react.note", author="system"), "none"),
            (Block(type="user.prompt", author="user"), "turn"),
            (Block(type="turn.header", author="system"), "turn"),
            (Block(type="react.tool.result", author="user", call_id="c"), "none"),
            (Block(type="conv.range.summary", author="user"), "none"),
        ],
    )
    def test_boundary_by_type_then_author(self, block: Block, boundary: str) -> None:
        """A user/assistant-authored custom block is a message boundary; a system note or
        a tool result never a cut."""
        assert cut_boundary(block) == boundary

    def test_system_note_is_never_a_cut(self) -> None:
        """valid_cuts refuses a system-authored note and accepts a user-authored custom."""
        seq = [
            Block(type="turn.header", author="system", turn_id="t1"),
            Block(type="user.prompt", author="user", turn_id="t1"),
            Block(type="react.note", author="system", turn_id="t1"),
            Block(type="stage.gate", author="user", turn_id="t1"),
            Block(type="stage.gate", author="system", turn_id="t1"),
        ]
        assert valid_cuts(seq, 0) == [False, True, False, True, False]

    def test_compaction_cuts_at_a_user_authored_custom_block(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """Inside one turn of notes, the only cut is the user-authored custom block."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=0))
        tl.begin_turn()
        tl.append(blocks.user_prompt("go"))
        for i in range(6):
            tl.append(blocks.note(f"note {i} " + "n" * 1_200))
        gate = tl.append(blocks.custom("stage.gate", "approve?", author="user"))
        for i in range(3):
            tl.append(blocks.note(f"late {i} " + "n" * 400))
        view = tl.render("sys")
        assert view.compaction is not None
        assert view.blocks[1].id == gate.id


class FailingSummarizer:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        raise self.exc


def _long(tl: Timeline, turns: int = 10) -> None:
    for i in range(turns):
        coding_turn(tl, i)


class TestSummaryFailurePolicy:
    def test_fallback_gives_the_inventory_summary(self, make_tl: Callable[..., Timeline]) -> None:
        """on_summary_failure='fallback' (default): the inventory summary replaces it."""
        bad = FailingSummarizer(ValueError("model down"))
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=bad)
        _long(tl)
        view = tl.render("sys")
        assert view.compaction is not None and view.compaction.skipped is None
        assert view.compaction.summarizer_error == "ValueError: model down"
        assert "## Goal" in summaries(tl)[0].text

    def test_skip_compacts_nothing_and_says_so(self, make_tl: Callable[..., Timeline]) -> None:
        """on_summary_failure='skip': no summary, the timeline unchanged, the stats say so,
        and the failing model is not called again before something new is appended."""
        bad = FailingSummarizer(ValueError("model down"))
        policy = CompactionPolicy(max_tokens=2_000, on_summary_failure="skip")
        tl = make_tl(policy=policy, summarizer=bad)
        _long(tl)
        before = tl.blocks
        stats = tl.render("sys").compaction
        assert stats is not None
        assert (stats.compacted_blocks, stats.summary_path) == (0, None)
        assert stats.skipped is not None and "model down" in stats.skipped
        assert tl.blocks == before and not summaries(tl)
        calls = bad.calls
        tl.render("sys")
        assert bad.calls == calls

    def test_bad_failure_policy_is_rejected(self) -> None:
        """Only 'fallback' and 'skip' are accepted."""
        with pytest.raises(PolicyError) as err:
            CompactionPolicy.from_mapping({"max_tokens": 1_000, "on_summary_failure": "retry"})
        # the choices in plain words, not cattrs' "not in literal typing.Literal[...]"
        assert str(err.value) == (
            "compaction.on_summary_failure: expected 'fallback' or 'skip', got 'retry'"
        )

    def test_own_timeout_error_names_the_real_failure(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """A summarizer raising its own TimeoutError is reported as that error, not as
        'timed out after Nones'."""
        bad = FailingSummarizer(TimeoutError("upstream read timeout"))
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=bad)
        _long(tl)
        stats = tl.render("sys").compaction
        assert stats is not None
        assert stats.summarizer_error == "TimeoutError: upstream read timeout"

    def test_own_timeout_with_a_policy_timeout(self, make_tl: Callable[..., Timeline]) -> None:
        """With summary_timeout_seconds set, the summarizer's own TimeoutError is still its
        own (not the policy's timeout)."""
        bad = FailingSummarizer(TimeoutError("socket"))
        policy = CompactionPolicy(max_tokens=2_000, summary_timeout_seconds=30)
        tl = make_tl(policy=policy, summarizer=bad)
        _long(tl)
        stats = tl.render("sys").compaction
        assert stats is not None and stats.summarizer_error == "TimeoutError: socket"

    @pytest.mark.parametrize("method", ["render", "compact"])
    def test_sync_call_with_async_summarizer_in_a_loop(
        self, make_tl: Callable[..., Timeline], method: str
    ) -> None:
        """render()/compact() inside a running loop with an async summarizer raise a typed
        error naming arender/acompact and change nothing; the async form awaits it."""

        class Async:
            async def asummarize(self, request: SummaryRequest) -> str:
                return "async summary"

        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=Async())
        _long(tl)
        before = tl.blocks

        async def main() -> str:
            with pytest.raises(AsyncSummarizerError, match=f"a{method}"):
                getattr(tl, method)("sys")
            assert tl.blocks == before
            if method == "render":
                return (await tl.arender("sys")).blocks[0].text
            stats = await tl.acompact("sys")
            assert stats is not None and stats.skipped is None
            return tl.render("sys").blocks[0].text

        assert "async summary" in asyncio.run(main())


class TestActionableSummary:
    def test_every_summary_has_an_active_work_reminder(self) -> None:
        """The reminder names the request, the last action and the next step."""
        tl = mid_turn_timeline()
        text = tl.render("sys").blocks[0].text
        assert text.startswith("## Active Work Reminder\n- Active request: ")
        assert "- At the cut: " in text and "- Next step: " in text

    @pytest.mark.parametrize(
        "summarizer", [None, TruncateSummarizer(), SlidingWindowSummarizer()], ids=repr
    )
    def test_reminder_whatever_the_summarizer(
        self, make_tl: Callable[..., Timeline], summarizer: object
    ) -> None:
        """Inventory, truncate and sliding-window summaries all carry the reminder."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000), summarizer=summarizer)
        _long(tl)
        assert summaries(tl) == [] and tl.render("sys").blocks[0].text.startswith(
            "## Active Work Reminder"
        )

    def test_tagged_notes_are_kept_verbatim_across_compactions(self) -> None:
        """[P], [D] and [S] lines of prompts and completions survive every compaction."""
        tl = mid_turn_timeline()
        tl.render("sys")
        text = summaries(tl)[-1].text
        assert "## Tagged Notes\n[P] prefer small diffs\nDone. [D] we use pytest" in text
        notes = text.split("## Tagged Notes\n", 1)[1].split("\n\n", 1)[0]
        assert notes.splitlines() == ["[P] prefer small diffs", "Done. [D] we use pytest"]

    def test_not_started_lists_requests_without_work(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """A turn with a request and no tool call or reply is Not Started."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
        tl.begin_turn()
        tl.append(blocks.user_prompt("Add a CSV exporter. Later."))
        _long(tl)
        text = tl.render("sys").blocks[0].text
        assert "### Not Started\n- [ ] t1: Add a CSV exporter." in text

    def test_llm_format_asks_for_not_started(self) -> None:
        """The LLM summary format has the Not Started section."""
        request = SummaryRequest(kind="history", blocks=())
        assert "### Not Started" in build_prompt(request)


class TestPlanCarry:
    def test_newest_plan_right_after_the_summary_never_inside(self) -> None:
        """The newest plan is carried right after the summary; the earlier one is folded
        into one react.plan.history block; no plan text is inside the summary."""
        tl = mid_turn_timeline()
        view = tl.render("sys")
        types = [b.type for b in view.blocks[:4]]
        assert types == ["conv.range.summary", "user.prompt", "react.plan", "react.plan.history"]
        assert view.blocks[2].text == "1. read login.py\n2. fix\n3. docs"
        history = view.blocks[3].text
        assert "1. read login.py / 2. fix" in history and "3. docs" not in history
        assert "read login.py" not in view.blocks[0].text
        assert sum(1 for b in view.blocks if b.type == "react.plan.history") == 1

    def test_plan_latest_alias(self) -> None:
        """'plan.latest' resolves to the newest plan for hide, pin and store.read."""
        tl = mid_turn_timeline()
        newest = [b for b in tl.blocks if b.type == "react.plan"][-1]
        assert tl.resolve_path("plan.latest") == newest.path
        tl.pin(["plan.latest"])
        assert newest.id in tl.pinned_ids
        store = index_store.open("memory://")
        tl.persist(store)
        assert [b.id for b in store.read("v2", "plan.latest")] == [newest.id]
        assert tl.hide(["plan.latest"], "(plan hidden)") >= 1

    def test_plan_latest_without_a_plan(self, make_tl: Callable[..., Timeline]) -> None:
        """The alias with no plan is an UnknownPathError, and the store returns nothing."""
        tl = make_tl()
        tl.begin_turn()
        with pytest.raises(UnknownPathError):
            tl.hide(["plan.latest"])
        assert index_store.open("memory://").read("c1", "plan.latest") == []

    def test_carried_plan_survives_persist_and_load(self) -> None:
        """Persist evicts what the summary covers but keeps the carried plan; the loaded
        timeline renders the same."""
        tl = mid_turn_timeline()
        tl.render("sys")
        store = index_store.open("memory://")
        tl.persist(store)
        again = Timeline.load(store, "v2", policy=tl.policy, token_counter=HeuristicCounter())
        assert again.render("sys").to_anthropic() == tl.render("sys").to_anthropic()


class TestDigestFromToolResults:
    def test_artifacts_and_searches_from_json_results(
        self, make_tl: Callable[..., Timeline]
    ) -> None:
        """artifact_path/physical_path give artifacts with their kind; visibility
        'external' marks them streamed; search parameters keep their hit counts."""
        tl = make_tl()
        tl.begin_turn()
        made = tl.append(blocks.tool_call("render_report", {"title": "q3"}))
        result = {
            "artifacts": [
                {"artifact_path": "fi:t1.report.pdf", "kind": "report", "mime": "application/pdf"},
                {"physical_path": "/out/chart.png", "kind": "chart", "visibility": "external"},
            ]
        }
        tl.append(blocks.tool_result(made.call_id or "", json.dumps(result)))
        grep = tl.append(blocks.tool_call("grep", {"pattern": "def login", "path": "src"}))
        tl.append(blocks.tool_result(grep.call_id or "", "a.py:1\nb.py:9\n"))
        search = tl.append(blocks.tool_call("search", {"query": "auth"}))
        tl.append(blocks.tool_result(search.call_id or "", json.dumps({"hits": [1, 2, 3]})))
        digest = build_digest(tl.blocks, None)
        assert [(a.path, a.kind, a.mime) for a in digest.artifacts] == [
            ("fi:t1.report.pdf", "report", "application/pdf")
        ]
        assert [(a.path, a.kind, a.physical_path) for a in digest.streamed_artifacts] == [
            ("/out/chart.png", "chart", "/out/chart.png")
        ]
        assert [(s.tool, s.query, s.hits) for s in digest.searches] == [
            ("grep", "def login", 2),
            ("search", "auth", 3),
        ]
        assert digest.searches[0].params == {"path": "src", "pattern": "def login"}

    def test_non_json_results_change_nothing(self, make_tl: Callable[..., Timeline]) -> None:
        """Plain-text and broken JSON results give no artifacts."""
        tl = make_tl()
        tl.begin_turn()
        made = tl.append(blocks.tool_call("bash", {"cmd": "ls"}))
        tl.append(blocks.tool_result(made.call_id or "", '{"artifact_path": '))
        assert build_digest(tl.blocks, None).artifacts == []


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def _mid_turn_view() -> RenderedContext:
    return mid_turn_timeline().render("sys")


def _ttl_view() -> RenderedContext:
    tl, clock = ttl_timeline()
    clock.now += timedelta(minutes=10)
    tl.begin_turn()
    tl.append(blocks.user_prompt("task 3"))
    return tl.render("sys")


class TestSnapshots:
    """The summary with its Active Work Reminder and tagged notes, the mid-turn
    checkpoint, plan carry and TTL pruning, as the model sees them."""

    def test_mid_turn_anthropic(self, snapshot_json: SnapshotAssertion) -> None:
        """Anthropic payload after a second mid-turn compaction with a carried plan."""
        assert snapshot_json == _mid_turn_view().to_anthropic()

    def test_mid_turn_text(self, snapshot: SnapshotAssertion) -> None:
        """to_text() of the same render."""
        assert snapshot == _mid_turn_view().to_text()

    def test_ttl_pruning_anthropic(self, snapshot_json: SnapshotAssertion) -> None:
        """Anthropic payload after TTL pruning alone (no summary)."""
        assert snapshot_json == _ttl_view().to_anthropic()

    def test_ttl_pruning_text(self, snapshot: SnapshotAssertion) -> None:
        """to_text() of the same render."""
        assert snapshot == _ttl_view().to_text()


ACTIONS = st.lists(
    st.sampled_from(["turn", "prompt", "call", "plan", "render", "answer"]), min_size=5, max_size=60
)


@settings(max_examples=60, deadline=None)
@given(actions=ACTIONS, chars=st.integers(50, 900))
def test_plan_and_follow_ups_stay_visible(actions: list[str], chars: int) -> None:
    """Whatever the sequence: after every render the newest plan is visible and never
    inside a summary, follow-ups of the running turn are visible, a mid-turn checkpoint
    only ever covers the running turn, and every tool result follows its call."""
    tl = Timeline(
        "prop",
        policy=CompactionPolicy(max_tokens=1_500, keep_recent_turns=1),
        token_counter=HeuristicCounter(),
        clock=StepClock(),
    )
    tl.begin_turn()
    for i, action in enumerate(actions):
        if action == "turn":
            tl.begin_turn()
        elif action == "prompt":
            tl.append(blocks.user_prompt(f"prompt {i} " + "p" * (chars // 4)))
        elif action == "call":
            exchange(tl, i, chars)
        elif action == "plan":
            tl.append(blocks.plan(f"plan {i}"))
        elif action == "answer":
            tl.append(blocks.assistant_completion(f"answer {i}"))
        else:
            view = tl.render("sys")
            shown = {b.id for b in view.blocks}
            plans = [b for b in tl.blocks if b.type == "react.plan"]
            if plans:
                assert plans[-1].id in shown
                assert all(plans[-1].text not in s.text for s in summaries(tl))
            assert tl.carried_ids <= shown
            if view.compaction is not None and view.compaction.mid_turn is not None:
                assert view.compaction.split_turn_id == tl.current_turn_id
            calls = {b.call_id for b in view.blocks if b.type == "react.tool.call"}
            results = [b for b in view.blocks if b.type == "react.tool.result"]
            assert all(b.call_id in calls for b in results)
