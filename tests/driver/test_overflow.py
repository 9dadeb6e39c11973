"""is_context_overflow over real provider errors: overflows yes; rate limits, payload
size, output-size parameters, auth and network errors no."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.overflow_errors import NOT_OVERFLOWS, OVERFLOWS
from timeline import is_context_overflow, is_usage_overflow


@pytest.mark.parametrize(("name", "error"), OVERFLOWS, ids=[n for n, _ in OVERFLOWS])
def test_overflows_are_recognised(name: str, error: Any) -> None:
    """Every provider's context-overflow error is classified as an overflow."""
    assert is_context_overflow(error)


@pytest.mark.parametrize(("name", "error"), NOT_OVERFLOWS, ids=[n for n, _ in NOT_OVERFLOWS])
def test_other_errors_are_not_overflows(name: str, error: Any) -> None:
    """Rate limits, payload size, output limits, auth and network errors are not."""
    assert not is_context_overflow(error)


def test_corpus_is_large_enough() -> None:
    """At least 40 real-world errors, both kinds."""
    assert len(OVERFLOWS) + len(NOT_OVERFLOWS) >= 40
    assert len(OVERFLOWS) >= 20 and len(NOT_OVERFLOWS) >= 15


def test_silent_overflow() -> None:
    """Reported prompt tokens at or over the window mean silent truncation (seed 004)."""
    assert is_usage_overflow(128_000, 128_000)
    assert not is_usage_overflow(127_999, 128_000)
    assert not is_usage_overflow(None, 128_000)
