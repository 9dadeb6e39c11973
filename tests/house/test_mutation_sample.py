"""scripts/mutation_sample.py: the seeded draw, the checked prefix and the Wilson interval
(the parts that decide the published estimate; the mutmut run itself is not run here)."""

from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def sample() -> ModuleType:
    path = Path(__file__).resolve().parent.parent.parent / "scripts" / "mutation_sample.py"
    spec = importlib.util.spec_from_file_location("mutation_sample", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_sample"] = module
    spec.loader.exec_module(module)
    return module


def test_wilson_matches_published_values(sample: ModuleType) -> None:
    # Wilson 95% intervals as tabulated (Newcombe 1998, e.g. 81/263 -> 0.2553-0.3662)
    low, high = sample.wilson(81, 263)
    assert round(low, 4) == 0.2553 and round(high, 4) == 0.3662
    low, high = sample.wilson(0, 10)
    assert low == 0.0 and round(high, 4) == 0.2775
    low, high = sample.wilson(10, 10)
    assert round(low, 4) == 0.7225 and round(high, 9) == 1.0
    assert sample.wilson(0, 0) == (0.0, 1.0)


def test_draw_is_uniform_without_replacement_and_repeatable(sample: ModuleType) -> None:
    names = [f"timeline._core.m.x_f__mutmut_{i}" for i in range(50)]
    first = sample.draw(names, 10, seed=7)
    assert first == sample.draw(list(reversed(names)), 10, seed=7)
    assert len(set(first)) == 10 and set(first) <= set(names)
    assert first != sample.draw(names, 10, seed=8)
    assert sorted(sample.draw(names, 80, seed=7)) == sorted(names)


def test_checked_prefix_stops_at_the_first_unfinished(sample: ModuleType) -> None:
    order = ["a", "b", "c", "d"]
    status = {"a": "killed", "b": "survived", "c": "not checked", "d": "killed"}
    assert sample.checked_prefix(order, status) == 2
    status["c"] = "check was interrupted by user"
    assert sample.checked_prefix(order, status) == 2
    status["c"] = "timeout"
    assert sample.checked_prefix(order, status) == 4


def test_subpackage_of_a_mutant_name(sample: ModuleType) -> None:
    assert sample.subpackage("timeline._core.persist.x_apersist__mutmut_3") == "core"
    name = "timeline._state.ledger.xǁLedgerǁwindow__mutmut_7"
    assert sample.subpackage(name) == "state"


def test_the_deadline_works_when_started_with_sigint_ignored(sample: ModuleType) -> None:
    """A background job of a shell starts with SIGINT ignored: arming the deadline puts
    the KeyboardInterrupt handler back, or the interrupt would never stop mutmut."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        timer = sample.arm_deadline("00:00")
        assert timer is not None
        timer.cancel()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
