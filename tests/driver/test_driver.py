"""The ReAct driver: overflow retry, calibration, truncated calls, events, checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

import index_store
from tests.helpers.driver import make
from tests.helpers.payload_checks import check_anthropic
from timeline import CompactionPolicy, ContextOverflowError, HeuristicCounter, Timeline
from timeline._driver import (
    DriverEvent,
    ModelReply,
    ReactDriver,
    ToolCallRequest,
    ToolOutput,
    Usage,
)
from timeline._driver.scripted import (
    DEMO_TOOL_SPECS,
    CodingSession,
    ProviderError,
    ScriptedModel,
    demo_tools,
)
from timeline._render.context import RenderedContext

SYSTEM = "You are a coding agent. " * 20


def run(driver: ReactDriver, session: CodingSession, turns: int) -> list[Any]:
    return [driver.run_turn(session.prompt(t)) for t in range(turns)]


def test_overflow_triggers_one_forced_compaction_and_one_retry() -> None:
    """An overflow at call k: one forced compaction, one retry, then the turn succeeds."""
    session = CodingSession(1)
    events: list[DriverEvent] = []
    model = ScriptedModel(session, overflow_at=frozenset({12}), provider="anthropic")
    driver = ReactDriver(make(), model, demo_tools(1), system=SYSTEM, on_event=events.append)
    results = run(driver, session, 8)
    kinds = [e.kind for e in events]
    assert kinds.count("overflow_retry") == 1
    forced = [e for e in events if e.kind == "compaction_end" and e.data["reason"] == "forced"]
    assert len(forced) == 1
    assert kinds.index("overflow_retry") < kinds.index("compaction_end")
    assert sum(r.overflow_retries for r in results) == 1
    assert sum(r.steps for r in results) + 1 == model.calls
    assert all(r.stopped == "answer" for r in results)


def test_persistent_overflow_raises_after_the_retry_limit() -> None:
    """Overflow on every call from the sixth: at most 3 retries (fewer when the ladder
    runs out first), then a typed error carrying the provider's."""
    session = CodingSession(1)
    model = ScriptedModel(session, overflow_at=frozenset(range(5, 20)))
    driver = ReactDriver(make(), model, demo_tools(1), system=SYSTEM)
    with pytest.raises(ContextOverflowError) as err:
        run(driver, session, 10)
    assert 7 <= model.calls <= 9
    assert isinstance(err.value.cause, ProviderError)


def test_retries_stop_at_the_limit_while_the_ladder_still_shrinks() -> None:
    """A big prompt the ladder can cut many times: exactly 1 + 3 calls, then the error."""
    calls: list[int] = []

    def model(view: RenderedContext) -> ModelReply:
        calls.append(view.tokens)
        raise ProviderError("prompt is too long: 210000 tokens > 200000 maximum")

    tl = make(budget=16_000)
    tl.begin_turn()
    tl.append(__import__("timeline").blocks.user_prompt("data " * 15_000))
    with pytest.raises(ContextOverflowError):
        ReactDriver(tl, model, {}).run_turn("go on")
    assert len(calls) == 4


def test_retry_limit_is_configurable() -> None:
    """max_overflow_retries=1: the second overflow in a row is the typed error."""
    session = CodingSession(1)
    model = ScriptedModel(session, overflow_at=frozenset({5, 6}))
    driver = ReactDriver(make(), model, demo_tools(1), system=SYSTEM, max_overflow_retries=1)
    with pytest.raises(ContextOverflowError):
        run(driver, session, 10)
    assert model.calls == 7


def test_each_overflow_retry_is_a_smaller_render() -> None:
    """Two overflows in a row: two retries, each render at most 3/4 of the one before."""
    sizes: list[int] = []

    def model(view: RenderedContext) -> ModelReply:
        sizes.append(view.tokens)
        if len(sizes) <= 2:
            raise ProviderError("prompt is too long: 210000 tokens > 200000 maximum")
        return ModelReply(text="done")

    tl = make(budget=4_000)
    tl.begin_turn()
    tl.append(__import__("timeline").blocks.user_prompt("read this: " + "data " * 3_000))
    result = ReactDriver(tl, model, {}, system=SYSTEM).run_turn("go on")
    assert (result.overflow_retries, result.stopped) == (2, "answer")
    assert sizes[1] <= sizes[0] * 3 // 4 and sizes[2] <= sizes[1] * 3 // 4


def test_length_stop_keeps_the_partial_answer() -> None:
    """A reply cut off by its length limit ends the turn as max_tokens, text kept."""
    for reason in ("length", "max_tokens", "max_output_tokens"):
        tl = make()
        reply = ModelReply(text="The answer is", finish_reason=reason)
        result = ReactDriver(tl, lambda v, r=reply: r, {}).run_turn("go")
        assert (result.stopped, result.text, result.steps) == ("max_tokens", "The answer is", 1)
        assert tl.blocks[-1].text == "The answer is"


def test_cut_off_tool_call_alone_is_dropped_and_surfaced() -> None:
    """A reply whose only tool call was cut off: dropped, and the turn says max_tokens."""
    reply = ModelReply(
        text="Let me run",
        tool_calls=(ToolCallRequest("bash", '{"c": "py'),),
        finish_reason="length",
    )
    result = ReactDriver(make(), lambda v: reply, {"bash": lambda p: "ok"}).run_turn("go")
    assert (result.stopped, result.dropped_tool_calls, result.text) == (
        "max_tokens",
        1,
        "Let me run",
    )


def near_budget_timeline() -> Timeline:
    """Between what a compaction leaves (keep_ratio) and the trigger: no render compacts."""
    tl = make(budget=4_000)
    for i in range(6):
        tl.begin_turn()
        tl.append(__import__("timeline").blocks.user_prompt(f"step {i}: " + "words " * 500))
    return tl


def test_length_stop_near_the_budget_compacts_and_continues_once() -> None:
    """Cut off with the context near its budget: compact, call again, join the text."""
    replies = iter(
        [ModelReply(text="Part one, ", finish_reason="length"), ModelReply(text="part two.")]
    )
    tl = near_budget_timeline()
    result = ReactDriver(tl, lambda v: next(replies), {}).run_turn("summarize")
    assert (result.stopped, result.text, result.steps) == ("answer", "Part one, part two.", 2)
    assert any(c.reason == "manual" and c.skipped is None for c in result.compactions)


def test_length_stop_continues_only_once() -> None:
    """Cut off again after the continuation: the turn ends as max_tokens after 2 calls."""
    calls: list[int] = []

    def model(view: RenderedContext) -> ModelReply:
        calls.append(1)
        return ModelReply(text=f"chunk {len(calls)} ", finish_reason="length")

    result = ReactDriver(near_budget_timeline(), model, {}).run_turn("summarize")
    assert (result.stopped, result.text, len(calls)) == ("max_tokens", "chunk 1 chunk 2 ", 2)


def test_disabled_compaction_lets_the_overflow_through() -> None:
    """enabled=False: the provider's own error reaches the caller, with no retry."""
    session = CodingSession(1)
    model = ScriptedModel(session, overflow_at=frozenset({0}))
    driver = ReactDriver(make(enabled=False), model, demo_tools(1), system=SYSTEM)
    with pytest.raises(ProviderError, match="maximum context length"):
        driver.run_turn("hello")
    assert model.calls == 1


@pytest.mark.slow
def test_long_session_never_over_budget_and_never_orphaned() -> None:
    """200 turns with a 16k budget: every request the model received fits (its own count,
    with 350 tokens of overhead we cannot see) and every payload is valid."""
    session = CodingSession(42)
    model = ScriptedModel(
        session, context_window=16_000, usage_overhead=350, counter=HeuristicCounter()
    )
    tl = Timeline("d", policy=CompactionPolicy(max_tokens=16_000), token_counter=HeuristicCounter())
    store = index_store.open("memory://")
    driver = ReactDriver(tl, model, demo_tools(42), system=SYSTEM, store=store)
    results = run(driver, session, 200)
    assert max(model.sent_tokens) <= 16_000
    assert sum(len(r.compactions) for r in results) > 10
    for payload in model.received:
        check_anthropic(payload, 0)
    assert results[-1].version == 200


def test_usage_calibrates_the_next_estimate() -> None:
    """After a reply, the timeline's estimate is the reported prompt tokens plus what was
    appended since (as the library counts it: labels included, so a little above what
    this model counts)."""
    session = CodingSession(2)
    model = ScriptedModel(session, usage_overhead=500, counter=HeuristicCounter())
    tl = Timeline(
        "d", policy=CompactionPolicy(max_tokens=100_000), token_counter=HeuristicCounter()
    )
    driver = ReactDriver(tl, model, demo_tools(2), system=SYSTEM)
    result = driver.run_turn("fix it")
    view = tl.render(SYSTEM, tools=DEMO_TOOL_SPECS)
    assert 0 <= view.tokens - model.actual_tokens(view) <= 20
    assert result.usage.usage_tokens == model.sent_tokens[-1]


def test_silent_overflow_forces_the_next_render() -> None:
    """Reported prompt tokens at the window: the next render is a forced compaction."""
    views: list[RenderedContext] = []

    def model(view: RenderedContext) -> ModelReply:
        views.append(view)
        if len(views) == 1:
            return ModelReply(
                tool_calls=(ToolCallRequest("bash", {"c": 1}),), usage=Usage(prompt_tokens=16_000)
            )
        return ModelReply(text="done", usage=Usage(prompt_tokens=1_000))

    tl = make()
    for i in range(10):
        tl.begin_turn()
        tl.append(__import__("timeline").blocks.user_prompt(f"earlier request {i} " + "x" * 2000))
    driver = ReactDriver(tl, model, {"bash": lambda p: "ok"}, system=SYSTEM)
    driver.run_turn("go")
    assert views[0].compaction is None
    assert views[1].compaction is not None and views[1].compaction.reason == "forced"


def test_truncated_tool_call_is_dropped() -> None:
    """finish_reason length with cut-off JSON arguments: the call is dropped, not run."""
    replies = iter(
        [
            ModelReply(
                tool_calls=(
                    ToolCallRequest("bash", {"c": "ls"}),
                    ToolCallRequest("bash", '{"c": "pytest -'),
                ),
                finish_reason="length",
            ),
            ModelReply(text="done"),
        ]
    )
    ran: list[Mapping[str, Any]] = []

    def bash(p: Mapping[str, Any]) -> str:
        ran.append(p)
        return "ok"

    tl = make()
    driver = ReactDriver(tl, lambda v: next(replies), {"bash": bash})
    result = driver.run_turn("go")
    assert (result.dropped_tool_calls, ran) == (1, [{"c": "ls"}])
    assert sum(1 for b in tl.blocks if b.type == "react.tool.call") == 1


def test_failing_and_unknown_tools_become_error_results() -> None:
    """A tool that raises, or an unknown tool, yields an error result, not a crash."""
    replies = iter(
        [
            ModelReply(tool_calls=(ToolCallRequest("boom", {}), ToolCallRequest("nope", {}))),
            ModelReply(text="done"),
        ]
    )

    def boom(p: Mapping[str, Any]) -> ToolOutput:
        raise OSError("disk full")

    tl = make()
    ReactDriver(tl, lambda v: next(replies), {"boom": boom}).run_turn("go")
    results = [b for b in tl.blocks if b.type == "react.tool.result"]
    assert [r.text for r in results] == ["error: OSError: disk full", "error: unknown tool 'nope'"]
    assert all(r.meta.get("is_error") for r in results)


def test_step_limit_stops_the_turn() -> None:
    """A model that never stops calling tools is cut at max_steps."""
    model = lambda v: ModelReply(tool_calls=(ToolCallRequest("bash", {}),))  # noqa: E731
    result = ReactDriver(make(), model, {"bash": lambda p: "ok"}, max_steps=3).run_turn("go")
    assert (result.stopped, result.steps) == ("step_limit", 3)


def test_turn_end_event_carries_context_usage() -> None:
    """turn_end reports seed 000's ContextUsage: tokens, usage tokens, trailing tokens."""
    events: list[DriverEvent] = []
    session = CodingSession(5)
    driver = ReactDriver(
        make(), ScriptedModel(session), demo_tools(5), system=SYSTEM, on_event=events.append
    )
    driver.run_turn("hi")
    end = [e for e in events if e.kind == "turn_end"][-1]
    assert {"tokens", "usage_tokens", "trailing_tokens", "context_window"} == set(end.data)
    assert end.data["tokens"] == end.data["usage_tokens"] + end.data["trailing_tokens"]


def test_every_usage_event_carries_the_context_window() -> None:
    """Seed 004: each usage_update and the turn_end event name the context window, and
    ContextUsage has it too (from the model registry when only a model is named)."""
    events: list[DriverEvent] = []
    tl = Timeline("c", policy=CompactionPolicy(model="claude-sonnet-4"))
    driver = ReactDriver(
        tl, ScriptedModel(CodingSession(3)), demo_tools(3), system=SYSTEM, on_event=events.append
    )
    result = driver.run_turn("hi")
    usage = [e for e in events if e.kind in ("usage_update", "turn_end")]
    assert len(usage) == result.steps + 1
    assert {e.data["context_window"] for e in usage} == {200_000}
    assert result.usage.context_window == 200_000


def stateless(view: RenderedContext) -> ModelReply:
    """Two tool calls per turn, decided from the view alone (so a resumed run replays)."""
    turn = view.blocks[-1].turn_id
    task = [b.text for b in view.blocks if b.type == "user.prompt"][-1]
    done = sum(1 for b in view.blocks if b.turn_id == turn and b.type == "react.tool.result")
    if done < 2:
        return ModelReply(tool_calls=(ToolCallRequest("bash", {"task": task, "n": done}),))
    return ModelReply(text=f"finished {task}")


def test_periodic_checkpoints_and_resume() -> None:
    """checkpoint_every=5 saves named checkpoints; a run resumed from step 10 continues
    with the same timeline as the original run."""
    store = index_store.open("memory://")
    tl = make(budget=1_000_000)
    driver = ReactDriver(
        tl, stateless, {"bash": lambda p: f"ran {p}"}, store=store, checkpoint_every=5
    )
    for t in range(6):
        driver.run_turn(f"task {t}")
    assert driver.checkpoints() == ["step-000005", "step-000010", "step-000015"]
    original = [(b.type, b.text) for b in tl.blocks]

    resumed_tl = Timeline.load(store, "d", policy=CompactionPolicy(max_tokens=1_000_000))
    resumed = ReactDriver(resumed_tl, stateless, {"bash": lambda p: f"ran {p}"}, store=store)
    snapshot = store.load_checkpoint("d", "step-000010")
    resumed.resume("step-000010")
    n = len(snapshot.blocks)
    assert [(b.type, b.text) for b in resumed_tl.blocks][:n] == original[:n]
    for t in range(4, 6):
        resumed.run_turn(f"task {t}")
    assert original == [(b.type, b.text) for b in resumed_tl.blocks]


def test_driver_start_warms_the_tokenizer_up() -> None:
    """Creating a driver loads the timeline's tokenizer, so the first turn does not."""

    class WarmableCounter(HeuristicCounter):
        warmed = 0

        def warm_up(self) -> None:
            WarmableCounter.warmed += 1

    tl = Timeline("w", token_counter=WarmableCounter())
    ReactDriver(tl, ScriptedModel(CodingSession(1)), demo_tools(1))
    assert WarmableCounter.warmed == 1


def _read_file(path: str, limit: int = 10) -> str:
    """Read a file.

    Args:
        path: the file's path
        limit: lines to read at most
    """
    return f"{path}: {limit} lines"


def test_plain_functions_are_declared_sent_and_called_with_keywords() -> None:
    """Plain functions are tools: their names, docstrings and signatures are the
    definitions every request sends (counted in its tokens), and the model's arguments
    reach them as keywords."""
    seen: list[RenderedContext] = []

    def model(view: RenderedContext) -> ModelReply:
        seen.append(view)
        if len(seen) == 1:
            return ModelReply(tool_calls=(ToolCallRequest("_read_file", {"path": "a.py"}),))
        return ModelReply(text="It holds 10 lines.")

    tl = make()
    ReactDriver(tl, model, [_read_file], system=SYSTEM).run_turn("what is in a.py?")
    (tool,) = seen[0].to_anthropic()["tools"]
    assert tool["description"] == "Read a file."
    assert tool["input_schema"] == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "the file's path"},
            "limit": {"type": "integer", "description": "lines to read at most", "default": 10},
        },
        "required": ["path"],
    }
    assert all(v.tools_tokens > 0 and v.tools == seen[0].tools for v in seen)
    result = next(b for b in tl.blocks if b.type == "react.tool.result")
    assert (result.text, result.tool_id) == ("a.py: 10 lines", "_read_file")


def test_named_callables_are_declared_as_taking_any_object() -> None:
    """A mapping of names to callables (the arguments as one mapping) still works, and
    each is declared with its docstring and an open schema."""
    views: list[RenderedContext] = []

    def grep(params: Mapping[str, Any]) -> str:
        """Search the files."""
        return f"found {params['pattern']}"

    def model(view: RenderedContext) -> ModelReply:
        views.append(view)
        if len(views) == 1:
            return ModelReply(tool_calls=(ToolCallRequest("grep", {"pattern": "TODO"}),))
        return ModelReply(text="done")

    tl = make()
    ReactDriver(tl, model, {"grep": grep}, system=SYSTEM).run_turn("find the TODOs")
    chat = views[0].to_openai()
    assert isinstance(chat, dict)
    assert chat["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "Search the files.",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert [b.text for b in tl.blocks if b.type == "react.tool.result"] == ["found TODO"]
