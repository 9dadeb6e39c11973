"""Store corruption fuzz (#29 item 1): random bytes scribbled over a SQLite store file
(scattered bytes, or a torn page of random bytes or zeros), then every read path: open,
``load``, ``get_block``, ``read``, ``turn_log``, ``search``, ``conversations``,
checkpoints, ``check_integrity`` and the CLI. Each either gives the data that was written
or raises a typed error (:class:`CorruptRecordError`; :class:`NotFoundError` when the
damage renamed what was asked for), never a wrong block or a raw exception; and whenever
a reader refused, ``check_integrity()`` lists a problem.

CI runs a short profile (``BT_STORE_FUZZ_SEEDS``, default 24 seeds); a longer run:
``BT_STORE_FUZZ_SEEDS=2000 pytest tests/store/test_store_corruption_fuzz.py`` (see
docs/testing.md, "Store corruption fuzz")."""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.helpers.clock import FixedClock
from timeline import (
    Block,
    CompactionPolicy,
    CorruptRecordError,
    HeuristicCounter,
    NotFoundError,
    Timeline,
    blocks,
)
from timeline._cli import main

pytestmark = pytest.mark.slow  # many scribbled store files

SEEDS = int(os.environ.get("BT_STORE_FUZZ_SEEDS", "24"))
POLICY = CompactionPolicy(max_tokens=1_500, keep_recent_turns=1)
TYPED = (CorruptRecordError, NotFoundError)
CONVERSATIONS = ("alpha", "beta")


def _timeline(cid: str) -> Timeline:
    return Timeline(cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[Block]]]:
    """A store with two compacted conversations and a checkpoint, and what it holds."""
    path = tmp_path_factory.mktemp("fuzz") / "store.db"
    store = index_store.open(f"sqlite:///{path}")
    for cid in CONVERSATIONS:
        tl = _timeline(cid)
        for i in range(10):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"{cid} {i}: make the retry loop back off ✓"))
            call = tl.append(blocks.tool_call("read_file", {"path": f"src/w{i}.py"}))
            body = f"def retry_{i}(n):\n    return min(2 ** n, 60)\n" * (1 + i % 4)
            tl.append(blocks.tool_result(call.call_id or "", body))
            tl.append(blocks.assistant_completion(f"{cid}: retry_{i} backs off now."))
            tl.render("sys")
            tl.persist(store)
        store.save_checkpoint(cid, "cp", tl.snapshot())
    held = {cid: store.turn_log(cid) + store.summaries(cid) for cid in CONVERSATIONS}
    store.close()
    return path, held


def _scribble(data: bytearray, rng: random.Random) -> None:
    page = 4096
    mode = rng.choice(("bytes", "page", "zeros"))
    if mode == "bytes":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return
    start = rng.randrange(len(data) // page) * page + rng.randrange(0, page // 2)
    stop = min(len(data), start + rng.randint(16, page))
    filler = bytes(stop - start) if mode == "zeros" else rng.randbytes(stop - start)
    data[start:stop] = filler


def _readers(url: str, path: Path, cid: str) -> dict[str, Callable[[Any], object]]:
    def cli(*args: str) -> Callable[[Any], object]:
        def run(_: Any) -> object:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                return main([*args])

        return run

    return {
        "load": lambda s: Timeline.load(s, cid, policy=POLICY, token_counter=HeuristicCounter()),
        "get_block": lambda s: [s.get_block(cid, f"b{i}") for i in (2, 5, 9)],
        "read": lambda s: s.read(cid, "ar:t2.user.prompt"),
        "turn_log": lambda s: s.turn_log(cid),
        "summaries": lambda s: s.summaries(cid),
        "search": lambda s: s.search(cid, "retry back off", limit=50),
        "list": lambda s: s.conversations(),
        "checkpoint": lambda s: s.load_checkpoint(cid, "cp"),
        "list_checkpoints": lambda s: s.list_checkpoints(cid),
        "cli-list": cli("list", "--db", str(path)),
        "cli-search": cli("search", "--db", str(path), cid, "retry"),
        "cli-render": cli("render", "--db", str(path), cid),
    }


def _same_as_written(value: object, held: dict[str, list[Block]], cid: str) -> None:
    """A block a reader returned is the block that was written under its id."""
    by_id = {b.id: b for b in held[cid]}
    found: list[Block] = []
    if isinstance(value, Block):
        found = [value]
    elif isinstance(value, list):
        found = [v for v in value if isinstance(v, Block)]
        found += [v.block for v in value if hasattr(v, "block")]
    for b in found:
        assert b == by_id.get(b.id), f"{cid}/{b.id} came back different from what was written"


@pytest.mark.parametrize("seed", range(SEEDS))
def test_scribbled_store_file(seed: int, written: Any, tmp_path: Path) -> None:
    source, held = written
    path = tmp_path / "store.db"
    data = bytearray(source.read_bytes())
    rng = random.Random(seed)
    _scribble(data, rng)
    path.write_bytes(bytes(data))
    url = f"sqlite:///{path}"
    try:
        store = index_store.open(url)
    except TYPED:
        return  # the file's header or schema is damaged: refused at open
    refused: list[str] = []
    try:
        for cid in CONVERSATIONS:
            for name, reader in _readers(url, path, cid).items():
                try:
                    value = reader(store)
                except TYPED as exc:
                    refused.append(f"{cid}/{name}: {exc}")
                    continue
                if name.startswith("cli-"):
                    assert value in (0, 1, 2, 3, 4), (name, value)
                    continue
                _same_as_written(value, held, cid)
        problems = store.check_integrity()
        if refused:
            assert problems, f"readers refused {refused} but check_integrity() found nothing"
        for p in problems:
            assert isinstance(p, CorruptRecordError)
    finally:
        store.close()
    shutil.rmtree(tmp_path, ignore_errors=True)
