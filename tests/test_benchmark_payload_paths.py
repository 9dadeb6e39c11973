"""The two payload paths of #35 (benchmarks/payload_paths.py) on a short session: both
build every request's payload, equal to each other, and are timed against the peer."""

from __future__ import annotations

import pytest

from benchmarks import payload_paths

pytestmark = pytest.mark.slow  # benchmark runs


def test_both_payload_paths_are_timed_against_the_peer() -> None:
    """Every request is timed on both paths, each total holding its payload build; the
    report has a row per path and format, with its ratio to the peer."""
    res = payload_paths.run(turns=20, budget=6_000, reps=1)
    assert [r["format"] for r in res["rows"]] == ["anthropic", "openai"]
    for r in res["rows"]:
        assert r["requests"] >= 20
        for name in payload_paths.PATHS:
            s = r[name]
            assert 0 < s["payload_median"] < s["median"] <= s["p95"]
        assert r["peer"]["median"] > 0
    lines = payload_paths.report(res)
    assert len(lines) == 2 + 2 * (len(payload_paths.PATHS) + 1)
    inc = res["rows"][0]["incremental"]
    ratio = inc["median"] / res["rows"][0]["peer"]["median"]
    assert lines[2].startswith("| Anthropic Messages | incremental | ")
    assert f"| {ratio:.2f}x |" in lines[2]
