"""The index store at scale (#28): persist, load, search, size against text, and import.

``python -m benchmarks.store`` builds a store of ``--conversations`` x ``--blocks`` blocks
of generated prose on SQLite, and on PostgreSQL when ``BLOCK_TIMELINE_PG_DSN`` is set (in
a schema of its own, dropped afterwards), then prints one table: medians and p95 of a
persist (one conversation's blocks in one commit), a load (``Timeline.load``), searches
for a common word, a rare word, two words, and in a conversation of one block; the
store's size against the UTF-8 text it holds; and the streaming import of one big string
and of many tiny messages (time and peak memory, each in a fresh process), in memory and
through ``timeline import`` into a SQLite store (with the store's size against the file's
JSON bytes and against the messages' text: a one-character message has one byte of text
and about thirty bytes of JSON around it).

The default is small (CI smoke-tests it). The 1M-block run of #28::

    python -m benchmarks.store --conversations 2000 --blocks 500 --import-mb 200 --tiny-mb 10

``--write-docs`` puts the table into ``docs/benchmarks.md`` between the
``store-benchmark`` markers (the rest of that file is ``python -m benchmarks``').
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import index_store
from benchmarks._util import fresh_process, write_section
from timeline import HeuristicCounter, Timeline, blocks

START, END = "<!-- store-benchmark:start -->", "<!-- store-benchmark:end -->"
COMMON = "worker"
"""In about half of all blocks."""


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "bcdfghjklmnprstvz"
    vowels = "aeiou"
    return [
        "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))
        for _ in range(5_000)
    ]


def _text(rng: random.Random, words: list[str], size: int) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        # a Zipf-like draw: a few words are everywhere, most are rare
        w = words[min(int(rng.paretovariate(1.1)) - 1, len(words) - 1)]
        if rng.random() < 0.08:
            w = COMMON
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def _stats(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"{statistics.median(ms):.1f} / {p95:.1f}"


def _timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def build(store: Any, args: argparse.Namespace) -> tuple[list[float], int, list[str], str]:
    """Persists every conversation; returns persist times, text bytes, ids, a rare word.
    The ids are UUIDs, as hosts name conversations (LangGraph threads, Agents SDK
    sessions): an id is in every row and index entry of a conversation, so a short one
    ("conv-7", as runs before 2026-11-24 used) makes a store look smaller than it will be."""
    rng = random.Random(7)
    words = _vocabulary(rng)
    times: list[float] = []
    text_bytes = 0
    named = random.Random(5)
    ids = [str(uuid.UUID(int=named.getrandbits(128), version=4)) for _ in range(args.conversations)]
    for cid in ids:
        tl = Timeline(cid, token_counter=HeuristicCounter())
        tl.begin_turn()
        for _ in range(args.blocks):
            text = _text(rng, words, args.block_bytes)
            text_bytes += len(text.encode())
            tl.append(blocks.note(text))
        times.append(_timed(partial(tl.persist, store)))
    one = Timeline("one-block", token_counter=HeuristicCounter())
    one.begin_turn()
    one.append(blocks.note(f"a single {COMMON} note"))
    one.persist(store)
    return times, text_bytes, ids, words[100]  # in about 1% of blocks


def measure(
    url: str,
    args: argparse.Namespace,
    size: Callable[[Any], int],
    settle: Callable[[], None] = lambda: None,
) -> dict[str, str]:
    """The row of one backend. The common-word search is timed twice: right after the
    build (each conversation's first search: PostgreSQL then also sets the hint bits of
    rows it reads for the first time, and autovacuum may be at work on the new rows), and
    once the store has settled (``settle``: what autovacuum leaves behind), as every other
    search and load."""
    store = index_store.open(url)
    try:
        persist, text_bytes, ids, rare = build(store, args)
        rng = random.Random(11)
        sample = [rng.choice(ids) for _ in range(args.queries)]
        first = _stats([_timed(partial(store.search, c, COMMON)) for c in sample])
        settle()
        load = [_timed(partial(Timeline.load, store, c)) for c in sample[: args.loads]]
        row = {
            "blocks": f"{args.conversations * args.blocks:,}",
            "persist ms (median / p95)": _stats(persist),
            "load ms": _stats(load),
            "search common, first after the build ms": first,
        }
        for name, query in (
            ("common", COMMON),
            ("rare", rare),
            ("two words", f"{COMMON} {rare}"),
        ):
            row[f"search {name} ms"] = _stats(
                [_timed(partial(store.search, c, query)) for c in sample]
            )
        row["search one-block conv ms"] = _stats(
            [_timed(lambda: store.search("one-block", COMMON)) for _ in sample]
        )
        row["size / text"] = f"{size(store) / text_bytes:.2f}x ({text_bytes / 2**20:.0f} MiB text)"
        return row
    finally:
        store.close()


def _pg(dsn: str, args: argparse.Namespace) -> dict[str, str]:
    import psycopg

    name = f"bt_bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    joiner = "&" if "?" in dsn else "?"

    def settle() -> None:  # what autovacuum does shortly after a bulk load
        with psycopg.connect(dsn, autocommit=True) as conn:
            for table in ("bt_blocks", "bt_text", "bt_conversations"):
                conn.execute(f"VACUUM (ANALYZE) {name}.{table}")

    def size(store: Any) -> int:
        with store._tx() as cur:  # the benchmark's own look at the tables it made
            cur.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                (name,),
            )
            return int(cur.fetchone()[0])

    try:
        return measure(f"{dsn}{joiner}options=-csearch_path%3D{name}", args, size, settle)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


_IMPORT = """
import resource, sys, time
from timeline._io.stream import import_file
t = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    tl, _ = import_file(fh, "openai", "c")
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""

IMPORT_ID = "3f2c8a1e-7b4d-4e9a-8c6f-1d2e3a4b5c6d"
"""The conversation ``timeline import`` writes: named by a UUID, as hosts name them (a
store keeps no id in a block row, so its length costs nothing a block; ``--import-id c``
shows it)."""

_CLI_IMPORT = """
import contextlib, io, resource, sys, time
from timeline._cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    main(["import", sys.argv[1], "--db", sys.argv[2], "--conversation", sys.argv[3]])
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def _import(path: Path, script: str = _IMPORT, *extra: str) -> tuple[float, int]:
    """Seconds and peak RSS of ``script`` run on ``path`` in a fresh process."""
    seconds, peak = fresh_process(script, str(path), *extra)
    return float(seconds), int(peak)


def _store_bytes(db: Path) -> int:
    """The SQLite store's size once the import closed it (its WAL checkpointed)."""
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def _per_block(db: Path) -> str:
    """Bytes a block of each table and index of a SQLite store (its ``dbstat`` table; empty
    when this SQLite was built without it), largest first."""
    con = sqlite3.connect(db)
    try:
        blocks = con.execute("SELECT count(*) FROM blocks").fetchone()[0]
        rows = con.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.Error:
        return ""
    finally:
        con.close()
    shown = [f"{name} {size / blocks:.0f}" for name, size in rows if size / blocks >= 1]
    return ", ".join(shown)


def _cli_import(path: Path, text: int, base: int, tmp: Path, cid: str) -> str:
    """``timeline import`` into a new SQLite store: time, peak memory over the baseline
    (a one-message import the same way), and the store's size, against the file's JSON
    bytes and against the message text."""
    db = tmp / f"{path.stem}.db"
    seconds, peak = _import(path, _CLI_IMPORT, str(db), cid)
    size, stored = path.stat().st_size, _store_bytes(db)
    return (
        f"{seconds:.1f} s, +{(peak - base) / 2**20:.0f} MiB ({(peak - base) / size:.1f}x the "
        f"file); store {stored / 2**20:.1f} MiB ({stored / size:.1f}x the file, "
        f"{stored / text:.1f}x the text)"
    )


def imports(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    """Import time and peak memory (a fresh process each; the peak of importing an empty
    list, the interpreter and library, taken off) against the file's size; then the same
    files through ``timeline import`` into a SQLite store, with the store's size against
    the file (its JSON bytes) and against the text of its messages."""
    empty = tmp / "empty.json"
    empty.write_bytes(b"[]")
    _, base = _import(empty)
    one = b'{"role":"user","content":"a"}'
    single = tmp / "single.json"
    single.write_bytes(b"[" + one + b"]")
    _, cli_base = _import(single, _CLI_IMPORT, str(tmp / "single.db"), args.import_id)
    big = tmp / "big.json"
    chunk = b"make the retry loop back off " * 36_158  # ~1 MiB
    with big.open("wb") as fh:
        fh.write(b'[{"role":"user","content":"')
        for _ in range(args.import_mb):
            fh.write(chunk)
        fh.write(b'"}]')
    tiny = tmp / "tiny.json"
    count = args.tiny_mb * 2**20 // (len(one) + 1)
    tiny.write_bytes(b"[" + b",".join([one] * count) + b"]")
    out = {}
    texts = {"one big string": len(chunk) * args.import_mb, "tiny messages": count}
    for name, path in (("one big string", big), ("tiny messages", tiny)):
        seconds, peak = _import(path)
        peak -= base
        mib = path.stat().st_size / 2**20
        out[f"import {name} ({mib:.0f} MiB)"] = (
            f"{seconds:.1f} s, +{peak / 2**20:.0f} MiB ({peak / path.stat().st_size:.1f}x the file)"
        )
        out[f"timeline import {name} into SQLite"] = _cli_import(
            path, texts[name], cli_base, tmp, args.import_id
        )
    out["tiny messages: store bytes a block"] = _per_block(tmp / "tiny.db")
    return out


def table(results: dict[str, dict[str, str]]) -> str:
    names = list(results)
    keys = list(dict.fromkeys(k for r in results.values() for k in r))
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for k in keys:
        lines.append(f"| {k} | " + " | ".join(results[n].get(k, "") for n in names) + " |")
    return "\n".join(lines)


def write_docs(text: str, command: str) -> None:
    section = (
        f"{START}\n## Index store at scale\n\nProduced by `{command}` (medians and p95 from "
        f"one run; see `benchmarks/store.py`).\n\n{text}\n{END}"
    )
    write_section(START, END, section)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.store", description=__doc__)
    p.add_argument("--conversations", type=int, default=20)
    p.add_argument("--blocks", type=int, default=50, help="blocks per conversation")
    p.add_argument("--block-bytes", type=int, default=700, help="text bytes per block")
    p.add_argument("--queries", type=int, default=60, help="searches of each kind")
    p.add_argument("--loads", type=int, default=20)
    p.add_argument("--import-mb", type=int, default=4, help="MiB of the one-string import")
    p.add_argument("--tiny-mb", type=int, default=1, help="MiB of the tiny-messages import")
    p.add_argument(
        "--import-id", default=IMPORT_ID, help="the conversation `timeline import` writes"
    )
    p.add_argument("--no-postgres", action="store_true")
    p.add_argument("--write-docs", action="store_true")
    args = p.parse_args(argv)
    results: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "store.db"
        results["SQLite"] = measure(f"sqlite:///{db}", args, lambda s: s.size_bytes())
        dsn = os.environ.get("BLOCK_TIMELINE_PG_DSN")
        if dsn and not args.no_postgres:
            results["PostgreSQL"] = _pg(dsn, args)
        results["SQLite"].update(imports(args, Path(tmp)))
    text = table(results)
    print(text)
    if args.write_docs:
        shown = " ".join(a for a in (argv if argv is not None else sys.argv[1:]) if a)
        write_docs(text, f"python -m benchmarks.store {shown}".strip())


if __name__ == "__main__":
    main()
