"""The same session and budget through block-timeline and its peers, side by side."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

from benchmarks._util import median, p95
from benchmarks.evaluate import Evaluator
from benchmarks.peer_strategies import Strands, Summarize, Trim, Unbounded
from benchmarks.session import SYSTEM_PROMPT, Event, generate, is_request_point
from benchmarks.strategies import Ours

PLAIN_TRIM_SAMPLE = 20
"""trim_messages with a plain counter re-tokenizes the whole history on every call
(~0.3-1.2 s a call here); it is timed on every 20th request. Its output equals the
memoized variant's, which is scored on every request."""


def feed(strategy: Any, events: list[Event], keep: bool = True) -> list[Any]:
    requests = []
    for e in events:
        strategy.add(e)
        if is_request_point(e):
            parts = strategy.request()
            if keep and parts is not None:
                requests.append(parts)
    return requests


def feed_together(strategies: list[Any], events: list[Event]) -> list[list[Any]]:
    """:func:`feed` for several strategies in lockstep: each event goes to all of them, and
    at each request point they are timed one after the other, the first one rotating, so a
    burst of load on a shared machine hits them alike."""
    requests: list[list[Any]] = [[] for _ in strategies]
    n = 0
    for e in events:
        for strategy in strategies:
            strategy.add(e)
        if is_request_point(e):
            for j in range(len(strategies)):
                i = (n + j) % len(strategies)
                parts = strategies[i].request()
                if parts is not None:
                    requests[i].append(parts)
            n += 1
    return requests


def compare(turns: int, budget: int, seed: int) -> list[dict[str, Any]]:
    events = [e for e in generate(turns, seed)]
    appended = len(SYSTEM_PROMPT) + sum(len(e.text) for e in events)
    evaluator = Evaluator(budget)
    makers: list[Callable[[], Any]] = [
        lambda: Ours(budget, check_payloads=False),  # checked in a pass of its own below
        lambda: Ours(budget, with_payload=True, name="block-timeline incl. to_anthropic()"),
        lambda: Ours(budget, counter_backend="tiktoken", name="block-timeline (tiktoken counter)"),
        lambda: Trim(budget, memoized=True),
        lambda: Trim(budget, memoized=False, sample_every=PLAIN_TRIM_SAMPLE),
        lambda: Summarize(budget, memoized=False),
        lambda: Summarize(budget, memoized=True),
        Strands,
        Unbounded,
    ]
    # the two whose ratios are the goals (ours and SummarizationMiddleware, memoized) run
    # in lockstep; the others each on its own, as before
    together = [0, 6]
    strategies = [make() for make in makers]
    fed = dict(zip(together, feed_together([strategies[i] for i in together], events), strict=True))
    checked = Ours(budget)  # the same requests again, untimed: every payload format counted
    feed(checked, events, keep=False)
    rows = []
    scored: dict[str, dict[str, float]] = {}
    for index, strategy in enumerate(strategies):
        requests = fed[index] if index in fed else feed(strategy, events)
        key = strategy.name.replace("plain", "memoized")
        if len(requests) > len(events) // 4:
            scored[key] = scores = evaluator.score(requests)
        else:
            scores = scored.get(key, {})  # sampled: identical output to the memoized run
        summary_in, summary_out = strategy.summarizer_tokens()
        sampled = PLAIN_TRIM_SAMPLE if getattr(strategy, "sample_every", 1) > 1 else 1
        rows.append(
            {
                "name": strategy.name,
                "median": median(strategy.times),
                "p95": p95(strategy.times),
                "total": sum(strategy.times) * sampled,
                "tokenizer_work": (sampled * strategy.chars_tokenized / appended)
                if strategy.chars_tokenized
                else None,
                "summary_in": summary_in,
                "summary_out": summary_out,
                "payload_over": checked.payload_over if index == 0 else None,
                "payload_max": checked.payload_max if index == 0 else None,
                **scores,
            }
        )
    return rows


def _window(
    make: Callable[[], Any], stateful: bool, events: list[Event], window: tuple[int, int]
) -> Iterator[float]:
    """One strategy driven through ``events`` up to the end of ``window`` (turns
    ``[a, b)``), yielding the time of each request inside it. Before the window a stateful
    strategy is asked at every request point, untimed, as an agent would; the others only
    inside it. trim_messages with a plain counter is timed on every 5th request."""
    strategy = make()
    a, b = window
    plain_trim = not stateful and "plain" in strategy.name
    seen = 0
    for e in events:
        if e.turn >= b:
            return
        strategy.add(e)
        if not is_request_point(e) or (e.turn < a and not stateful):
            continue
        seen += 1
        if plain_trim and seen % 5:
            continue
        before = len(strategy.times)
        strategy.request()
        if e.turn >= a and len(strategy.times) > before:
            yield strategy.times[-1]


def growth(budget: int, seed: int, early: int = 100, late: int = 600) -> list[dict[str, Any]]:
    """Median context-management time in the 10 turns before turn 100 and turn 600. The
    two windows run on two instances of each strategy, one timed request of each in turn
    (the first alternating), so a change in the shared machine's speed meets both alike;
    timed one after the other, minutes apart, the ratio of the same code ranged from 0.6x
    to 1.6x here."""
    events = list(generate(late, seed))
    rows = []
    makers: list[tuple[Callable[[], Any], bool]] = [
        (lambda: Ours(budget), True),
        (lambda: Summarize(budget, memoized=True), True),
        (lambda: Summarize(budget, memoized=False), True),
        (lambda: Trim(budget, memoized=True), False),
        (lambda: Trim(budget, memoized=False), False),
        (Strands, True),
    ]
    for make, stateful in makers:
        windows = {
            "early": _window(make, stateful, events, (early - 10, early)),
            "late": _window(make, stateful, events, (late - 10, late)),
        }
        samples: dict[str, list[float]] = {"early": [], "late": []}
        turn = 0
        while windows:
            order = list(windows) if turn % 2 == 0 else list(reversed(windows))
            for name in order:
                took = next(windows[name], None)
                if took is None:
                    del windows[name]
                else:
                    samples[name].append(took)
            turn += 1
        e_med, l_med = median(samples["early"]), median(samples["late"])
        rows.append(
            {
                "name": make().name,
                "early": e_med,
                "late": l_med,
                "ratio": l_med / e_med if e_med else float("nan"),
            }
        )
    return rows


def memory(
    budget: int, seed: int, checkpoints: tuple[int, ...] = (150, 300, 600)
) -> dict[str, Any]:
    """Peak traced Python memory of our timeline over the first N turns (everything the
    session allocated, transient render and persist work included), with and without
    persist-and-evict at every turn end."""
    import tempfile
    from pathlib import Path

    import index_store

    out: dict[str, Any] = {}
    for evict in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            store = index_store.open(f"sqlite:///{Path(tmp) / 'm.db'}") if evict else None
            tracemalloc.start()
            ours = Ours(budget, check_payloads=False)
            held = {}
            last_turn = -1
            for e in generate(max(checkpoints), seed):
                if e.turn != last_turn:
                    if last_turn >= 0:
                        if store is not None:
                            ours.tl.persist(store)
                        if last_turn + 1 in checkpoints:
                            held[last_turn + 1] = tracemalloc.get_traced_memory()[1]
                    last_turn = e.turn
                ours.add(e)
                if is_request_point(e):
                    ours.request()
                    ours.times.clear()  # harness state, not the timeline's
            if store is not None:
                ours.tl.persist(store)
            held[max(checkpoints)] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            out["evict" if evict else "in-memory"] = held
            if store is not None:
                store.close()
    return out


def run(turns: int = 300, budget: int = 32_000, seed: int = 0) -> dict[str, Any]:
    started = time.perf_counter()
    result = {
        "turns": turns,
        "budget": budget,
        "compare": compare(turns, budget, seed),
        "growth": growth(budget, seed),
        "memory": memory(budget, seed),
    }
    result["seconds"] = time.perf_counter() - started
    return result
