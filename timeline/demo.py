"""``timeline demo``: a scripted coding-agent session through the real pipeline.

Render, compaction, cache checkpoints, overflow retry, persist-and-evict on the embedded
SQLite store, and memory_read over the archive; one line per turn and a closing table.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from timeline.driver import ReactDriver
from timeline.memory_tools import memory_read_tool
from timeline.policy import CompactionPolicy
from timeline.scripted import CodingSession, ScriptedModel, demo_tools
from timeline.timeline import Timeline

__all__ = ["DEMO_SYSTEM_PROMPT", "prefix_reuse", "run_demo"]

_RULES = (
    "Read a file before you edit it.",
    "Run the tests after every change and report failures verbatim.",
    "Never commit secrets or credentials.",
    "Prefer small, reviewable diffs over large rewrites.",
    "Keep the public API stable unless the user asks otherwise.",
    "Explain the root cause of a bug before fixing it.",
    "Use memory_read to recall work from earlier turns that is no longer in context.",
    "When a tool fails, read its error output before retrying.",
)
DEMO_SYSTEM_PROMPT = "You are a careful coding agent working in a Python repository.\n" + "\n".join(
    f"{i + 1}. {_RULES[i % len(_RULES)]} (rule set {i // len(_RULES) + 1})" for i in range(120)
)


def _strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def prefix_reuse(payloads: list[dict[str, Any]]) -> float:
    """Share of request characters (system + messages) that repeat the previous request's
    leading messages exactly: what a prefix cache could serve."""
    reused = total = 0
    prev: list[str] = []
    for payload in payloads:
        system = json.dumps(_strip_cache(payload.get("system", [])), sort_keys=True)
        msgs = [json.dumps(_strip_cache(m), sort_keys=True) for m in payload["messages"]]
        size = len(system) + sum(len(m) for m in msgs)
        total += size
        if prev:
            common = len(system)
            for a, b in zip(prev, msgs, strict=False):
                if a != b:
                    break
                common += len(b)
            reused += common
        prev = msgs
    return reused / total if total else 0.0


def run_demo(*, turns: int, max_tokens: int, db: str, seed: int) -> int:
    import index_store

    store = index_store.open(db if "://" in db else f"sqlite:///{db}")
    conversation = "demo"
    store.delete(conversation)
    session = CodingSession(seed)
    tl = Timeline(conversation, policy=CompactionPolicy(max_tokens=max_tokens))
    model = ScriptedModel(
        session, context_window=max_tokens, overflow_at=frozenset({25}), usage_overhead=350
    )
    tools = demo_tools(seed, memory=memory_read_tool(store, conversation))
    driver = ReactDriver(tl, model, tools, system=DEMO_SYSTEM_PROMPT, store=store)
    print(f"timeline demo: {turns} turns, budget {max_tokens:,} tokens, store {store.url}")
    print(
        f"{'turn':>4} {'prompt':>8} {'budget':>6} {'steps':>5} {'compact':>7} {'retry':>5} "
        f"{'ckpts':>5} {'window':>6} {'archived':>8}"
    )
    started = time.perf_counter()
    compactions = retries = 0
    peak = 0
    for t in range(turns):
        result = driver.run_turn(session.prompt(t))
        compactions += len(result.compactions)
        retries += result.overflow_retries
        view = tl.render(DEMO_SYSTEM_PROMPT)
        peak = max(peak, max(model.sent_tokens[-result.steps - result.overflow_retries :]))
        archived = len(store.turn_log(conversation))
        print(
            f"{t + 1:>4} {view.tokens:>8,} {view.tokens / max_tokens:>6.0%} {result.steps:>5} "
            f"{len(result.compactions):>7} {result.overflow_retries:>5} "
            f"{len(view.cache_points) + 1:>5} {len(tl.blocks):>6} {archived:>8}"
        )
    elapsed = time.perf_counter() - started
    size = store.size_bytes() if hasattr(store, "size_bytes") else 0
    hits = store.search(conversation, "connection leak", limit=1)
    rows = [
        ("turns", f"{turns}"),
        ("model calls", f"{model.calls}"),
        ("compactions", f"{compactions}"),
        ("overflow retries", f"{retries}"),
        ("largest request", f"{peak:,} tokens (budget {max_tokens:,})"),
        (
            "blocks archived",
            f"{len(store.turn_log(conversation)):,} in the turn log, "
            f"{len(store.summaries(conversation))} summaries",
        ),
        ("blocks in memory", f"{len(tl.blocks)}"),
        ("prefix reuse", f"{prefix_reuse(model.received):.1%} of request characters"),
        ("store size", f"{size / 1024:,.0f} KiB ({os.path.basename(db)})"),
        ("search 'connection leak'", hits[0].path if hits else "no hits"),
        ("elapsed", f"{elapsed:.2f}s"),
    ]
    width = max(len(k) for k, _ in rows)
    print()
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    store.close()
    return 0
