"""How much Python work a render does, counted (not timed): traced line events are the
same on every machine, so a render that grows with the stream shows up as a count."""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any

import pytest

from timeline import CompactionPolicy, NoBudgetWarning, Timeline, blocks


def _session(n: int, *, pending_call: bool) -> Timeline:
    tl = Timeline("w", policy=CompactionPolicy())
    tl.begin_turn()
    for i in range(n):
        tl.append(blocks.user_prompt(f"prompt {i}"))
        call = tl.append(blocks.tool_call("read", {"i": i}))
        tl.append(blocks.tool_result(call.call_id or "", f"output {i}", tool_id="read"))
    if pending_call:
        tl.append(blocks.tool_call("read", {"i": "waiting"}))
    return tl


def _lines_of_one_render(tl: Timeline) -> int:
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    tl.append(blocks.note("one more"))
    sys.settrace(trace)
    try:
        tl.render("system")
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("pending_call", [False, True])
def test_a_render_without_budget_does_not_walk_the_stream(pending_call: bool) -> None:
    """Without a budget nothing is counted exactly, so every block stays at its upper
    bound; a render must still cost about the same Python work at 300 and 1,200 blocks."""
    counts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)
        for n in (100, 400):
            tl = _session(n, pending_call=pending_call)
            tl.render("system")
            _lines_of_one_render(tl)  # process-wide memos (provider ids) warm now
            counts.append(_lines_of_one_render(tl))
    # a walk over the stream would add hundreds of lines per 300 blocks (1,174 and 3,874
    # before the fix); a few lines may differ with what other tests left in shared memos
    assert abs(counts[1] - counts[0]) <= 20, counts
