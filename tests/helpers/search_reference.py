"""What a store's search must give for a conversation: what a memory store holding the
same rows gives (used by the upgrade tests: an upgraded store searches as if this code
had written it)."""

from __future__ import annotations

from typing import Any

import index_store

QUERIES = ("jittered backoff", "ünïcödé", "retry worker_3.py", "Goal")


def hits(store: Any, cid: str, query: str, limit: int) -> list[list[Any]]:
    """One search's hits: block id, snippet, kind, score, attached call and result."""
    return [
        [
            h.block.id,
            h.snippet,
            h.kind,
            h.score,
            getattr(h.call, "id", None),
            getattr(h.result, "id", None),
        ]
        for h in store.search(cid, query, limit=limit)
    ]


def searches(store: Any, cid: str) -> list[list[Any]]:
    """Each query's hits (:func:`hits`, the best 50)."""
    return [hits(store, cid, query, 50) for query in QUERIES]


def as_written_now(store: Any, cid: str) -> Any:
    """A memory store holding ``cid``'s turn log, summaries and window, as one commit."""
    found = store.load_window(cid)
    assert found is not None
    memory = index_store.open("memory://")
    memory.commit(
        cid,
        expected_version=0,
        log=store.turn_log(cid),
        summaries=store.summaries(cid),
        window=found[1],
    )
    return memory


def assert_searches_as_written_now(store: Any, cid: str) -> None:
    assert searches(store, cid) == searches(as_written_now(store, cid), cid)
    assert any(searches(store, cid))
