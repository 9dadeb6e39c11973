"""The API corpus: every case ends in its typed error (timeline unchanged) or its valid
result, and the conversation goes on persisting with nothing lost."""

from __future__ import annotations

import pytest

from index_store import MemoryStore
from tests.adversarial.api_cases import all_cases
from tests.adversarial.cases import Case, base, outcome, params, recovers


@pytest.mark.parametrize("case", params(all_cases()))
def test_api_case(case: Case) -> None:
    """The case's exact outcome; then a good append, persist and load succeed."""
    store = MemoryStore()
    tl = base(store)
    committed = [b.id for b in tl.blocks]
    before = tl.snapshot()
    result = outcome(case, lambda: case.run(tl))
    if case.expect is not None:
        assert tl.snapshot() == before
    elif case.check is not None:
        assert case.check(tl, result) is True
    recovers(tl, store, committed)
