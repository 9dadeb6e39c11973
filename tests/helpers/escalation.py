"""The escalation steps of a forced render and the timeline they run on."""

from __future__ import annotations

from timeline import CompactionPolicy, HeuristicCounter, SummaryRequest, Timeline, blocks

STEPS = [(1, 114, True), (3, 111, True), (3, 111, True), (3, 327, False)]


class _Full:
    """A summary as long as its cap allows: more than the room the planner reserves for
    it beside the kept turns."""

    def summarize(self, request: SummaryRequest) -> str:
        return " ".join(f"fact{i}" for i in range(request.max_tokens))


def _timeline(incremental: bool) -> Timeline:
    policy = CompactionPolicy(max_tokens=600, keep_recent_turns=1)
    return Timeline(
        "p",
        policy=policy,
        token_counter=HeuristicCounter(),
        incremental=incremental,
        summarizer=_Full(),
    )


def _step(tl: Timeline, n_calls: int, size: int, new_turn: bool) -> None:
    if new_turn:
        tl.begin_turn()
        tl.append(blocks.user_prompt("do the thing " * 5))
    calls = [tl.append(blocks.tool_call("bash", {"i": i})) for i in range(n_calls)]
    for c in calls:
        tl.append(blocks.tool_result(c.call_id or "", "r" * (size // max(1, n_calls))))
    tl.append(blocks.assistant_completion("ok"))
