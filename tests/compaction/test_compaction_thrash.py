"""No thrash: a compaction leaves the prompt near ``keep_ratio`` of the budget whatever
the protections say, so compactions come at most once per
``(trigger_ratio - keep_ratio) x budget`` of new content."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import index_store
from timeline import Block, CompactionPolicy, HeuristicCounter, Timeline, blocks

SUMMARY = "conv.range.summary"
WORDS = [f"w{i}" for i in range(3_000)]


@dataclass
class Tally:
    """New content appended, and the content total at each compaction."""

    appended: int = 0
    at_compaction: list[int] = field(default_factory=list)
    after: list[int] = field(default_factory=list)
    largest: list[int] = field(default_factory=list)
    """The largest block each compaction kept (a result too big to leave room may bring
    the next compaction early: it is paid for by its size)."""


def _add(tl: Timeline, tally: Tally, block: Block, *, pin: bool = False) -> Block:
    stored = tl.append(block, pin=pin)
    tally.appended += tl.block_tokens(stored)
    return stored


def _render(tl: Timeline, tally: Tally) -> None:
    view = tl.render("You are a helpful assistant.")
    stats = view.compaction
    if stats is not None and stats.skipped is None:
        tally.at_compaction.append(tally.appended)
        tally.after.append(stats.tokens_after or 0)
        stable = view.blocks[: view.stable_count]
        kept = [tl.block_tokens(tl.get(b.id)) for b in stable if b.type != SUMMARY]
        tally.largest.append(max(kept, default=0))  # whole, not as truncated for the view
    assert view.budget is not None and view.tokens <= view.budget


def _chat(seed: int, policy: CompactionPolicy, messages: int, per_turn: int) -> Tally:
    """Two people talking, ``per_turn`` utterances a turn, a render after each."""
    rng = random.Random(seed)
    tl = Timeline("chat", policy=policy)
    tally = Tally()
    for i in range(messages):
        if i % per_turn == 0:
            _add(tl, tally, blocks.turn_header())
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
        if i % 2:
            _add(tl, tally, blocks.user_prompt(f"Caroline: {words}"))
        else:
            _add(tl, tally, blocks.assistant_completion(f"Melanie: {words}"))
        _render(tl, tally)
    return tally


def _gap(policy: CompactionPolicy) -> float:
    budget = policy.budget or 0
    return (policy.trigger_ratio - policy.keep_ratio) * budget


def test_a_long_chat_compacts_once_per_keep_share_of_new_content() -> None:
    """A chat whose turns (20 utterances each) are larger than the default six recent
    turns can keep at 4,000 tokens compacts once per (trigger - keep) x budget of new
    content, each time back to about keep_ratio of the budget, never every few messages."""
    policy = CompactionPolicy(max_tokens=4_000)
    tally = _chat(0, policy, messages=400, per_turn=20)
    compactions = len(tally.at_compaction)
    assert compactions >= 2
    new = tally.at_compaction[-1] - tally.at_compaction[0]
    assert compactions - 1 <= new / (0.9 * _gap(policy))
    assert max(tally.after) <= 0.75 * 4_000


def test_follow_ups_that_do_not_fit_are_left_to_the_summary() -> None:
    """Prompts sent while the running turn had tool calls are carried past every summary;
    when they fill what a compaction keeps verbatim, the oldest are carried no more (the
    summary covers them): the prompt goes back to about keep_ratio and the compactions
    stay (trigger - keep) x budget of new content apart. The newest follow-up stays
    visible, and a snapshot restored or a window loaded carries the same blocks."""
    policy = CompactionPolicy(max_tokens=2_000, keep_ratio=0.7, trigger_ratio=1.0)
    rng = random.Random(1)
    tl = Timeline("f", policy=policy, token_counter=HeuristicCounter())
    tally = Tally()
    _add(tl, tally, blocks.turn_header())
    call = _add(tl, tally, blocks.tool_call("bash", {"cmd": "make"}))
    _add(tl, tally, blocks.tool_result(call.call_id or "", "ok", tool_id="bash"))
    newest = ""
    for i in range(120):
        words = " ".join(rng.choice(WORDS) for _ in range(30))
        if i % 3:
            newest = _add(tl, tally, blocks.user_prompt(f"also: {words}")).id
        else:
            _add(tl, tally, blocks.assistant_completion(words))
        _render(tl, tally)
        assert not newest or newest in tl.carried_ids
    at = tally.at_compaction
    assert len(at) >= 3
    assert all(b - a >= 0.9 * _gap(policy) for a, b in pairwise(at))
    assert max(tally.after) <= 0.75 * 2_000
    shown = {b.id for b in tl.render("You are a helpful assistant.").blocks}
    assert tl.carried_ids <= shown
    again = Timeline("f", policy=policy, token_counter=HeuristicCounter())
    again.restore(tl.snapshot())
    assert again.carried_ids == tl.carried_ids
    store = index_store.open("memory://")
    tl.persist(store)
    loaded = Timeline.load(store, "f", policy=policy, token_counter=HeuristicCounter())
    assert loaded.carried_ids == tl.carried_ids


KINDS = ("turn",) + ("say",) * 12 + ("small",) * 3 + ("tool",) * 3 + ("huge", "pin")
"""Events, as often as they come: long turns of messages, tool results, now and then a
huge one, and a few pinned notes."""
SIZES = {
    "turn": (1, 60),  # a new turn and its prompt (words)
    "say": (1, 60),  # a message by the user or the assistant (words)
    "small": (1, 6),
    "tool": (0, 400),  # a call and its result (tokens)
    "huge": (1_000, 6_000),
    "pin": (1, 30),  # a short pinned note (words)
}
EVENTS = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(0, 10_000)), min_size=100, max_size=300
)


def _play(tl: Timeline, tally: Tally, events: list[tuple[str, int]], rng: random.Random) -> None:
    pins = 0
    _add(tl, tally, blocks.turn_header())
    for kind, draw in events:
        low, high = SIZES[kind]
        size = low + draw % (high - low + 1)
        text = " ".join(rng.choice(WORDS) for _ in range(size))
        if kind == "turn":
            _add(tl, tally, blocks.turn_header())
            _add(tl, tally, blocks.user_prompt(text))
        elif kind in ("say", "small"):
            make: Any = rng.choice((blocks.user_prompt, blocks.assistant_completion))
            _add(tl, tally, make(text))
        elif kind in ("tool", "huge"):
            call = _add(tl, tally, blocks.tool_call("bash", {"cmd": text[:40]}))
            out = "r" * size * 4  # about `size` tokens
            _add(tl, tally, blocks.tool_result(call.call_id or "", out, tool_id="bash"))
        elif pins < 3:
            pins += 1
            _add(tl, tally, blocks.note(text), pin=True)
        _render(tl, tally)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=EVENTS,
    budget=st.integers(2_000, 8_000),
    ratios=st.sampled_from([(0.5, 0.8), (0.6, 0.9), (0.7, 0.9), (0.7, 1.0), (0.5, 1.0)]),
    recent=st.integers(0, 8),
    seed=st.integers(0, 1_000),
)
def test_compactions_are_spaced_by_new_content(
    events: list[tuple[str, int]],
    budget: int,
    ratios: tuple[float, float],
    recent: int,
    seed: int,
) -> None:
    """Over random sessions (long turns, many small blocks, huge tool results, pins), a
    compaction comes at least (trigger - keep) x budget of new content after the one
    before it (a tenth of slack for cuts that fall between blocks; a block too big to
    leave room after a compaction may bring the next one early, paid for by its size)."""
    keep, trigger = ratios
    policy = CompactionPolicy(
        max_tokens=budget, keep_ratio=keep, trigger_ratio=trigger, keep_recent_turns=recent
    )
    tl = Timeline("p", policy=policy, token_counter=HeuristicCounter())
    tally = Tally()
    _play(tl, tally, events, random.Random(seed))
    at = tally.at_compaction
    for k in range(1, len(at)):
        new = at[k] - at[k - 1]
        assert new + tally.largest[k - 1] >= 0.9 * _gap(policy), (k, at, tally.after)
