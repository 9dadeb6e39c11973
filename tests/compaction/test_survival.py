"""What survives compaction: pinned blocks, every user request, the block-count trigger."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from timeline import CompactionPolicy, PinnedOverBudgetError, Timeline, blocks

RULE = "Project rule: all SQL goes through the repository layer; never write raw SQL in views."


def busy_turn(tl: Timeline, i: int) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"request {i}: optimise query {i}"))
    c = tl.append(blocks.tool_call("read_file", {"path": f"views_{i}.py"}))
    tl.append(blocks.tool_result(c.call_id or "", "SELECT * FROM t;\n" * 60))
    tl.append(blocks.assistant_completion(f"query {i} optimised"))


def compact_five_times(tl: Timeline) -> int:
    compactions = 0
    i = 1
    while compactions < 5:
        busy_turn(tl, i)
        i += 1
        if tl.render("sys").compaction is not None:
            compactions += 1
    return compactions


def test_pinned_rule_survives_five_compactions(make_tl: Callable[..., Timeline]) -> None:
    """A rule pinned in turn 1 renders verbatim right after the summary, every time."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_500, keep_recent_turns=1))
    tl.begin_turn()
    rule = tl.append(blocks.user_prompt(RULE), pin=True)
    tl.append(blocks.assistant_completion("Understood."))
    assert compact_five_times(tl) == 5
    view = tl.render("sys")
    assert view.blocks[0].type == "conv.range.summary"
    assert rule == view.blocks[1]
    assert sum(1 for b in tl.blocks if b.type == "conv.range.summary") >= 5


def test_pinned_blocks_keep_their_order(make_tl: Callable[..., Timeline]) -> None:
    """Several pinned blocks follow the summary in their original order."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_500, keep_recent_turns=1))
    tl.begin_turn()
    first = tl.append(blocks.note("rule one"), pin=True)
    busy_turn(tl, 0)
    tl.begin_turn()
    second = tl.append(blocks.note("rule two"), pin=True)
    compact_five_times(tl)
    view = tl.render("sys")
    assert [first.id, second.id] == [b.id for b in view.blocks[1:3]]


def test_first_user_request_survives_five_compactions(make_tl: Callable[..., Timeline]) -> None:
    """The turn-1 request is still in the summary's request list after 5 compactions."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_500, keep_recent_turns=1))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Migrate the billing service to the new ORM."))
    compact_five_times(tl)
    summary = tl.render("sys").blocks[0]
    assert "- Migrate the billing service to the new ORM." in summary.text


def test_pinned_over_budget_is_refused(make_tl: Callable[..., Timeline]) -> None:
    """Pinning more than the budget holds raises and leaves the timeline unchanged."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=1_000))
    tl.begin_turn()
    tl.append(blocks.note("small rule"), pin=True)
    before = tl.snapshot()
    with pytest.raises(PinnedOverBudgetError) as err:
        tl.append(blocks.note("x" * 5_000), pin=True)
    assert (1_000, before) == (err.value.budget, tl.snapshot())
    assert err.value.required > 1_000


def test_unpin_lets_a_block_be_summarized(make_tl: Callable[..., Timeline]) -> None:
    """After unpin, the next compaction may summarize the block away."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_500, keep_recent_turns=1))
    tl.begin_turn()
    rule = tl.append(blocks.note(RULE), pin=True)
    tl.unpin([rule.path])
    compact_five_times(tl)
    assert rule.id not in {b.id for b in tl.render("sys").blocks}


def test_block_count_trigger(make_tl: Callable[..., Timeline]) -> None:
    """max_blocks compacts on the visible block count even far under the token budget."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=1_000_000, max_blocks=40))
    compacted = None
    for i in range(30):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"q{i}"))
        tl.append(blocks.assistant_completion(f"a{i}. " + "More detail follows. " * 20))
        view = tl.render("sys")
        compacted = compacted or view.compaction
        assert len(view.blocks) <= 41
    assert compacted is not None and compacted.reason == "blocks"
    assert compacted.tokens_before < 10_000


def test_preserve_recent_blocks(make_tl: Callable[..., Timeline]) -> None:
    """preserve_recent_blocks keeps at least that many recent blocks verbatim."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=100_000, preserve_recent_blocks=7))
    for i in range(10):
        busy_turn(tl, i)
    tl.compact("sys", keep_recent_tokens=1)
    view = tl.render("sys")
    assert len(view.blocks) - 1 >= 7


def test_block_count_trigger_with_small_blocks(make_tl: Callable[..., Timeline]) -> None:
    """max_blocks bounds the block count even when the blocks are too small for a summary
    to save tokens (a block-count bound is what the caller asked for: #25, LangChain's
    message-count trigger maps to it)."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=1_000_000, max_blocks=12, keep_recent_turns=2))
    reasons = set()
    for i in range(20):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"q{i}"))
        tl.append(blocks.assistant_completion(f"a{i}"))
        view = tl.render("sys")
        if view.compaction is not None:
            reasons.add(view.compaction.reason)
            assert view.compaction.skipped is None
        assert len(view.blocks) <= 13
    assert reasons == {"blocks"}
