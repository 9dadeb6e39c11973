"""Timelines at a mid-turn checkpoint and under cache-TTL pruning, and the clock that steps them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    Timeline,
    blocks,
)


class StepClock:
    """A clock that only moves when told (one millisecond per call otherwise)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def exchange(tl: Timeline, k: int, chars: int = 600) -> None:
    call = tl.append(blocks.tool_call("bash", {"cmd": f"step {k}"}))
    tl.append(blocks.tool_result(call.call_id or "", f"out {k} " + "y" * chars, tool_id="bash"))


def mid_turn_timeline() -> Timeline:
    """An earlier turn, then a long running turn with a plan, a follow-up prompt and a new
    plan; compacted twice inside the running turn."""
    tl = Timeline(
        "v2",
        policy=CompactionPolicy(max_tokens=1_500, keep_recent_turns=1, summary_max_tokens=500),
        token_counter=HeuristicCounter(),
        clock=StepClock(),
    )
    tl.begin_turn()
    tl.append(blocks.user_prompt("Set up the repo.\n[P] prefer small diffs"))
    tl.append(blocks.assistant_completion("Done. [D] we use pytest"))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Fix the failing login test"))
    tl.append(blocks.plan("1. read login.py\n2. fix"))
    for k in range(4):
        exchange(tl, k)
    tl.append(blocks.user_prompt("also update the docs"))
    tl.append(blocks.plan("1. read login.py\n2. fix\n3. docs"))
    for k in range(4, 8):
        exchange(tl, k)
    first = tl.render("sys").compaction
    assert first is not None and first.mid_turn == 1
    for k in range(8, 12):
        exchange(tl, k)
    return tl


def ttl_timeline() -> tuple[Timeline, StepClock]:
    clock = StepClock()
    tl = Timeline(
        "ttl",
        policy=CompactionPolicy(max_tokens=1_400, keep_recent_turns=2, cache_ttl_seconds=300),
        token_counter=HeuristicCounter(),
        clock=clock,
    )
    for i in range(3):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"task {i}"))
        exchange(tl, i, 1_600)
        tl.append(blocks.assistant_completion(f"did {i}"))
    return tl, clock
