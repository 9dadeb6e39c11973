"""Incremental payloads (#16 item 9): equal to the payloads built from scratch, built from
what changed, and safe to mutate at the top level."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from timeline_gen import _Gen

from timeline import CompactionPolicy, HeuristicCounter, RenderedContext, Timeline, blocks
from timeline.errors import TimelineError
from timeline.formats.anthropic import to_anthropic
from timeline.formats.openai import to_openai, to_openai_responses

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
        try:
            view = g.render()
        except TimelineError:
            continue
        for incremental, scratch in FORMATS.values():
            assert outcome(incremental, view) == outcome(scratch, view)


def agent_session(tl: Timeline, turns: int) -> list[RenderedContext]:
    views = []
    for t in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {t}: fix module {t}"))
        views.append(tl.render("sys"))
        call = tl.append(blocks.tool_call("read_file", {"path": f"m{t}.py"}))
        views.append(tl.render("sys"))
        tl.append(blocks.tool_result(call.call_id or "", f"source of m{t}"))
        views.append(tl.render("sys"))
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    return views


def test_an_append_plans_only_the_new_messages() -> None:
    """Without compaction, only the first two payloads (one message, no cut yet) plan the
    whole stream; every later one keeps the plan and items up to a cut near the end."""
    tl = Timeline(
        "inc", token_counter=HeuristicCounter(), policy=CompactionPolicy(max_tokens=10**6)
    )
    for view in agent_session(tl, 20):
        view.to_anthropic()
        view.to_openai()
    cache = tl.payload_cache
    assert (cache.full_plans, cache.partial_plans) == (2 * 2, 2 * (60 - 2))  # 2 providers


def test_mutating_a_payload_top_level_leaves_the_next_one_intact() -> None:
    """The payload dict and its lists are fresh each call: clearing, appending or
    replacing messages does not reach the next payload (the message dicts inside are
    shared, documented read-only)."""
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
        try:
            view = g.render()
        except TimelineError:
            continue
        for incremental, scratch in FORMATS.values():
            assert outcome(incremental, view) == outcome(scratch, view)


def test_a_compaction_builds_only_the_messages_that_changed() -> None:
    """After a compaction the plan is made again but the kept turns' messages take the
    items already built: only the summary's message and the new ones are built."""
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
        full, built = cache.full_plans, cache.built_messages
        payload = view.to_openai()
        assert payload == to_openai(view.system, view.blocks)
        if cache.full_plans > full and t > 5:  # a compaction request
            checked += 1
            # the summary's message + the four appended since the last render
            assert cache.built_messages - built <= 1 + 4 < len(payload) - 1
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    assert checked >= 3
    assert cache.reused_messages > 0
