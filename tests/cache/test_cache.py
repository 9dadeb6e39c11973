"""Cache checkpoints: at most four, stable blocks only, readable by the next request."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest

from timeline import (
    Block,
    CompactionPolicy,
    Timeline,
    blocks,
)
from timeline._cache import LOOKBACK, CacheState, plan_checkpoints, positions
from timeline._cache.simulate import request_positions, simulate


def _grow(tl: Timeline, n: int) -> None:
    for i in range(n):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"question {i} " + "word " * 30))
        tl.append(blocks.assistant_completion(f"answer {i} " + "word " * 30))


def test_at_most_four_breakpoints_with_the_system_prompt(make_tl: Callable[..., Timeline]) -> None:
    """System + up to three stream breakpoints, each on a stable block."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=3_000, keep_recent_turns=1))
    for step in range(40):
        _grow(tl, 1)
        view = tl.render("sys", tail=[blocks.custom("react.plan", f"plan {step}")])
        assert len(view.cache_points) <= 3
        assert all(i < view.stable_count for i in view.cache_points)
        payload = view.to_anthropic()
        marks = sum(1 for m in payload["messages"] for p in m["content"] if "cache_control" in p)
        assert marks + 1 <= 4


def test_previous_tail_is_read_when_far_back(make_tl: Callable[..., Timeline]) -> None:
    """After more than LOOKBACK positions are appended, a breakpoint stays on the previous
    request's tail so its cached prefix is read."""
    tl = make_tl()
    _grow(tl, 2)
    first = tl.render("sys")
    tail_id = first.blocks[first.cache_points[-1]].id
    _grow(tl, LOOKBACK)
    second = tl.render("sys")
    assert tail_id in [second.blocks[i].id for i in second.cache_points]
    assert len(second.blocks) - 1 == second.cache_points[-1]


def test_no_extra_breakpoint_when_the_tail_is_near(make_tl: Callable[..., Timeline]) -> None:
    """Within LOOKBACK positions the last breakpoint alone reads the previous prefix."""
    tl = make_tl()
    _grow(tl, 2)
    tl.render("sys")
    _grow(tl, 2)
    view = tl.render("sys")
    assert (len(view.blocks) - 1,) == view.cache_points


def test_summary_gets_its_own_breakpoint_after_compaction(
    make_tl: Callable[..., Timeline],
) -> None:
    """After a compaction the summary (+ pinned run) is a stable prefix with a breakpoint."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    _grow(tl, 30)
    view = tl.render("sys")
    assert view.blocks[0].type == "conv.range.summary"
    assert 0 in view.cache_points


def test_breakpoint_moves_to_the_end_of_a_run_sharing_a_path() -> None:
    """An anchor inside a run of blocks sharing one path moves to the run's last block."""
    stream = [
        Block(type="conv.range.summary", text="s", id="s", path="su:t1.conv.range.summary"),
        Block(type="react.note", text="a", id="a", path="ar:t1.log"),
        Block(type="react.note", text="b", id="b", path="ar:t1.log"),
        Block(type="user.prompt", text="q", id="q", path="ar:t2.user.prompt"),
        Block(type="assistant.completion", text="r", id="r", path="ar:t2.assistant.completion"),
    ]
    points, state = plan_checkpoints(
        stream, has_system=True, version=1, state=CacheState(), anchor=1
    )
    assert points == (2, 4)
    assert CacheState("r", 4, 1) == state


def test_a_run_reaching_the_last_block_gets_no_second_breakpoint() -> None:
    """When the run sharing the anchor's path goes on to the last block, the last block's
    breakpoint covers it: none is placed inside the run."""
    stream = [
        Block(type="conv.range.summary", text="s", id="s", path="su:t1.conv.range.summary"),
        Block(type="react.note", text="a", id="a", path="ar:t1.log"),
        Block(type="react.note", text="b", id="b", path="ar:t1.log"),
    ]
    points, _ = plan_checkpoints(stream, has_system=True, version=1, state=CacheState(), anchor=1)
    assert points == (2,)


def test_turn_headers_alone_get_no_breakpoint(make_tl: Callable[..., Timeline]) -> None:
    """A stream of turn headers only has no content to cache: no breakpoint at all."""
    tl = make_tl()
    tl.begin_turn()
    assert tl.render("sys").cache_points == ()
    tl.begin_turn()
    assert tl.render("sys").cache_points == ()


def test_positions_merge_consecutive_tool_blocks() -> None:
    """Consecutive tool calls (and results) count as one lookback position."""
    stream = [
        Block(type="user.prompt", text="q"),
        Block(type="react.tool.call", text="{}", tool_id="a", call_id="1"),
        Block(type="react.tool.call", text="{}", tool_id="b", call_id="2"),
        Block(type="react.tool.result", text="x", call_id="1"),
        Block(type="react.tool.result", text="y", call_id="2"),
        Block(type="assistant.completion", text="r"),
    ]
    assert positions(stream) == [0, 1, 1, 2, 2, 3]


def test_simulated_cache_serves_what_prefix_reuse_allows(make_tl: Callable[..., Timeline]) -> None:
    """Across a session with compactions, the simulated Anthropic cache reads at least 99%
    of the tokens shared with the previous request."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=4_000, keep_recent_turns=2))
    requests = []
    for i in range(60):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"q{i} " + "w " * 40))
        for k in range(i % 4):
            c = tl.append(blocks.tool_call("read_file", {"k": k}))
            tl.append(blocks.tool_result(c.call_id or "", "line\n" * (20 + 7 * k)))
            view = tl.render("system prompt " * 20)
            requests.append(request_positions(view, tl.token_memo.block, 60))
        tl.append(blocks.assistant_completion(f"a{i} " + "w " * 20))
    outcomes = simulate(requests)
    cached = sum(o.cached for o in outcomes)
    reusable = sum(o.reusable for o in outcomes)
    assert reusable > 0
    assert cached >= 0.99 * reusable


ANTHROPIC_LOOKBACK = 20
"""Anthropic reads a cached prefix ending at most 20 block positions before a breakpoint
(the positions it checks are the breakpoint's own and the 19 before it)."""


@pytest.mark.parametrize("distance", range(ANTHROPIC_LOOKBACK - 3, ANTHROPIC_LOOKBACK + 3))
def test_previous_prefix_is_read_at_every_distance(
    make_tl: Callable[..., Timeline], distance: int
) -> None:
    """However many positions were appended since the previous request, the next one reads
    that request's whole cached prefix (simulated Anthropic cache), with a second stream
    breakpoint on the previous tail only once the last breakpoint alone cannot reach it."""
    tl = make_tl()
    _grow(tl, 2)
    first = tl.render("sys")
    for i in range(distance):
        make = blocks.user_prompt if i % 2 == 0 else blocks.assistant_completion
        tl.append(make(f"step {i} " + "word " * 10))
    second = tl.render("sys")
    pos = positions(second.blocks)
    assert distance == pos[-1] - pos[len(first.blocks) - 1]

    def cost(b: Block) -> int:
        return 1 + len(b.text) // 4

    requests = [request_positions(view, cost, 10) for view in (first, second)]
    outcomes = simulate(requests)
    assert outcomes[0].tokens == outcomes[1].cached
    far = distance >= ANTHROPIC_LOOKBACK
    assert (2 if far else 1) == len(second.cache_points)
    assert far == (len(first.blocks) - 1 in second.cache_points)


def test_a_stream_of_one_content_block_gets_its_checkpoint() -> None:
    """The first block can be the last content block (a restored or compacted stream
    starting on a summary): it takes the checkpoint."""
    only = msgspec.structs.replace(blocks.summary("earlier work"), id="s1")
    points, state = plan_checkpoints(
        (only,), has_system=True, version=3, state=CacheState(), anchor=None
    )
    assert points == (0,)
    assert (state.tail_id, state.tail_index, state.version) == ("s1", 0, 3)
