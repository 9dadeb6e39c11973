"""What a store written by an older schema holds, observed the same way for every version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import index_store
from tests.helpers.clock import FixedClock
from tests.helpers.search_reference import assert_searches_as_written_now
from timeline import CompactionPolicy, HeuristicCounter, Timeline

DATA = Path(__file__).parent.parent / "data"


POLICY = CompactionPolicy(max_tokens=1_500, keep_recent_turns=1)


def observe(url: str) -> dict[str, Any]:
    """What the fixture's writer read from its store (the shape of the expected files)."""
    store = index_store.open(url)
    out: dict[str, Any] = {}
    for cid in ("conv-a", "conv-b"):
        tl = Timeline.load(
            store, cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock()
        )
        log = store.turn_log(cid)
        out[cid] = {
            "version": tl.version,
            "turn_log": [[b.id, b.type, b.turn_id, b.path, b.text, b.meta] for b in log],
            "summaries": [[b.id, b.text, b.meta] for b in store.summaries(cid)],
            "read": [b.id for b in store.read(cid, log[3].path)],
            "checkpoints": [[c.checkpoint_id, c.block_count] for c in store.list_checkpoints(cid)],
            "render": tl.render("sys").to_anthropic(),
        }
        assert_searches_as_written_now(store, cid)
    out["conversations"] = store.conversations()
    out["checkpoint_blocks"] = [b.id for b in store.load_checkpoint("conv-a", "cp-6").blocks]
    assert store.check_integrity() == []
    store.close()
    return json.loads(json.dumps(out))


def expected(name: str) -> Any:
    """What the old code read (its searches left out: search is this code's)."""
    want = json.loads((DATA / name).read_text(encoding="utf-8"))
    for cid in ("conv-a", "conv-b"):
        want[cid].pop("search")
        want[cid].pop("search_unicode")
    return want
