"""Payloads the caller owns (#23 item 4): changing anything reachable from a returned
payload (a message, a content part, a tool input, a list) changes no other payload, later
or earlier, nor the blocks they were built from."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.samples import PNG_1x1
from tests.helpers.timeline_gen import _Gen
from timeline import CompactionPolicy, HeuristicCounter, RenderedContext, Timeline, blocks
from timeline._formats.anthropic import to_anthropic
from timeline._formats.openai import to_openai, to_openai_responses
from timeline._model.errors import TimelineError
from timeline._model.reasoning import anthropic_thinking, openai_reasoning

Build = Callable[[RenderedContext], Any]

FORMATS: dict[str, tuple[Build, Build]] = {
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

NESTED = {
    # keys holding a dict or list that the session's payloads must reach (so the
    # changes below go as deep as tool inputs, image sources and checkpoints)
    "anthropic": {"messages", "content", "input", "opts", "lines", "source", "cache_control"},
    "openai": {"content", "tool_calls", "function", "image_url"},
    "responses": {"content", "output", "summary"},
}


def vandalize(value: Any, mode: str, keys: set[str], key: str = "") -> None:
    """Change every dict and list reachable from ``value`` in place, innermost first:
    ``"edit"`` adds a key or an element and changes every string, ``"clear"`` empties
    them. ``keys`` collects the keys under which a dict or list was found."""
    if isinstance(value, dict):
        keys.add(key)
        for k, v in list(value.items()):
            vandalize(v, mode, keys, k)
            if isinstance(v, str) and mode == "edit":
                value[k] = v + " (changed)"
        if mode == "clear":
            value.clear()
        else:
            value["vandal"] = {"nested": [1]}
    elif isinstance(value, list):
        keys.add(key)
        for i, v in enumerate(list(value)):
            vandalize(v, mode, keys, key)
            if isinstance(v, str) and mode == "edit":
                value[i] = v + " (changed)"
        if mode == "clear":
            value.clear()
        else:
            value.append({"vandal": True})
    else:
        assert isinstance(value, str | int | float | bool | None), type(value)


def session() -> Iterator[RenderedContext]:
    """Renders of a session holding every nested shape a payload has: tool inputs with
    nested dicts and lists, images in prompts and tool results, thinking and reasoning,
    checkpoints, and compactions under a small budget."""
    tl = Timeline(
        "own",
        token_counter=HeuristicCounter(),
        policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=2),
    )
    for t in range(12):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {t}: " + "fix the module " * 20))
        if t % 4 == 0:
            tl.append(blocks.user_attachment(name="i.png", mime="image/png", data=PNG_1x1))
        yield tl.render("sys")
        thinking = {"type": "thinking", "thinking": f"plan {t}", "signature": "c2ln"}
        tl.append(anthropic_thinking(thinking))
        tl.append(openai_reasoning({"type": "reasoning", "id": f"rs_{t}", "summary": []}))
        params = {"path": f"m{t}.py", "opts": {"lines": [1, t]}}
        call = tl.append(blocks.tool_call("read_file", params))
        image = {"mime": "image/png", "data": PNG_1x1} if t % 3 == 0 else {}
        tl.append(blocks.tool_result(call.call_id or "", f"source of m{t}", **image))
        yield tl.render("sys")
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))


@pytest.mark.parametrize("mode", ["edit", "clear"])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_changing_a_payload_changes_no_other_payload(fmt: str, mode: str) -> None:
    """Every other payload is changed all through (every dict and list, tool inputs
    included) as soon as it is returned: the same view's payload again equals what the
    changed one was when returned (so neither the blocks nor anything the next payload
    is built from changed), every render's payload (after compactions too) equals the
    one the format builder makes of its blocks, and the payloads left alone still equal
    what they were when returned."""
    build, scratch = FORMATS[fmt]
    kept: list[tuple[Any, Any]] = []
    keys: set[str] = set()
    for i, view in enumerate(session()):
        payload = build(view)
        assert payload == scratch(view)
        when_returned = copy.deepcopy(payload)
        if i % 2:
            kept.append((payload, when_returned))
            continue
        vandalize(payload, mode, keys)
        assert build(view) == when_returned
    assert NESTED[fmt] <= keys
    for payload, when_returned in kept:
        assert payload == when_returned


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000), renders=st.integers(2, 8), mode=st.sampled_from(("edit", "clear"))
)
def test_changed_payloads_of_random_timelines_reach_no_other(
    seed: int, renders: int, mode: str
) -> None:
    """Over random timelines (hidden and pinned blocks, pending and parallel calls,
    compaction), each payload changed all through right after it is returned leaves the
    next payloads equal to the ones built from scratch."""
    g = _Gen(seed)
    g.tl.begin_turn()
    for _ in range(renders):
        for _ in range(g.rng.randint(1, 8)):
            g.step()
        try:
            view = g.render()
        except TimelineError:
            continue
        for build, scratch in FORMATS.values():
            try:
                expected = scratch(view)
            except TimelineError:
                continue
            payload = build(view)
            assert payload == expected
            vandalize(payload, mode, set())
            assert build(view) == expected
