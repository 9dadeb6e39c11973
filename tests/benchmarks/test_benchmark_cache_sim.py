"""The benchmark's simulated Anthropic cache (benchmarks/cache_sim.py), rule by rule as the
provider documents them: it grades the library's checkpoints, so it must be right on its
own terms (it shares no code with the planner)."""

from __future__ import annotations

import pytest

from benchmarks.cache_sim import CacheBlock, CacheSimulator


def blocks(n: int, tokens: int = 600, marks: dict[int, str] | None = None) -> list[CacheBlock]:
    marks = marks or {}
    return [CacheBlock("user", "text", f"block {i}", tokens, marks.get(i, "")) for i in range(n)]


def test_a_first_request_writes_up_to_its_last_breakpoint() -> None:
    result = CacheSimulator().request(blocks(4, marks={2: "5m"}))
    assert (result.read, result.written_5m, result.uncached) == (0, 1_800, 600)
    assert result.cost == pytest.approx(1_800 * 1.25 + 600)


def test_the_same_prefix_is_read_at_a_tenth() -> None:
    sim = CacheSimulator()
    sim.request(blocks(4, marks={3: "5m"}))
    again = sim.request(blocks(5, marks={4: "5m"}))
    assert (again.read, again.written_5m) == (2_400, 600)
    assert again.cost == pytest.approx(2_400 * 0.1 + 600 * 1.25)


def test_one_hour_writes_cost_twice_the_input() -> None:
    result = CacheSimulator().request(blocks(2, marks={1: "1h"}))
    assert result.written_1h == 1_200 and result.cost == pytest.approx(2_400)


def test_the_lookback_stops_after_20_blocks() -> None:
    """A breakpoint 20 blocks past the cached prefix still finds it; 21 do not."""
    for gap, hit in ((19, True), (20, False)):
        sim = CacheSimulator()
        sim.request(blocks(3, marks={2: "5m"}))
        result = sim.request(blocks(3 + gap, marks={2 + gap: "5m"}))
        assert (result.read == 1_800) is hit, gap


def test_a_changed_block_invalidates_everything_after_it() -> None:
    sim = CacheSimulator()
    sim.request(blocks(4, marks={3: "5m"}))
    changed = blocks(4, marks={3: "5m"})
    changed[1] = CacheBlock("user", "text", "edited", 600)
    assert sim.request(changed).read == 0


def test_prefixes_under_the_minimum_are_not_cached() -> None:
    sim = CacheSimulator()
    first = sim.request(blocks(1, tokens=1_000, marks={0: "5m"}))
    assert first.written == 0 and first.uncached == 1_000
    assert sim.request(blocks(1, tokens=1_000, marks={0: "5m"})).read == 0


def test_entries_expire_after_their_ttl_and_reads_refresh_them() -> None:
    sim = CacheSimulator()
    sim.request(blocks(2, marks={1: "5m"}), now=0)
    assert sim.request(blocks(2, marks={1: "5m"}), now=290).read == 1_200  # refreshed
    assert sim.request(blocks(2, marks={1: "5m"}), now=580).read == 1_200
    assert sim.request(blocks(2, marks={1: "5m"}), now=1_000).read == 0
    long = CacheSimulator()
    long.request(blocks(2, marks={1: "1h"}), now=0)
    assert long.request(blocks(2, marks={1: "1h"}), now=3_000).read == 1_200


def test_mixed_ttls_longer_first_only() -> None:
    ok = CacheSimulator().request(blocks(3, tokens=1_100, marks={0: "1h", 2: "5m"}))
    assert not ok.error and (ok.written_1h, ok.written_5m) == (1_100, 2_200)
    assert ok.cost == pytest.approx(1_100 * 2 + 2_200 * 1.25)
    refused = CacheSimulator().request(blocks(3, marks={0: "5m", 2: "1h"}))
    assert "longer TTLs must come first" in refused.error and refused.written == 0


def test_at_most_four_breakpoints() -> None:
    result = CacheSimulator().request(blocks(5, marks=dict.fromkeys(range(5), "5m")))
    assert "at most 4" in result.error
