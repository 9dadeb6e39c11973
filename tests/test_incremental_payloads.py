"""Incremental payloads (#16 item 9): equal to the payloads built from scratch, built from
what changed, and safe to mutate at the top level."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings, target
from hypothesis import strategies as st
from timeline_gen import _Gen

from timeline import CompactionPolicy, HeuristicCounter, RenderedContext, Timeline, blocks
from timeline.formats.anthropic import to_anthropic
from timeline.formats.openai import to_openai, to_openai_responses
from timeline.model.errors import TimelineError

FORMATS: dict[str, tuple[Callable[[RenderedContext], Any], Callable[[RenderedContext], Any]]] = {
    "anthropic": (
        lambda v: v.to_anthropic(),
        lambda v: to_anthropic(v.system, v.blocks, v.cache_points, v.system_cached),
    ),
    "openai": (lambda v: v.to_openai(), lambda v: to_openai(v.system, v.blocks)),
    "responses": (
        lambda v: v.to_openai_responses(),
        lambda v: to_openai_responses(v.system, v.blocks),
    ),
}


def outcome(build: Callable[[RenderedContext], Any], view: RenderedContext) -> Any:
    try:
        return build(view)
    except TimelineError as exc:
        return type(exc).__name__


@settings(max_examples=60, deadline=None)
def _check_render(g: _Gen) -> None:
    """Render (a render may refuse: then nothing to compare) and compare every format's
    incremental payload with the one built from scratch."""
    try:
        view = g.render()
    except TimelineError:
        return
    for incremental, scratch in FORMATS.values():
        assert outcome(incremental, view) == outcome(scratch, view)


@given(seed=st.integers(0, 10_000), renders=st.integers(2, 8))
def test_incremental_payloads_equal_payloads_from_scratch(seed: int, renders: int) -> None:
    """Over random timelines (tools, pending calls, thinking, hidden and pinned blocks,
    compaction, truncation, forced renders), every payload the timeline's cache builds
    equals the one built from scratch, in the three message formats."""
    g = _Gen(seed)
    g.tl.begin_turn()
    for _ in range(renders):
        for _ in range(g.rng.randint(1, 10)):
            g.step()
        _check_render(g)


def agent_session(
    tl: Timeline, turns: int, send: Callable[[RenderedContext], object] | None = None
) -> list[RenderedContext]:
    """A coding session's renders (``send``: called on each right after it, as an agent
    sends its payload before the next render)."""
    views = []

    def render() -> None:
        views.append(tl.render("sys"))
        if send is not None:
            send(views[-1])

    for t in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {t}: fix module {t}"))
        render()
        call = tl.append(blocks.tool_call("read_file", {"path": f"m{t}.py"}))
        render()
        tl.append(blocks.tool_result(call.call_id or "", f"source of m{t}"))
        render()
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    return views


def test_an_append_plans_only_the_new_messages() -> None:
    """Without compaction, only the first two payloads (one message, no cut yet) plan the
    whole stream; every later one keeps the plan and items up to a cut near the end and
    plans only the last messages."""
    tl = Timeline(
        "inc", token_counter=HeuristicCounter(), policy=CompactionPolicy(max_tokens=10**6)
    )
    agent_session(tl, 20, lambda view: (view.to_anthropic(), view.to_openai()))
    cache = tl.payload_cache
    assert (cache.full_plans, cache.partial_plans) == (2 * 2, 2 * (60 - 2))  # 2 providers
    # then each payload plans 2 messages: the completion (it was the final message) and
    # the new prompt; the call and its "no result recorded" result; the call again and
    # its result (the last user message is kept unless it held a synthetic result)
    assert cache.planned_messages == 2 * (1 + 3 + 2 * (60 - 2))


def test_mutating_a_payload_top_level_leaves_the_next_one_intact() -> None:
    """The payload dict and its lists are fresh each call: clearing, appending or
    replacing messages does not reach the next payload (and nothing inside is shared
    either: ``tests/test_payload_ownership.py``)."""
    tl = Timeline(
        "mut", token_counter=HeuristicCounter(), policy=CompactionPolicy(max_tokens=10**6)
    )
    view = agent_session(tl, 5)[-1]
    first = view.to_anthropic()
    expected = copy.deepcopy(first)
    first["messages"].append({"role": "user", "content": "injected"})
    first["messages"][0] = {"role": "user", "content": "replaced"}
    del first["system"]
    chat = view.to_openai()
    chat_expected = copy.deepcopy(chat)
    chat.clear()
    assert view.to_anthropic() == expected
    assert view.to_openai() == chat_expected


def test_an_old_view_cannot_change_what_a_later_view_sends() -> None:
    """Only the newest render's payloads use and update the timeline's payload memo: an
    earlier view builds its own from scratch and leaves the memo as it was, and the new
    view's payloads equal a fresh timeline's render of the same blocks."""

    def session(conversation_id: str) -> Timeline:
        tl = Timeline(
            conversation_id,
            token_counter=HeuristicCounter(),
            policy=CompactionPolicy(max_tokens=10**6),
        )
        agent_session(tl, 3)
        return tl

    tl = session("old")
    old = tl.render("sys")
    old.to_anthropic()
    tl.append(blocks.user_prompt("and module 9"))
    new = tl.render("sys")
    cache = tl.payload_cache
    before = (cache.full_plans, cache.partial_plans, cache.planned_messages)
    old_payloads = (old.to_anthropic(), old.to_openai(), old.to_openai_responses())
    assert (cache.full_plans, cache.partial_plans, cache.planned_messages) == before
    fresh = session("old")
    fresh.append(blocks.user_prompt("and module 9"))
    again = fresh.render("sys")
    assert new.to_anthropic() == again.to_anthropic()
    assert new.to_openai() == again.to_openai()
    assert new.to_openai_responses() == again.to_openai_responses()
    assert cache.partial_plans == before[1] + 1  # the memo extended from the old view's plan
    assert old_payloads[0] == old.to_anthropic()  # the old view's own payloads as before


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    renders=st.integers(3, 10),
    edits=st.lists(st.sampled_from(("hide", "replace", "compact", "none")), max_size=10),
)
def test_payloads_after_compactions_and_hides_equal_payloads_from_scratch(
    seed: int, renders: int, edits: list[str]
) -> None:
    """Under a small budget, with blocks hidden (with or without a replacement text) and
    compactions forced between renders, every payload reusing the last plan's message
    items equals the one built from scratch, and some items were in fact reused."""
    g = _Gen(seed)
    g.tl.policy = CompactionPolicy(max_tokens=g.rng.choice((700, 1_200)), keep_recent_turns=1)
    g.tl.begin_turn()
    for r in range(renders):
        for _ in range(g.rng.randint(2, 8)):
            g.step()
        edit = edits[r] if r < len(edits) else "none"
        if edit in ("hide", "replace") and g.tl.blocks:
            target = g.rng.choice(g.tl.blocks)
            g.tl.hide([target.path], replacement_text="[hidden]" if edit == "replace" else "")
        elif edit == "compact":
            g.tl.begin_turn()
            g.tl.append(blocks.user_prompt("next request " * 80))
        _check_render(g)


def test_a_compaction_plans_and_builds_only_the_messages_that_changed() -> None:
    """After a compaction only the new head (the summary's message, merged with the first
    kept prompt) and the messages after the kept ones are planned and built: the kept
    turns' messages move behind the summary with the items already built."""
    tl = Timeline(
        "cmp",
        token_counter=HeuristicCounter(),
        policy=CompactionPolicy(max_tokens=1_500, keep_recent_turns=3),
    )
    cache = tl.payload_cache
    checked = 0
    for t in range(40):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {t}: fix module {t} " + "detail " * 20))
        call = tl.append(blocks.tool_call("read_file", {"path": f"m{t}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", f"source of m{t} " * 10))
        view = tl.render("sys")
        full, rebased = cache.full_plans, cache.rebased_plans
        planned, built, reused = cache.planned_messages, cache.built_messages, cache.reused_messages
        payload = view.to_openai()
        assert payload == to_openai(view.system, view.blocks)
        # what an append plans and builds: the messages of the completion, the new
        # prompt, call and result (the last user message is kept)
        if t > 1 and view.compaction is None:
            assert cache.planned_messages - planned == 4
            assert cache.built_messages - built == 4
        if view.compaction is not None:
            checked += 1
            assert (cache.full_plans, cache.rebased_plans) == (full, rebased + 1)
            # the same plus the summary's message (merged with the first kept prompt)
            assert cache.planned_messages - planned == 1 + 4
            assert cache.built_messages - built == 1 + 4 < len(payload) - 1
            assert cache.reused_messages - reused == len(payload) - 1 - (1 + 4)
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    assert checked >= 3


def compaction_session(seed: int) -> Timeline:
    """A random session forced to compact often, with everything a kept part can hold:
    pinned blocks, parallel and pending calls, thinking and reasoning, images in results,
    hidden blocks and volatile tails."""
    g = _Gen(seed)
    tl = g.tl
    tl.policy = CompactionPolicy(
        max_tokens=g.rng.choice((900, 1_500, 3_000)), keep_recent_turns=g.rng.randint(0, 3)
    )
    tl.begin_turn()
    tl.append(blocks.user_prompt("start"))
    for _ in range(g.rng.randint(6, 16)):
        for _ in range(g.rng.randint(1, 6)):
            g.step()
        if g.rng.random() < 0.3:
            tl.begin_turn()
            tl.append(blocks.user_prompt("next request " * g.rng.randint(5, 80)))
        tail = [blocks.note(f"volatile {g.n}")] if g.rng.random() < 0.2 else []
        try:
            view = tl.render("sys", force_sanitize=g.rng.random() < 0.1, tail=tail)
        except TimelineError:
            continue
        for incremental, scratch in FORMATS.values():
            assert outcome(incremental, view) == outcome(scratch, view)
    return tl


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_payloads_after_rebased_plans_equal_payloads_from_scratch(seed: int) -> None:
    """Payloads that move the kept messages behind a new summary (and every other payload
    of the session) equal the ones built from scratch in the three formats."""
    cache = compaction_session(seed).payload_cache
    target(float(cache.rebased_plans), label="rebased plans")


def test_most_compactions_move_the_kept_messages() -> None:
    """Over fixed seeds the rebased path is the common one after a compaction (so the
    property above exercises it), and its payloads equal the ones from scratch."""
    rebased = full = 0
    for seed in range(40):
        cache = compaction_session(seed).payload_cache
        rebased += cache.rebased_plans
        full += cache.full_plans
    assert rebased > 40
