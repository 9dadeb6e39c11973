"""Render: visible stream, hidden blocks, tail, and payload validity for random timelines."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.html_page import listing_page
from tests.helpers.payload_checks import check_anthropic
from timeline import (
    Block,
    CompactionPolicy,
    HeuristicCounter,
    InvalidBlockError,
    Timeline,
    blocks,
)
from timeline._state.stream import rendered_form


def test_render_without_compaction_never_changes_the_timeline(
    make_tl: Callable[..., Timeline],
) -> None:
    """Under the trigger, render() leaves blocks and state as they were."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=100_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    before = tl.blocks
    view = tl.render("sys")
    assert before == tl.blocks
    assert view.compaction is None
    assert [b.id for b in before] == [b.id for b in view.blocks]


def test_hidden_blocks_render_once_per_path(make_tl: Callable[..., Timeline]) -> None:
    """Hidden blocks sharing a path show their replacement once; without one, nothing."""
    tl = make_tl()
    tl.begin_turn()
    a = tl.append(Block(type="react.note", text="part 1", path="ar:t1.log"))
    tl.append(Block(type="react.note", text="part 2", path="ar:t1.log"))
    c = tl.append(blocks.note("secret"))
    tl.hide([a.path], "(log hidden)")
    tl.hide([c.path])
    view = tl.render("")
    assert [b.text for b in view.blocks if b.type == "react.note"] == ["(log hidden)"]


def test_hidden_tool_result_keeps_its_pair(make_tl: Callable[..., Timeline]) -> None:
    """A hidden tool result without replacement still renders (as a placeholder), so its
    call is never orphaned."""
    tl = make_tl()
    tl.begin_turn()
    call = tl.append(blocks.tool_call("bash", {"command": "ls"}))
    result = tl.append(blocks.tool_result(call.call_id or "", "a\nb"))
    tl.hide([result.path])
    messages = tl.render("").to_anthropic()["messages"]
    assert messages[-1]["content"][0]["content"] == "(hidden)"


def test_tail_blocks_render_last_uncached_and_unstored(make_tl: Callable[..., Timeline]) -> None:
    """Tail blocks follow the stream, never carry a checkpoint and are never stored."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    plan = blocks.custom("react.plan", "1. do it")
    view = tl.render("sys", tail=[plan])
    assert view.blocks[-1].type == "react.plan"
    assert view.tail == (view.blocks[-1],)
    assert all(i < view.stable_count for i in view.cache_points)
    assert all(b.type != "react.plan" for b in tl.blocks)


def test_tool_exchanges_cannot_be_tail_blocks(make_tl: Callable[..., Timeline]) -> None:
    """A tool call in the tail is refused: tails are volatile context only."""
    tl = make_tl()
    tl.begin_turn()
    with pytest.raises(InvalidBlockError):
        tl.render("", tail=[blocks.tool_call("t", {})])


def test_results_are_pulled_right_after_their_calls(make_tl: Callable[..., Timeline]) -> None:
    """A note between a call and its result does not break pairing: the result moves up."""
    tl = make_tl()
    tl.begin_turn()
    call = tl.append(blocks.tool_call("bash", {"command": "ls"}))
    tl.append(blocks.note("waiting"))
    tl.append(blocks.tool_result(call.call_id or "", "ok"))
    messages = tl.render("").to_anthropic()["messages"]
    assert messages[0]["content"][0]["text"] == "[conversation start]"  # must open with user
    assert [p["type"] for p in messages[2]["content"]] == ["tool_result", "text"]


def test_pending_call_gets_a_synthetic_result(make_tl: Callable[..., Timeline]) -> None:
    """A call whose result is not there yet renders with a 'no result' error result."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("go"))
    tl.append(blocks.tool_call("bash", {"command": "ls"}))
    messages = tl.render("").to_anthropic()["messages"]
    last = messages[-1]["content"][0]
    assert (last["type"], last["is_error"]) == ("tool_result", True)
    openai = tl.render("").to_openai()
    assert openai[-1]["role"] == "tool"


# -- payload validity over random timelines ------------------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.text(min_size=1, max_size=30)),
        st.tuples(st.just("say"), st.text(max_size=60)),
        st.tuples(st.just("calls"), st.integers(1, 3), st.booleans()),
        st.tuples(st.just("note"), st.text(max_size=20)),
        st.tuples(st.just("hide"), st.integers(0, 50)),
        st.tuples(st.just("big"), st.integers(500, 6_000)),
    ),
    min_size=1,
    max_size=40,
)


def build(ops: list[Any], budget: int) -> Timeline:
    tl = Timeline(
        "h",
        policy=CompactionPolicy(max_tokens=budget, keep_recent_turns=2),
        token_counter=HeuristicCounter(),
    )
    tl.begin_turn()
    for op in ops:
        kind = op[0]
        if kind == "turn":
            tl.begin_turn()
            tl.append(blocks.user_prompt(op[1]))
        elif kind == "say":
            tl.append(blocks.assistant_completion(op[1]))
        elif kind == "calls":
            calls = [tl.append(blocks.tool_call("bash", {"i": i})) for i in range(op[1])]
            order = reversed(calls) if op[2] else calls
            for c in order:
                tl.append(blocks.tool_result(c.call_id or "", f"out {c.call_id}"))
        elif kind == "note":
            tl.append(blocks.note(op[1]))
        elif kind == "hide" and tl.blocks:
            tl.hide([tl.blocks[op[1] % len(tl.blocks)].path], "(hidden)")
        elif kind == "big":
            c = tl.append(blocks.tool_call("read_file", {"path": "big.txt"}))
            tl.append(blocks.tool_result(c.call_id or "", "x" * op[1]))
        tl.render("You are terse.")
    return tl


def check_openai(messages: list[dict[str, Any]]) -> None:
    pending: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending
            pending.remove(m["tool_call_id"])
            continue
        assert not pending, "tool messages must follow their assistant message"
        if m["role"] == "assistant":
            pending = [c["id"] for c in m.get("tool_calls", [])]
    assert not pending


def check_responses(items: list[dict[str, Any]]) -> None:
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs)
    for n, item in enumerate(items):
        if item.get("type") == "function_call_output":
            assert item["call_id"] in [i.get("call_id") for i in items[:n]]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, budget=st.integers(400, 6_000))
def test_payloads_are_valid_for_random_timelines(ops: list[Any], budget: int) -> None:
    """Alternation, call/result pairing, <=4 breakpoints, none on the tail, within budget,
    and byte-identical output for an identical timeline."""
    tl = build(ops, budget)
    tail = [blocks.custom("react.plan", "the plan")]
    view = tl.render("You are terse.", tail=tail)
    assert view.tokens <= budget
    assert all(i < view.stable_count for i in view.cache_points)
    check_anthropic(view.to_anthropic(), len(tail))
    check_openai(view.to_openai())
    check_responses(view.to_openai_responses())
    twin = build(ops, budget).render("You are terse.", tail=tail)
    assert json.dumps(view.to_anthropic()) == json.dumps(twin.to_anthropic())
    assert view.to_text() == twin.to_text()


def test_sequential_calls_stay_sequential(make_tl: Callable[..., Timeline]) -> None:
    """call A, result A, call B, result B renders as two exchanges, not two parallel calls,
    so a later request repeats the earlier one's messages exactly."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("go"))
    a = tl.append(blocks.tool_call("bash", {"n": 1}))
    tl.append(blocks.tool_result(a.call_id or "", "one"))
    first = tl.render("").to_anthropic()["messages"]
    b = tl.append(blocks.tool_call("bash", {"n": 2}))
    tl.append(blocks.tool_result(b.call_id or "", "two"))
    second = tl.render("").to_anthropic()["messages"]
    kinds = [[p["type"] for p in m["content"]] for m in second]
    assert kinds == [["text"], ["tool_use"], ["tool_result"], ["tool_use"], ["tool_result"]]

    def strip(ms: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        return [
            [{k: v for k, v in p.items() if k != "cache_control"} for p in m["content"]] for m in ms
        ]

    assert strip(first) == strip(second)[:3]


def test_pdf_attachment_becomes_a_document_part(make_tl: Callable[..., Timeline]) -> None:
    """A PDF attachment renders as a native document part (Anthropic) / file part (OpenAI)."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("summarize this"))
    tl.append(blocks.user_attachment(name="spec.pdf", mime="application/pdf", data=b"%PDF-1.4"))
    view = tl.render("")
    part = view.to_anthropic()["messages"][0]["content"][1]
    assert (part["type"], part["source"]["media_type"]) == ("document", "application/pdf")
    chat = view.to_openai()[0]["content"][1]
    assert (chat["type"], chat["file"]["filename"]) == ("file", "spec.pdf")
    item = view.to_openai_responses()[0]["content"][1]
    assert item["type"] == "input_file"


def test_a_hidden_result_path_renders_once_a_hidden_call_always() -> None:
    """Two hidden results at one path render once (the second is omitted); a hidden
    call is never omitted (its result would be an orphan)."""
    result = msgspec.structs.replace(
        blocks.tool_result("c1", "big output"), path="tc:t1.tool_calls.c1.out.json", hidden=True
    )
    seen: set[str] = set()
    first = rendered_form(result, seen)
    assert first is not None and first.text != "big output"
    assert rendered_form(result, seen) is None
    call = msgspec.structs.replace(
        blocks.tool_call("ls", {}, call_id="c1"), path="tc:t1.tool_calls.c1.in.json", hidden=True
    )
    assert rendered_form(call, seen) is not None and rendered_form(call, seen) is not None


def test_a_hidden_result_with_bytes_renders_without_them() -> None:
    """A hidden tool result's bytes (an image it returned) are not sent: only the
    placeholder text is."""
    shot = msgspec.structs.replace(
        blocks.tool_result("c1", "", mime="image/png", data=b"\x89PNG\r\n\x1a\n0000"),
        path="tc:t1.tool_calls.c1.out.json",
        hidden=True,
    )
    shown = rendered_form(shot, set())
    assert shown is not None and shown.data is None and shown.mime == "text/plain"


def test_a_render_records_the_system_prompt_tokens_in_the_state() -> None:
    """The state a snapshot carries holds the last render's system prompt cost (a pin
    checks against it)."""
    tl, _ = listing_page()
    view = tl.render("You are a careful assistant. " * 20)
    assert view.system_tokens > 0
    assert tl.snapshot().state.last_render.fixed_tokens == view.system_tokens + view.framing_tokens


def test_a_tail_that_is_no_sequence_names_its_type() -> None:
    tl, _ = listing_page()
    with pytest.raises(
        InvalidBlockError, match=r"^tail must be a list or tuple of blocks, not str$"
    ):
        tl.render("sys", tail="plan")  # type: ignore[arg-type]


def test_a_tail_block_gets_a_default_path_or_keeps_its_own() -> None:
    tl, _ = listing_page()
    plan = blocks.plan("1. check the files")
    named = msgspec.structs.replace(blocks.plan("2. write"), path="ar:t1.react.plan.v2")
    view = tl.render("sys", tail=[plan, named])
    assert [b.path for b in view.blocks[-2:]] == ["ar:t1.react.plan", "ar:t1.react.plan.v2"]
