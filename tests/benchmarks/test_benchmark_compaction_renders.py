"""What the render p95 is made of (benchmarks/compaction_renders.py) on a short session:
every render is counted once, with the ones that compacted or with the others, and a
policy change reaches the timeline."""

from __future__ import annotations

import pytest

from benchmarks import compaction_renders

pytestmark = pytest.mark.slow  # benchmark runs


def test_renders_split_into_compacting_and_others() -> None:
    """A session over its budget compacts; a lower keep ratio compacts less often."""
    default = compaction_renders.run(turns=40, budget=8_000, changes={})
    keep = compaction_renders.run(turns=40, budget=8_000, changes={"keep_ratio": 0.5})
    assert default["compactions"] >= 3
    assert keep["compactions"] < default["compactions"]
    assert default["compacting_min"] <= default["compacting_median"]
    lines = compaction_renders.report({"default": default, "keep": keep})
    assert len(lines) == 4
    assert lines[2].startswith(f"| default | {default['requests']:,} | ")
