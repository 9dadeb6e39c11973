"""Shared fixtures: deterministic clock, counting token counter, timeline factory, stores."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.clock import FixedClock
from tests.helpers.stores import STORE_KINDS, open_store
from timeline import HeuristicCounter, Timeline

# Hypothesis profiles (docs/testing.md). Under CI (the CI variable set, as .ci/run does)
# every property test is deterministic and writes no example database, so it can never
# make CI flaky: the same examples every run, no timing health check or deadline.
# BT_HYPOTHESIS_PROFILE=long runs LONG_SCALE times the examples of every property test
# (its own max_examples included) with fresh random examples.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("long", deadline=None, suppress_health_check=[HealthCheck.too_slow])
# `pytest --hypothesis-profile=mutation` (the mutation run, docs/testing.md): code under
# mutmut's trampolines runs several times slower, so no deadline, and every run of a test
# draws the same examples, so a mutant is killed by what it breaks, not by the draw.
settings.register_profile("mutation", deadline=None, derandomize=True, database=None)
PROFILE = os.environ.get("BT_HYPOTHESIS_PROFILE") or (
    "mutation"  # mutmut marks the processes that run a mutant
    if "MUTANT_UNDER_TEST" in os.environ
    else "ci"
    if os.environ.get("CI")
    else "default"
)
settings.load_profile(PROFILE)
LONG_SCALE = int(os.environ.get("BT_HYPOTHESIS_SCALE", "20"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``long`` profile: every property test runs LONG_SCALE times its examples
    (state machines also twice their steps), its own ``@settings`` included."""
    if PROFILE != "long":
        return
    done: set[int] = set()  # parametrized items share one test function
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if isinstance(current, settings) and id(test) not in done:
            done.add(id(test))  # @given reads its settings from the wrapper at run time
            scaled = settings(current, max_examples=current.max_examples * LONG_SCALE)
            test._hypothesis_internal_use_settings = scaled  # type: ignore[union-attr]
        cls = getattr(item, "cls", None)
        machine = getattr(cls, "settings", None)
        if isinstance(machine, settings) and id(cls) not in done:
            done.add(id(cls))  # a state machine's TestCase
            cls.settings = settings(  # type: ignore[union-attr]
                machine,
                max_examples=machine.max_examples * LONG_SCALE,
                stateful_step_count=2 * machine.stateful_step_count,
            )


@pytest.fixture
def make_tl() -> Callable[..., Timeline]:
    def make(conversation_id: str = "c1", **kw: Any) -> Timeline:
        kw.setdefault("clock", FixedClock())
        kw.setdefault("token_counter", HeuristicCounter())
        return Timeline(conversation_id, **kw)

    return make


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    s = open_store(request.param, tmp_path)
    yield s
    s.close()
