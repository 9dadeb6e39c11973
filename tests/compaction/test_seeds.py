"""Each other agent's configuration, as docs/coming-from-another-agent.md writes it,
behaves as that agent's documentation says."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    NoBudgetWarning,
    PolicyError,
    Timeline,
    TruncateSummarizer,
    blocks,
)
from timeline._cli.inspect import breakdown_report, context_breakdown
from timeline._compaction.policy import NO_BUDGET
from timeline._compaction.summarizers import SummaryRequest

PAGE = Path(__file__).parent.parent.parent / "docs" / "coming-from-another-agent.md"
TURN_CHARS = 8_000  # 2,000 heuristic tokens per turn


def _grow(tl: Timeline, until: int, chars: int = TURN_CHARS) -> None:
    """Append one-block turns until the estimate passes ``until`` (no render)."""
    while tl.estimate() <= until:
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {tl.current_turn_id} " + "x" * chars))


def _timeline(policy: CompactionPolicy, **kwargs: Any) -> Timeline:
    return Timeline("seed", policy=policy, token_counter=HeuristicCounter(), **kwargs)


def _kept_tokens(tl: Timeline) -> int:
    """Tokens of the visible blocks after the summary."""
    view = tl.render()
    return sum(tl.block_tokens(b) for b in view.blocks if b.type != "conv.range.summary")


def test_the_pages_blocks_run() -> None:
    """Every python block of docs/coming-from-another-agent.md runs as written: one per
    agent (five) and the no-window case."""
    codes = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert len(codes) == 6
    for code in codes:
        exec(compile(code, PAGE.name, "exec"), {})


SEED_000 = {
    "context_window": 200000,
    "compaction": {"enabled": True, "reserve_tokens": 16384, "keep_recent_tokens": 20000},
}


class TestSeed000:
    def test_loads_as_written(self) -> None:
        """keep_recent_tokens is a policy field; the budget is window - reserve."""
        policy = CompactionPolicy.from_mapping(SEED_000)
        assert (policy.budget, policy.keep_recent_tokens, policy.enabled) == (
            183_616,
            20_000,
            True,
        )

    def test_triggers_past_window_minus_reserve_and_keeps_recent_tokens(self) -> None:
        """No compaction at the budget; past it, one compaction keeping ~20k recent tokens."""
        tl = _timeline(CompactionPolicy.from_mapping(SEED_000))
        _grow(tl, 183_616 - TURN_CHARS // 4 - 10)
        assert tl.estimate() <= 183_616
        assert tl.render().compaction is None
        _grow(tl, 183_616)
        stats = tl.render().compaction
        assert stats is not None
        assert stats.tokens_before > 183_616
        assert 20_000 - TURN_CHARS // 4 <= _kept_tokens(tl) <= 20_000

    def test_keep_recent_tokens_must_fit_the_budget(self) -> None:
        """A keep larger than the budget is a PolicyError naming the field."""
        config = {"context_window": 30_000, "compaction": {"keep_recent_tokens": 20_000}}
        with pytest.raises(PolicyError, match=r"compaction\.keep_recent_tokens"):
            CompactionPolicy.from_mapping(config)


class TestSeed002:
    def test_max_messages_triggers_and_preserve_recent_count_keeps_five(self) -> None:
        """201 blocks trigger under the token budget; the newest 5 stay verbatim."""
        policy = CompactionPolicy(
            max_tokens=100_000, trigger_ratio=1.0, max_blocks=200, preserve_recent_blocks=5
        )
        tl = _timeline(policy)
        tl.begin_turn()
        for i in range(199):
            tl.append(blocks.assistant_completion(f"step {i}"))
        assert tl.render().compaction is None
        tl.append(blocks.assistant_completion("step 199"))
        view = tl.render()
        assert view.compaction is not None and view.compaction.reason == "blocks"
        assert [b.text for b in view.blocks[-5:]] == [f"step {i}" for i in range(195, 200)]

    def test_max_tokens_triggers_at_100k(self) -> None:
        """MaxTokens is the threshold itself (trigger_ratio 1.0)."""
        tl = _timeline(CompactionPolicy(max_tokens=100_000, trigger_ratio=1.0, max_blocks=200))
        _grow(tl, 100_000 - TURN_CHARS // 4 - 10)
        assert tl.render().compaction is None
        _grow(tl, 100_000)
        assert tl.render().compaction is not None


class TestSeed003:
    def test_proactive_at_80_percent_keeps_40_percent(self) -> None:
        """Triggers past 80% of the window and keeps about 40% of it: the kept turns
        (cut at a turn's start) and the summary in the room left for it, which a summary
        with little to say does not fill."""
        window = 64_000
        policy = CompactionPolicy(
            context_window=window,
            reserve_tokens=0,
            trigger_ratio=0.8,
            keep_ratio=0.4,
            keep_recent_turns=0,
        )
        tl = _timeline(policy)
        _grow(tl, int(0.8 * window) - TURN_CHARS // 4 - 10)
        assert tl.render().compaction is None
        _grow(tl, int(0.8 * window))
        view = tl.render()
        assert view.compaction is not None
        assert 0.3 * window - TURN_CHARS // 4 <= view.tokens <= 0.45 * window


class TestSeed004:
    WINDOW = 64_000

    def policy(self) -> CompactionPolicy:
        return CompactionPolicy(
            context_window=self.WINDOW,
            reserve_tokens=0,
            trigger_ratio=0.8,
            keep_recent_tokens=self.WINDOW // 4,
            emergency_keep_ratio=0.2,
            min_split_prefix_blocks=5,
        )

    def test_keeps_a_quarter_and_an_emergency_fifth(self) -> None:
        """Auto compaction keeps ~window/4; a forced one keeps at most window/5."""
        tl = _timeline(self.policy(), summarizer=TruncateSummarizer())
        _grow(tl, int(0.8 * self.WINDOW))
        assert tl.render().compaction is not None
        assert self.WINDOW // 4 - TURN_CHARS // 4 <= _kept_tokens(tl) <= self.WINDOW // 4
        _grow(tl, int(0.6 * self.WINDOW))
        assert tl.render(force_sanitize=True).compaction is not None
        assert _kept_tokens(tl) <= self.WINDOW // 5

    @pytest.mark.parametrize(("prefix", "split"), [(4, False), (5, True)])
    def test_split_prefix_needs_five_blocks(self, prefix: int, split: bool) -> None:
        """A cut inside a turn gets a turn-prefix summary only from 5 blocks on."""
        tl = _timeline(self.policy())
        _grow(tl, 20_000)
        tl.begin_turn()
        tl.append(blocks.user_prompt("long turn"))
        for i in range(prefix - 1):
            tl.append(blocks.note(f"step {i} " + "y" * 16_000))
        for i in range(4):
            tl.append(blocks.assistant_completion(f"late {i} " + "z" * 14_000))
        tl.begin_turn()  # a split of the running turn is a mid-turn checkpoint instead
        stats = tl.compact(keep_recent_tokens=self.WINDOW // 4)
        assert stats is not None
        assert stats.split_turn is split


class TestTruncateSummarizer:
    def test_counts_by_author_and_adds_up(self) -> None:
        """[Compacted N messages: x user, y assistant, z tool], counts carried over."""
        tl = Timeline("t")
        tl.begin_turn()
        tl.append(blocks.user_prompt("read it"))
        call = tl.append(blocks.tool_call("read_file", {"path": "a.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "text"))
        tl.append(blocks.assistant_completion("done"))
        tl.append(blocks.note("system notes are not messages"))
        request = SummaryRequest(kind="history", blocks=tl.blocks)
        first = TruncateSummarizer().summarize(request)
        assert first == "[Compacted 4 messages: 1 user, 2 assistant, 1 tool]"
        again = SummaryRequest(kind="history", blocks=tl.blocks, previous_summary=first)
        assert (
            TruncateSummarizer()
            .summarize(again)
            .startswith("[Compacted 8 messages: 2 user, 4 assistant, 2 tool]")
        )

    def test_as_the_timeline_summarizer(self) -> None:
        """Compaction with it writes the count line and the file lists."""
        tl = _timeline(CompactionPolicy(max_tokens=4_000), summarizer=TruncateSummarizer())
        tl.begin_turn()
        call = tl.append(blocks.tool_call("read_file", {"path": "a.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "a" * 400))
        for _ in range(4):
            tl.begin_turn()
            tl.append(blocks.user_prompt("b" * 4_000))
        view = tl.render()
        assert view.blocks[0].type == "conv.range.summary"
        assert "\n\n[Compacted " in view.blocks[0].text  # after the Active Work Reminder
        assert "<read-files>a.py</read-files>" in view.blocks[0].text


class TestNoBudget:
    def test_never_compacts_and_warns_once(self) -> None:
        """No budget: no compaction whatever the size, and one NoBudgetWarning."""
        tl = _timeline(CompactionPolicy())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _grow(tl, 50_000)
            assert tl.render().compaction is None
            assert tl.compact(force=False) is None
            assert tl.render().compaction is None
        assert [str(w.message).split(" for ")[0] for w in caught] == [NO_BUDGET]

    def test_disabled_policy_does_not_warn(self) -> None:
        """enabled=False is an explicit choice: no warning."""
        tl = _timeline(CompactionPolicy(enabled=False))
        with warnings.catch_warnings():
            warnings.simplefilter("error", NoBudgetWarning)
            tl.begin_turn()
            tl.render()

    def test_inspect_and_status_say_so(self) -> None:
        """inspect's report names the missing budget; its JSON says the budget and trigger."""
        tl = _timeline(CompactionPolicy())
        tl.begin_turn()
        assert NO_BUDGET in breakdown_report(context_breakdown(tl)).splitlines()
        assert context_breakdown(_timeline(CompactionPolicy(max_tokens=1_000)))["compaction"] == (
            "budget 1,000 tokens, compaction at 900"
        )

    def test_a_model_name_gives_a_budget(self) -> None:
        """Timeline(model=...) resolves the window from the registry; an explicit policy
        budget wins."""
        assert Timeline("m", model="gpt-4o").policy.budget == 128_000 - 16_384
        explicit = Timeline("m", model="gpt-4o", policy=CompactionPolicy(max_tokens=5_000))
        assert explicit.policy.budget == 5_000
        assert Timeline("m", model="unknown-model").policy.budget is None
