"""``tl.compact(dry_run=True)``: what a compaction would do now, with nothing changed; and
``compact(focus=...)``, a compaction whose summary keeps a focus in view."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from timeline import (
    ClearingPolicy,
    CompactionPolicy,
    CompactionPreview,
    InvalidBlockError,
    SummaryRequest,
    Timeline,
    blocks,
)

SYSTEM = "You are a careful assistant."


class Recording:
    """A summarizer that records its requests."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return f"Summary of {len(request.blocks)} blocks."


def conversation(turns: int = 12, **policy: Any) -> tuple[Timeline, list[Any]]:
    hooks: list[Any] = []
    tl = Timeline(
        "c",
        policy=CompactionPolicy(max_tokens=policy.pop("max_tokens", 3_000), **policy),
        summarizer=Recording(),
        on_before_compaction=hooks.append,
        on_after_compaction=hooks.append,
    )
    for i in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Question {i}: " + "how does the parser work? " * 8))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{i}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "def f():\n    pass\n" * 40))
        tl.append(blocks.assistant_completion(f"Answer {i}: " + "it reads tokens. " * 10))
    return tl, hooks


def state(tl: Timeline) -> dict[str, Any]:
    return {"snapshot": msgspec.to_builtins(tl.snapshot()), "version": tl.version}


def test_a_dry_run_says_what_compact_then_does() -> None:
    """The preview's cut, counts and tier are what the compaction right after it does."""
    tl, _ = conversation()
    preview = tl.compact(SYSTEM, dry_run=True)
    stats = tl.compact(SYSTEM)
    assert stats is not None
    assert isinstance(preview, CompactionPreview)
    assert (preview.tier, preview.reason) == (stats.tier, stats.reason) == ("summarize", "manual")
    assert preview.tokens_before == stats.tokens_before
    assert preview.summarized_blocks == stats.compacted_blocks
    view = tl.render(SYSTEM)
    first_kept = next(b for b in view.blocks if b.type != "conv.range.summary")
    assert preview.cut_path == first_kept.path
    assert preview.kept_blocks == view.stable_count - 1  # the recalled block is not kept
    assert stats.tokens_after is not None and stats.tokens_after <= preview.tokens_after


def test_a_dry_run_changes_nothing() -> None:
    """State, renders and payloads after a dry run are those of a timeline never asked
    (with a clearing tier and cache-TTL pruning that the compaction would run); no hook
    fires, no summarizer is called."""
    later = datetime.now(UTC) + timedelta(hours=1)  # past the TTL: pruning would run
    policy = {"clearing": ClearingPolicy(clear_at_least_tokens=0), "cache_ttl_seconds": 60}
    tl, hooks = conversation(**policy)
    twin, _ = conversation(**policy)
    tl.clock = twin.clock = lambda: later
    before = state(tl)
    tl.compact(SYSTEM, dry_run=True)
    tl.compact(SYSTEM, dry_run=True, force=False, keep_recent_tokens=500)
    assert state(tl) == before
    assert hooks == [] and tl.summarizer.requests == []  # type: ignore[union-attr]
    a, b = tl.render(SYSTEM), twin.render(SYSTEM)
    assert a.to_anthropic() == b.to_anthropic()
    assert a.compaction is not None and a.compaction.as_dict() == b.compaction.as_dict()  # type: ignore[union-attr]


def test_a_dry_run_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """A dry run plans a compaction without one happening: no compaction log line."""
    tl, _ = conversation()
    with caplog.at_level(logging.INFO, logger="timeline"):
        tl.compact(SYSTEM, dry_run=True)
    assert caplog.records == []
    with caplog.at_level(logging.INFO, logger="timeline"):
        tl.compact(SYSTEM)
    assert any("compaction start" in r.getMessage() for r in caplog.records)


def test_under_the_trigger_nothing_would_run_unless_forced() -> None:
    """force=False previews what a render would do: under the trigger, nothing."""
    tl, _ = conversation(turns=3, max_tokens=20_000)
    preview = tl.compact(SYSTEM, force=False, dry_run=True)
    assert preview.tier is None and preview.reason is None
    assert "under the trigger" in preview.note
    assert preview.tokens_after == preview.tokens_before
    assert tl.compact(SYSTEM, force=False) is None


def test_a_clearing_pass_that_is_enough_is_previewed_as_the_clear_tier() -> None:
    """With the clearing tier, a compaction that clearing finishes shows as ``clear``,
    with the blocks and tokens it frees, as the real one reports them."""
    tl, _ = conversation(
        turns=15, max_tokens=6_000, clearing=ClearingPolicy(clear_at_least_tokens=0)
    )
    preview = tl.compact(SYSTEM, force=False, dry_run=True)
    stats = tl.render(SYSTEM).compaction
    assert stats is not None and stats.tier == "clear"
    assert preview.tier == "clear"
    assert (preview.cleared_blocks, preview.cleared_tokens) == (
        stats.cleared_blocks,
        stats.cleared_tokens,
    )
    assert preview.tokens_after == stats.tokens_after


def test_a_dry_run_leaves_a_prepared_summary_to_the_render() -> None:
    """A dry run does not use up the summary prepared for the next compaction."""
    tl, _ = conversation(turns=0, max_tokens=6_000, prepare_at=0.6)
    for i in range(60):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Question {i}: " + "and then? " * 30))
        tl.append(blocks.assistant_completion(f"Answer {i}: " + "we go on. " * 30))
        tl.compact(SYSTEM, force=False, dry_run=True)
        view = tl.render(SYSTEM)
        if view.compaction is not None:
            assert view.compaction.prepared
            return
    raise AssertionError("never compacted")


def test_a_dry_run_says_when_a_prepared_summary_would_be_applied() -> None:
    """Over the trigger with a summary prepared ahead of it, the preview says it would be
    applied, and the render that follows applies it."""
    tl, _ = conversation(turns=0, max_tokens=6_000, prepare_at=0.6)
    for i in range(60):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Question {i}: " + "and then? " * 30))
        tl.append(blocks.assistant_completion(f"Answer {i}: " + "we go on. " * 30))
        if tl.estimate(SYSTEM) > 0.9 * 6_000:
            break
        assert tl.render(SYSTEM).compaction is None
    preview = tl.compact(SYSTEM, force=False, dry_run=True)
    stats = tl.render(SYSTEM).compaction
    assert preview.prepared and stats is not None and stats.prepared
    assert preview.summarized_blocks == stats.compacted_blocks


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dry_run": "yes"}, "dry_run"),
        ({"focus": ""}, "focus"),
        ({"focus": 3}, "focus"),
        ({"keep_recent_tokens": -1}, "keep_recent_tokens"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], match: str) -> None:
    """Bad compact arguments raise a typed error naming them; nothing changes."""
    tl, _ = conversation()
    before = state(tl)
    with pytest.raises(InvalidBlockError, match=match):
        tl.compact(SYSTEM, **kwargs)
    assert state(tl) == before


def test_a_focus_reaches_the_summarizer_after_the_policys_own() -> None:
    """compact(focus=...) asks the summary to keep that in view, after the policy's own
    focus instructions; the next compaction goes back to the policy's alone."""
    tl, _ = conversation(focus_instructions="Keep file paths.")
    summarizer = tl.summarizer
    assert isinstance(summarizer, Recording)
    tl.compact(SYSTEM, focus="the parser's handling of empty input")
    assert summarizer.requests[-1].focus == (
        "Keep file paths.\nthe parser's handling of empty input"
    )
    for i in range(12, 20):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Question {i}: " + "what else? " * 30))
    tl.compact(SYSTEM)
    assert summarizer.requests[-1].focus == "Keep file paths."
