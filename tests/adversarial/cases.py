"""The case type, the base timeline every API case starts from, and the recovery check."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs
import pytest

from tests.helpers.clock import FixedClock
from timeline import HeuristicCounter, Timeline, TimelineError, blocks

VALID: Any = None
"""``expect`` of a case that must succeed (its ``check`` says what the result is)."""

CID = "adv"


@attrs.frozen
class Case:
    """One bad input: what to run and the outcome it must have."""

    id: str
    run: Callable[..., object]
    expect: type[TimelineError] | None
    check: Callable[..., bool] | None = None
    """For a valid case: True when the result is right (it may assert inside, to say why)."""
    match: str | None = None
    """A piece the error message must contain (the field or path it names)."""

    @property
    def param(self) -> Any:
        kind = "valid" if self.expect is None else "typed"
        return pytest.param(self, id=f"{kind}-{self.id}")


def params(cases: Iterable[Case]) -> list[Any]:
    out = [c.param for c in cases]
    ids = [p.id for p in out]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return out


def new_tl(cid: str = CID) -> Timeline:
    return Timeline(cid, token_counter=HeuristicCounter(), clock=FixedClock())


def load(store: Any, cid: str = CID) -> Timeline:
    return Timeline.load(store, cid, token_counter=HeuristicCounter(), clock=FixedClock())


def base(store: Any, cid: str = CID) -> Timeline:
    """A committed conversation: one turn with a prompt, a tool call and its result."""
    tl = new_tl(cid)
    tl.begin_turn()
    tl.append(blocks.user_prompt("list the files"))
    tl.append(blocks.tool_call("ls", {"dir": "."}, call_id="call-1"))
    tl.append(blocks.tool_result("call-1", "a.py b.py"))
    tl.persist(store)
    return tl


def outcome(case: Case, run: Callable[[], object]) -> object:
    """Run ``run`` and assert the case's outcome; returns the result of a valid one."""
    if case.expect is None:
        return run()
    with pytest.raises(TimelineError) as info:
        run()
    assert type(info.value) is case.expect, f"{type(info.value).__name__}: {info.value}"
    if case.match is not None:
        assert case.match in str(info.value)
    return None


def recovers(tl: Timeline, store: Any, committed: Iterable[str]) -> None:
    """The next good append and persist succeed and nothing committed is lost."""
    tl.begin_turn()
    tl.append(blocks.user_prompt("after the bad input"))
    tl.persist(store)
    again = load(store, tl.conversation_id)
    assert [b.id for b in again.blocks] == [b.id for b in tl.blocks]
    logged = {b.id for b in store.turn_log(tl.conversation_id)}
    assert set(committed) <= logged
    assert again.render("sys").to_anthropic() == tl.render("sys").to_anthropic()
