"""Child process of the crash and concurrency tests: deterministic persist loops."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import index_store
from timeline import (
    CompactionPolicy,
    ConflictError,
    HeuristicCounter,
    NotFoundError,
    Timeline,
    blocks,
)

POLICY = CompactionPolicy(max_tokens=3_000, keep_recent_turns=2)


def clock() -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC)


def make(store: object | None, cid: str) -> Timeline:
    kw = {"policy": POLICY, "token_counter": HeuristicCounter(), "clock": clock}
    if store is None:
        return Timeline(cid, **kw)  # type: ignore[arg-type]
    try:
        return Timeline.load(store, cid, **kw)  # type: ignore[arg-type]
    except NotFoundError:
        return Timeline(cid, **kw)  # type: ignore[arg-type]


def step(tl: Timeline, version: int) -> None:
    """The work between persist ``version`` and ``version + 1``: a pure function of it."""
    tl.begin_turn()
    tl.append(
        blocks.user_prompt(
            f"step {version}: refactor module {version % 7} " + "w" * (version % 5 * 90)
        )
    )
    c = tl.append(blocks.tool_call("read_file", {"path": f"m{version % 7}.py"}))
    tl.append(blocks.tool_result(c.call_id or "", f"line {version}\n" * (40 + version % 13 * 15)))
    tl.append(blocks.assistant_completion(f"done {version}"))
    tl.render("system prompt")


def crash_loop(url: str) -> None:
    store = index_store.open(url)
    tl = make(store, "crash")
    while True:
        step(tl, tl.version)
        version = tl.persist(store)
        print(version, flush=True)


def contend(url: str, name: str, barrier_dir: str) -> None:
    """Load, append own blocks, wait for the other writer, persist; on conflict, reload
    and persist once more. Prints CONFLICT and OK lines for the parent."""
    import os
    import time

    store = index_store.open(url)
    tl = make(store, "race")
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"from {name}"))
    open(os.path.join(barrier_dir, name), "w").close()
    while len(os.listdir(barrier_dir)) < 2:
        time.sleep(0.005)
    try:
        tl.persist(store)
    except ConflictError:
        print("CONFLICT", flush=True)
        tl = make(store, "race")
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"from {name}"))
        tl.persist(store)
    print("OK", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "crash":
        crash_loop(sys.argv[2])
    else:
        contend(sys.argv[2], sys.argv[3], sys.argv[4])
