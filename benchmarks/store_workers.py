"""Many workers, one PostgreSQL database (#28 item 7).

``python -m benchmarks.store_workers`` starts N worker processes (2, 4 and 8 by default)
against ``BLOCK_TIMELINE_PG_DSN`` (in a schema of its own, dropped afterwards), twice:

- *different*: each worker persists its own conversation, one commit per turn;
- *same*: every worker persists into one conversation: load, add a turn, persist; on a
  ``ConflictError`` (another worker committed first) reload and retry.

Afterwards every block a worker saw committed is read back (``get_block``) and compared.
It prints commits per second, blocks per second, conflicts and lost blocks for each N::

    python -m benchmarks.store_workers --workers 2 4 8 --turns 40
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import secrets
import time
from typing import Any

import index_store
from timeline import ConflictError, HeuristicCounter, NotFoundError, Timeline, blocks


def _turn(tl: Timeline, worker: int, i: int) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"worker {worker} turn {i}: make the retry loop back off"))
    tl.append(blocks.assistant_completion(f"worker {worker} turn {i}: done, with jitter"))


def _load(store: Any, cid: str) -> Timeline:
    try:
        return Timeline.load(store, cid, token_counter=HeuristicCounter())
    except NotFoundError:  # not there yet: the first commit creates it
        return Timeline(cid, token_counter=HeuristicCounter())


def _worker(url: str, worker: int, turns: int, same: bool, ready: Any, go: Any, out: Any) -> None:
    """Keeps its timeline between turns (as an agent does); on a conflict it reloads the
    conversation and does its turn again."""
    store = index_store.open(url)
    cid = "shared" if same else f"conv-{worker}"
    committed: list[tuple[str, str, str]] = []
    conflicts = 0
    ready.put(worker)
    go.wait()
    tl = _load(store, cid)
    for i in range(turns):
        while True:
            before = {b.id for b in tl.blocks}
            _turn(tl, worker, i)
            try:
                tl.persist(store)
            except ConflictError:
                conflicts += 1
                tl = _load(store, cid)
                continue
            committed += [(cid, b.id, b.text) for b in tl.blocks if b.id not in before]
            break
    store.close()
    out.put((committed, conflicts))


def run(url: str, n: int, turns: int, same: bool) -> dict[str, float]:
    """Timed from the moment every worker has its store open."""
    ctx = multiprocessing.get_context("spawn")
    out, ready, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=_worker, args=(url, w, turns, same, ready, go, out)) for w in range(n)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get()
    start = time.perf_counter()
    go.set()
    results = [out.get() for _ in procs]
    seconds = time.perf_counter() - start
    for p in procs:
        p.join()
    store = index_store.open(url)
    lost = 0
    written = [c for committed, _ in results for c in committed]
    for cid, bid, text in written:
        try:
            ok = store.get_block(cid, bid).text == text
        except NotFoundError:
            ok = False
        lost += not ok
    store.close()
    return {
        "commits/s": n * turns / seconds,
        "blocks/s": len(written) / seconds,
        "conflicts": sum(c for _, c in results),
        "lost": lost,
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.store_workers", description=__doc__)
    p.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--turns", type=int, default=40, help="commits per worker")
    args = p.parse_args(argv)
    dsn = os.environ.get("BLOCK_TIMELINE_PG_DSN")
    if not dsn:
        raise SystemExit("set BLOCK_TIMELINE_PG_DSN to a PostgreSQL database")
    import psycopg

    print("| workers | writing | commits/s | blocks/s | conflicts (retried) | lost | seconds |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n in args.workers:
        for same in (False, True):
            name = f"bt_workers_{secrets.token_hex(4)}"
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {name}")
            joiner = "&" if "?" in dsn else "?"
            try:
                r = run(f"{dsn}{joiner}options=-csearch_path%3D{name}", n, args.turns, same)
            finally:
                with psycopg.connect(dsn, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA {name} CASCADE")
            what = "one conversation" if same else "own conversations"
            print(
                f"| {n} | {what} | {r['commits/s']:.0f} | {r['blocks/s']:.0f} | "
                f"{r['conflicts']:.0f} | {r['lost']:.0f} | {r['seconds']:.1f} |"
            )


if __name__ == "__main__":
    main()
