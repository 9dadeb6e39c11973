"""Rebased payload plans (#16 item 9): when a new head replaces the start of the stream
(a compaction's summary and pinned blocks) the kept messages move behind it; the payload
must still equal the one built from scratch, whatever the head, the kept run and the
blocks after it hold."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings, target
from hypothesis import strategies as st

from tests.helpers.samples import PNG_1x1
from timeline import blocks
from timeline.formats.anthropic import to_anthropic
from timeline.formats.incremental import PayloadCache
from timeline.formats.openai import to_openai, to_openai_responses
from timeline.model.block import Block
from timeline.model.errors import TimelineError
from timeline.model.reasoning import anthropic_thinking, openai_reasoning

Stream = tuple[Block, ...]
Build = Callable[[Stream, tuple[int, ...]], Any]

CALL_IDS = ("c0", "c1", "c2", None)
TEXTS = ("do it", "", "  \n", "done. ", "x")


def fresh(kind: str, cid: str | None, text: str) -> Block:
    """A new block object of ``kind`` (a small pool, so calls and results meet often)."""
    if kind == "header":
        return blocks.turn_header()
    if kind == "prompt":
        return blocks.user_prompt(text)
    if kind == "completion":
        return blocks.assistant_completion(text)
    if kind == "plan":
        return blocks.plan(text)
    if kind == "note":
        return blocks.note(text)
    if kind == "summary":
        return blocks.summary(f"summary {text}")
    if kind == "call":
        return blocks.tool_call("read", {"t": text}, call_id=cid)
    if kind == "result":
        return blocks.tool_result(cid or "c0", text, tool_id="read")
    if kind == "image_result":
        return blocks.tool_result(cid or "c0", text, mime="image/png", data=PNG_1x1)
    if kind == "image":
        return blocks.user_attachment(name="i.png", mime="image/png", data=PNG_1x1, text=text)
    if kind == "thinking":
        return anthropic_thinking({"type": "thinking", "thinking": text, "signature": "c2ln"})
    if kind == "redacted":
        return anthropic_thinking({"type": "redacted_thinking", "data": "ZW5j"})
    item = {"type": "reasoning", "id": f"rs_{text}", "encrypted_content": "gAAA", "summary": []}
    return openai_reasoning(item)


KINDS = (
    "header",
    "prompt",
    "prompt",
    "completion",
    "completion",
    "plan",
    "note",
    "call",
    "call",
    "call",
    "result",
    "result",
    "image_result",
    "image",
    "thinking",
    "redacted",
    "reasoning",
)

block_lists = st.lists(
    st.builds(fresh, st.sampled_from(KINDS), st.sampled_from(CALL_IDS), st.sampled_from(TEXTS)),
    max_size=12,
)

FORMATS: dict[str, tuple[Callable[..., Any], Build]] = {
    "anthropic": (
        lambda c, s, p: c.anthropic("sys", s, p, True),
        lambda s, p: to_anthropic("sys", s, p, True),
    ),
    "openai": (lambda c, s, p: c.openai("sys", s), lambda s, p: to_openai("sys", s)),
    "responses": (
        lambda c, s, p: c.openai_responses("sys", s),
        lambda s, p: to_openai_responses("sys", s),
    ),
}


def outcome(build: Callable[..., Any], *args: Any) -> Any:
    try:
        return build(*args)
    except TimelineError as exc:
        return type(exc).__name__


@st.composite
def sessions(draw: st.DrawFn) -> list[Stream]:
    """Successive streams: each one appends to the last, or keeps a run of it behind a new
    head (a summary, new blocks, blocks from before the run as pins) and adds new blocks.
    A call id names one call at most and never follows a result naming it (as in a
    timeline, which refuses a result before its call); results name any."""
    used: set[str | None] = {None}

    def new_blocks() -> list[Block]:
        out = []
        for b in draw(block_lists):
            if b.type == "react.tool.call" and b.call_id in used:
                b = blocks.tool_call("read", {"t": b.text})  # no call id: never pending
            used.add(b.call_id if b.type in ("react.tool.call", "react.tool.result") else None)
            out.append(b)
        return out

    stream: Stream = (blocks.summary("first"), *new_blocks(), *new_blocks())
    out = [stream]
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            stream = (*stream, *new_blocks())
        else:
            a = draw(st.integers(0, len(stream)))
            n = draw(st.sampled_from((len(stream) - a, draw(st.integers(0, len(stream) - a)))))
            pins = draw(st.lists(st.sampled_from(stream[:a]), unique_by=id)) if a else []
            head = (blocks.summary("next"), *new_blocks(), *pins)
            stream = (*head, *stream[a : a + n], *new_blocks())
        out.append(stream)
    return out


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(session=sessions(), data=st.data())
def test_rebased_payloads_equal_payloads_from_scratch(session: list[Stream], data: Any) -> None:
    """Over random heads, kept runs and rests (calls and results across them, pending
    calls, thinking and reasoning at the edges, images in results, checkpoints anywhere),
    every payload one cache builds equals the one built from scratch in three formats."""
    for name, (incremental, scratch) in FORMATS.items():
        cache = PayloadCache()
        for stream in session:
            size = max(len(stream), 1)
            points = tuple(data.draw(st.lists(st.integers(0, size - 1), max_size=3), label=name))
            expected = outcome(scratch, stream, points)
            assert outcome(incremental, cache, stream, points) == expected
        target(float(cache.rebased_plans), label=f"rebased plans ({name})")


def test_a_kept_run_behind_a_new_summary_is_moved_not_planned() -> None:
    """A stream whose head is replaced by a summary (the kept turns unchanged) is rebased:
    only the summary's message and the last messages are planned, the rest is moved with
    the items already built."""
    turns = [
        (
            blocks.turn_header(),
            blocks.user_prompt(f"do {t}"),
            blocks.tool_call("read", {"t": t}, call_id=f"c{t}"),
            blocks.tool_result(f"c{t}", f"out {t}"),
            blocks.assistant_completion(f"did {t}"),
        )
        for t in range(12)
    ]
    old = (blocks.summary("first"), *(b for turn in turns[:10] for b in turn))
    new = (blocks.summary("next"), *(b for turn in turns[6:] for b in turn))
    cache = PayloadCache()
    cache.openai("sys", old)
    planned, built = cache.planned_messages, cache.built_messages
    assert cache.openai("sys", new) == to_openai("sys", new)
    assert (cache.full_plans, cache.rebased_plans) == (1, 1)
    # the summary merged with the first kept prompt; then the last kept turn (its final
    # message is planned again) and the two new turns: 3 messages a turn
    # 4 messages a turn (prompt, call, result, completion). Planned: the summary merged
    # with the first kept prompt, the last kept completion again (it was the final one)
    # and the two new turns; built: the same; every other message moved with its items.
    assert cache.planned_messages - planned == 1 + 1 + 2 * 4
    assert cache.built_messages - built == 1 + 1 + 2 * 4
    assert cache.reused_messages == 6 * 4 - (1 + 1 + 2 * 4)


def _case(name: str) -> tuple[Stream, Stream, tuple[int, ...], set[str]]:
    """``(old, new, cache points of new, the formats that rebase)`` for one edge."""
    prompt_a, prompt_b, prompt_c = (blocks.user_prompt(t) for t in "abc")
    done_x, done_y, done_z = (blocks.assistant_completion(t) for t in "xyz")
    call, result = blocks.tool_call("read", {}, call_id="c1"), blocks.tool_result("c1", "out")
    if name == "checkpoint on the merged prompt":
        old = (blocks.summary("s"), prompt_a, done_x, prompt_b, call, result, done_y, prompt_c)
        new = (blocks.summary("t"), prompt_b, call, result, done_y, prompt_c, done_z)
        return old, new, (1, 3), set(FORMATS)
    if name == "a new result in the head for a kept call":
        old = (blocks.summary("s"), prompt_a, done_x, prompt_b, call, result, done_y, prompt_c)
        early = blocks.tool_result("c1", "early")
        new = (blocks.summary("t"), early, prompt_b, call, result, done_y, prompt_c, done_z)
        return old, new, (), set()
    if name == "thinking at the end of the head":
        old = (blocks.summary("s"), prompt_a, done_x, prompt_b, done_y, prompt_c)
        thinking = anthropic_thinking({"type": "thinking", "thinking": "t", "signature": "c2ln"})
        new = (blocks.summary("t"), thinking, done_y, prompt_c, done_z)
        return old, new, (), {"openai", "responses"}  # thinking goes to Anthropic only
    if name == "a waiting call at the end of the head":
        old = (blocks.summary("s"), prompt_a, call, result, done_y, prompt_c)
        waiting = blocks.tool_call("read", {}, call_id="c5")
        new = (blocks.summary("t"), waiting, call, result, done_y, prompt_c, done_z)
        return old, new, (), set()
    assert name == "assistant text at the end of the head"
    old = (blocks.summary("s"), prompt_a, done_x, prompt_b, done_y, prompt_c, call, result)
    text = blocks.assistant_completion("h")
    new = (blocks.summary("t"), text, done_y, prompt_c, call, result, done_z)
    return old, new, (), set()


@pytest.mark.parametrize(
    "name",
    [
        "checkpoint on the merged prompt",
        "a new result in the head for a kept call",
        "thinking at the end of the head",
        "a waiting call at the end of the head",
        "assistant text at the end of the head",
    ],
)
def test_each_edge_of_a_rebase_equals_the_payload_from_scratch(name: str) -> None:
    """The edges a rebase must get right (a checkpoint on a part moved into the summary's
    message) or must leave to a full plan (a head linked to a kept call, or ending where
    the kept part would join it) give the payload built from scratch."""
    old, new, points, rebased = _case(name)
    for fmt, (incremental, scratch) in FORMATS.items():
        cache = PayloadCache()
        incremental(cache, old, ())
        assert incremental(cache, new, points) == scratch(new, points), fmt
        assert cache.rebased_plans == (fmt in rebased), fmt


def test_a_lone_thinking_block_after_a_cut_joins_the_assistant_message_before_it() -> None:
    """Blocks replacing a volatile tail that start with a thinking block then a prompt: the
    thinking belongs to the assistant message before the cut, so the rest cannot be
    planned alone (it would drop the thinking) and the payload equals the one from
    scratch."""
    prompt_a, done_x = blocks.user_prompt("a"), blocks.assistant_completion("x")
    thinking = anthropic_thinking({"type": "thinking", "thinking": "t", "signature": "c2ln"})
    old = (blocks.summary("s"), prompt_a, done_x, blocks.note("volatile"))
    new = (old[0], prompt_a, done_x, thinking, blocks.user_prompt("c"))
    for incremental, scratch in FORMATS.values():
        cache = PayloadCache()
        incremental(cache, old, ())
        assert incremental(cache, new, ()) == scratch(new, ())


@pytest.mark.parametrize("case", ["assistant text last", "a waiting call last"])
def test_an_append_after_the_last_message_equals_the_payload_from_scratch(case: str) -> None:
    """An append keeps the last message when it is a user message, but not an assistant
    one (as the final message it lost its trailing whitespace) nor a user message holding
    a "no result recorded" result (a call appended next joins the waiting one)."""
    old: Stream = (blocks.summary("s"), blocks.user_prompt("a"))
    if case == "assistant text last":
        old = (*old, blocks.assistant_completion("done. "))
        new = (*old, blocks.user_prompt("b"))
    else:
        old = (*old, blocks.tool_call("read", {}, call_id="c1"))
        call = blocks.tool_call("read", {"n": 2}, call_id="c2")
        new = (*old, call, blocks.tool_result("c2", "out"))
    for incremental, scratch in FORMATS.values():
        cache = PayloadCache()
        incremental(cache, old, ())
        assert incremental(cache, new, ()) == scratch(new, ())


@pytest.mark.parametrize("how", ["append", "rebase"])
def test_thinking_between_a_call_and_its_result_reaches_the_next_completion(how: str) -> None:
    """A thinking block between a call and its result goes after the result (pulled
    forward to its call) and, with nothing after it, is dropped below the last shown
    block; the completion appended next (or after a new summary, the example hypothesis
    found) keeps it, as the payload from scratch does."""
    call = blocks.tool_call("read", {"t": "do it"}, call_id="c0")
    thinking = anthropic_thinking({"type": "thinking", "thinking": "do it", "signature": "c2ln"})
    result = blocks.tool_result("c0", "do it", tool_id="read")
    old = (blocks.summary("first"), call, thinking, result)
    head = (blocks.summary("next"),) if how == "rebase" else ()
    new = (*head, *old, blocks.assistant_completion("do it"))
    for fmt, (incremental, scratch) in FORMATS.items():
        cache = PayloadCache()
        incremental(cache, old, ())
        assert incremental(cache, new, ()) == scratch(new, ()), fmt


def test_a_call_after_a_call_whose_result_came_first_joins_it() -> None:
    """A result shown before its call (a pinned result ahead of the kept call) is pulled
    forward behind the call, which still ends the stream: a call appended next is a
    parallel call joining it, as in the payload from scratch (found by hypothesis)."""
    result = blocks.tool_result("c0", "out", tool_id="read")
    old = (blocks.summary("s"), result, blocks.tool_call("read", {}, call_id="c0"))
    new = (*old, blocks.tool_call("read", {"n": 2}, call_id="c1"))
    for fmt, (incremental, scratch) in FORMATS.items():
        cache = PayloadCache()
        incremental(cache, old, ())
        assert incremental(cache, new, ()) == scratch(new, ()), fmt
