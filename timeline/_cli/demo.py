"""``timeline demo``: a scripted coding-agent session through the real pipeline.

Render, compaction, cache checkpoints, overflow retry, persist-and-evict on the embedded
SQLite store, and memory_read over the archive; one line per turn and a closing table.
"""

from __future__ import annotations

import json
import os
import shlex
import textwrap
import time
from typing import Any, cast

import attrs

from index_store import shown_dsn
from timeline import blocks
from timeline._cli.output import printable
from timeline._cli.words import plural
from timeline._compaction import CompactionPolicy
from timeline._core import Timeline
from timeline._driver import (
    DEMO_TOOL_SPECS,
    CodingSession,
    ReactDriver,
    ScriptedModel,
    demo_tools,
    memory_read_tool,
)
from timeline._model import CONV_RANGE_SUMMARY, USER_PROMPT, TimelineError

__all__ = [
    "DEMO_SOURCE",
    "DEMO_SYSTEM_PROMPT",
    "HTML_PAGE",
    "created_by_demo",
    "next_commands",
    "prefix_reuse",
    "run_demo",
]

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


DEMO_SOURCE = "timeline demo"
"""``meta["source"]`` of the demo's user prompts: how the demo knows a conversation is its own."""


def created_by_demo(store: Any, conversation: str) -> bool:
    """The stored conversation's first user prompt was written by the demo."""
    for block in store.turn_log(conversation):
        if block.type == USER_PROMPT:
            return bool(block.meta.get("source") == DEMO_SOURCE)
    return False


HTML_PAGE = "timeline-demo.html"
"""The page the demo suggests writing (``--force`` is suggested when it exists)."""


def next_commands(conversation: str, db: str, program: str = "timeline") -> list[str]:
    """What to try after the demo, each runnable as printed from the same directory:
    ``program`` is how the CLI was started (:func:`~timeline._cli.output.invoked_as`)."""
    ref = f"{shlex.quote(conversation)} --db {shlex.quote(db)}"
    force = " --force" if os.path.lexists(HTML_PAGE) else ""
    return [
        f"{program} inspect {ref}",
        f"{program} search {ref} 'connection leak'",
        f"{program} render {ref} --format text",
        f"{program} inspect {ref} --html {HTML_PAGE}{force}",
        f"{program} list --db {shlex.quote(db)}",
    ]


def run_demo(
    *,
    turns: int,
    max_tokens: int,
    db: str,
    seed: int,
    conversation: str = "demo",
    force: bool = False,
    program: str = "timeline",
) -> int:
    """Run the scripted session into ``conversation`` (replacing it only when the demo wrote
    it, or with ``force``); prints a line per turn, a closing table and what to try next
    (commands starting with ``program``)."""
    import index_store
    from timeline._cli.output import progress

    store = index_store.open(db)
    try:
        exists = store.load_window(conversation) is not None
        if exists and not force and not created_by_demo(store, conversation):
            raise TimelineError(
                f"conversation {conversation!r} in {db} was not created by the demo; "
                "pass --force to replace it, or choose another --conversation or --db"
            )
        store.delete(conversation)
        _run(store, turns, max_tokens, db, seed, conversation, progress)
        version = store.load_window(conversation)
    finally:
        store.close()
    print(
        f"wrote conversation {printable(repr(conversation))} to {printable(db)} "
        f"(version {version[0] if version else 0}); try next:"
    )
    for command in next_commands(conversation, db, program):
        print(f"  {printable(command)}")
    return 0


@attrs.define
class _Totals:
    """What the turns added up to, for the closing table."""

    compactions: int = 0
    retries: int = 0
    peak: int = 0


@attrs.define
class _Counting:
    """The store, counting the blocks each commit adds to the turn log: the per-turn
    'evicted' column without reading the whole turn log back every turn (which made
    the demo quadratic in its turns)."""

    store: Any
    archived: int = 0

    def commit(self, conversation_id: str, **kwargs: Any) -> int:
        version: int = self.store.commit(conversation_id, **kwargs)
        self.archived += len(kwargs["log"])
        return version

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _run(
    store: Any,
    turns: int,
    max_tokens: int,
    db: str,
    seed: int,
    conversation: str,
    progress: Any,
) -> None:
    session = CodingSession(seed)
    tl = Timeline(conversation, policy=CompactionPolicy(max_tokens=max_tokens))
    model = ScriptedModel(
        session, context_window=max_tokens, overflow_at=frozenset({25}), usage_overhead=350
    )
    tools = demo_tools(seed, memory=memory_read_tool(store, conversation))
    counting = _Counting(store)
    driver = ReactDriver(tl, model, tools, system=DEMO_SYSTEM_PROMPT, store=cast(Any, counting))
    _print_header(turns, max_tokens, conversation, shown_dsn(store.url))
    started = time.perf_counter()
    totals = _Totals()
    with progress("demo turns", turns) as advance:
        for t in range(turns):
            _run_turn(t, session, driver, model, counting, max_tokens, totals)
            advance(1)
    elapsed = time.perf_counter() - started
    _print_table(_closing_rows(store, tl, model, totals, turns, max_tokens, db, elapsed))


PATHS = (
    "where a block lives: ar:<turn>.<type> a message or note, "
    "tc:<turn>.tool_calls.<call>.in.json a tool call (.out.json its result), "
    "su:<turn>.conv.range.summary a summary"
)
"""What the path prefixes mean, the first time the demo shows a path."""

COLUMNS = (
    "request = the largest request sent to the model in the turn, in tokens as the model "
    "counted them; budget = its share of the budget; steps = model calls; compact = "
    "compactions; retry = retries after the model said the prompt was too long; ckpts = "
    "prompt-cache checkpoints of the next request (the tools' and the system prompt's "
    "included); window = "
    "blocks in the live window, the next prompt's source; evicted = blocks moved out of the "
    "window into the store, where search finds them"
)
"""The legend of the per-turn table, printed above it."""


def _print_header(turns: int, max_tokens: int, conversation: str, url: str) -> None:
    print(
        f"timeline demo: {plural(turns, 'turn')}, budget {max_tokens:,} tokens, "
        f"conversation {printable(repr(conversation))}, store {printable(url)}"
    )
    print(textwrap.fill(COLUMNS, width=100))
    print(
        f"{'turn':>4} {'request':>8} {'budget':>6} {'steps':>5} {'compact':>7} {'retry':>5} "
        f"{'ckpts':>5} {'window':>6} {'evicted':>8}"
    )


def _run_turn(
    t: int,
    session: CodingSession,
    driver: ReactDriver,
    model: ScriptedModel,
    store: _Counting,
    max_tokens: int,
    totals: _Totals,
) -> None:
    """One scripted turn through the driver, and its line of the per-turn table."""
    tl = driver.timeline
    prompt = blocks.user_prompt(session.prompt(t), source=DEMO_SOURCE)
    result = driver.run_turn(prompt)
    totals.compactions += len(result.compactions)
    totals.retries += result.overflow_retries
    view = tl.render(DEMO_SYSTEM_PROMPT, tools=DEMO_TOOL_SPECS)  # the next request's
    largest = max(model.sent_tokens[-result.steps - result.overflow_retries :])
    totals.peak = max(totals.peak, largest)
    print(
        f"{t + 1:>4} {largest:>8,} {largest / max_tokens:>6.0%} {result.steps:>5} "
        f"{len(result.compactions):>7} {result.overflow_retries:>5} "
        f"{len(view.cache_points) + 2:>5} {len(tl.blocks):>6} {_evicted(tl, store):>8}"
    )


def _evicted(tl: Timeline, store: _Counting) -> int:
    """Blocks only in the store: every block it logged but those still in the window
    (the window's summary is not a logged block)."""
    in_window = sum(1 for b in tl.blocks if b.type != CONV_RANGE_SUMMARY)
    return store.archived - in_window


def _closing_rows(
    store: Any,
    tl: Timeline,
    model: ScriptedModel,
    totals: _Totals,
    turns: int,
    max_tokens: int,
    db: str,
    elapsed: float,
) -> list[tuple[str, str]]:
    conversation = tl.conversation_id
    size = store.size_bytes() if hasattr(store, "size_bytes") else 0
    logged = len(store.turn_log(conversation))
    evicted = logged - sum(1 for b in tl.blocks if b.type != CONV_RANGE_SUMMARY)
    hits = store.search(conversation, "connection leak", limit=1)
    return [
        ("turns", f"{turns}"),
        ("model calls", f"{model.calls}"),
        ("compactions", f"{totals.compactions}"),
        ("overflow retries", f"{totals.retries}"),
        (
            "largest request",
            f"{totals.peak:,} tokens (budget {max_tokens:,}): the largest 'request' above",
        ),
        (
            "blocks",
            f"{logged:,} ({evicted:,} evicted to the store) and "
            f"{plural(len(store.summaries(conversation)), 'summary', 'summaries')}",
        ),
        ("window", plural(len(tl.blocks), "block")),
        ("prefix reuse", f"{prefix_reuse(model.received):.1%} of request characters"),
        ("store size", f"{size / 1024:,.0f} KiB ({os.path.basename(db)})"),
        ("search 'connection leak'", hits[0].path if hits else "no hits"),
        ("paths", PATHS),
        ("elapsed", f"{elapsed:.2f}s"),
    ]


def _print_table(rows: list[tuple[str, str]]) -> None:
    """Key and value a line, long values wrapped under the value column."""
    width = max(len(k) for k, _ in rows)
    indent = " " * (width + 4)
    print()
    for key, value in rows:
        lines = textwrap.wrap(value, 100 - len(indent)) or [""]
        print(f"  {key:<{width}}  {lines[0]}")
        for line in lines[1:]:
            print(f"{indent}{line}")
    print()
