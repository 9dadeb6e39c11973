"""Rule 8 (built in #15, checked here): forced retries always shrink. Each
``render(force_sanitize=True)`` in a row renders strictly fewer tokens than the one
before, until nothing more can go: then a BudgetError, never the same size again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from index_store import MemoryStore
from tests.adversarial.cases import load
from tests.helpers.clock import FixedClock
from timeline import (
    BudgetError,
    CompactionPolicy,
    HeuristicCounter,
    Timeline,
    TimelineError,
    blocks,
)


def _tl(max_tokens: int = 20_000) -> Timeline:
    policy = CompactionPolicy(max_tokens=max_tokens, keep_recent_turns=1)
    return Timeline("adv", policy=policy, token_counter=HeuristicCounter(), clock=FixedClock())


def _turns(n: int, chars: int) -> Callable[[Timeline], None]:
    def build(tl: Timeline) -> None:
        for i in range(n):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"task {i} " + "p" * chars))
            c = tl.append(blocks.tool_call("read", {"f": f"{i}.py"}))
            tl.append(blocks.tool_result(c.call_id or "", f"out {i} " + "o" * chars))
            tl.append(blocks.assistant_completion(f"done {i}"))

    return build


def _one_huge_result(tl: Timeline) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt("read the log"))
    c = tl.append(blocks.tool_call("cat", {"f": "log"}))
    tl.append(blocks.tool_result(c.call_id or "", "line\n" * 20_000))


def _one_huge_prompt(tl: Timeline) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt("q" * 60_000))


def _pinned(tl: Timeline) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt("rule: " + "r" * 2_000), pin=True)
    _turns(12, 1_500)(tl)


def _hidden(tl: Timeline) -> None:
    _turns(12, 1_500)(tl)
    tl.hide([b.path for b in tl.blocks if b.type == "react.tool.result"][:6], "(hidden)")


def _many_small(tl: Timeline) -> None:
    _turns(200, 40)(tl)


SHAPES: dict[str, tuple[Callable[[Timeline], None], str, list[Any]]] = {
    "many-turns": (_turns(20, 2_000), "sys", []),
    "many-small-turns": (_many_small, "sys", []),
    "one-huge-tool-result": (_one_huge_result, "sys", []),
    "one-huge-prompt": (_one_huge_prompt, "sys", []),
    "pinned-rule": (_pinned, "sys", []),
    "hidden-results": (_hidden, "sys", []),
    "big-system-prompt": (_turns(10, 1_500), "s" * 12_000, []),
    "big-tail": (_turns(10, 1_500), "sys", [blocks.note("t" * 12_000)]),
}


@pytest.mark.parametrize("name", [pytest.param(n, id=f"typed-force-sanitize-{n}") for n in SHAPES])
def test_forced_retries_shrink_until_budget_error(name: str) -> None:
    """Strictly fewer tokens on every forced render, then BudgetError; the conversation
    still persists and loads afterwards."""
    build, system, tail = SHAPES[name]
    store = MemoryStore()
    tl = _tl()
    build(tl)
    tl.persist(store)
    sizes = [tl.estimate(system, tail)]
    with pytest.raises(TimelineError) as info:
        for _ in range(200):
            sizes.append(tl.render(system, force_sanitize=True, tail=tail).tokens)
            assert sizes[-1] < sizes[-2], sizes
    assert isinstance(info.value, BudgetError), f"{type(info.value).__name__}: {info.value}"
    assert len(sizes) < 200
    tl.begin_turn()
    tl.append(blocks.user_prompt("after the retries"))
    tl.persist(store)
    assert [b.id for b in load(store).blocks] == [b.id for b in tl.blocks]
