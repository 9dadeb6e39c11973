"""Writes ``store_v3.sqlite`` and ``store_v3_expected.json`` (the SQLite schema-3 fixture).

Run with the code of the last schema-3 commit (76b422e), from a git worktree of it, with
that worktree and its ``tests`` folder first on ``PYTHONPATH``::

    PYTHONPATH=<worktree>:<worktree>/tests python tests/data/write_store_v3.py <out dir>

It writes two conversations like the schema-2 fixture (a pinned rule, tool calls and
results, some hidden with a replacement, summaries with their digests from compactions,
a checkpoint, words with diacritics) after a third conversation that was written and
deleted (so the later conversation numbers have a gap), then stores what that code reads
back from the file (``observe`` of ``tests/test_store_migrations.py``: turn logs,
summaries, searches, a checkpoint and the render of each loaded window).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import FixedClock
from test_store_migrations import POLICY, observe

import index_store
from timeline import HeuristicCounter, Timeline, blocks

GONE = "5b0e3f38-93a4-4f7c-9d0a-0c7d2f1b6e41"
"""The conversation written and deleted first (named as hosts name them, by a UUID)."""


def turn(tl: Timeline, name: str, i: int) -> None:
    """One turn: a prompt, a read and an edit (each a call and its result), an answer."""
    tl.begin_turn()
    tl.append(
        blocks.user_prompt(
            f"{name} turn {i}: make the retry loop use jittered backoff in worker_{i}.py; Ünïcödé ✓"
        )
    )
    read = tl.append(blocks.tool_call("read_file", {"path": f"src/worker_{i}.py"}))
    out = tl.append(
        blocks.tool_result(
            read.call_id or "",
            f"def retry_{i}(attempt):\n    return min(2 ** attempt, 60)\n",
            tool_id="read_file",
        )
    )
    edit = tl.append(
        blocks.tool_call("edit_file", {"patch": "jitter", "path": f"src/worker_{i}.py"})
    )
    tl.append(blocks.tool_result(edit.call_id or "", "ok", tool_id="edit_file"))
    tl.append(
        blocks.assistant_completion(
            f"Changed retry_{i} to use jittered backoff. [D] keep the cap at 60 s for {name}."
        )
    )
    if i % 3 == 1:
        tl.hide([out.path], replacement_text=f"(worker_{i}.py hidden: read it again)")


def write(out: Path) -> None:
    db = out / "store_v3.sqlite"
    store = index_store.open(f"sqlite:///{db}")
    gone = Timeline(GONE, token_counter=HeuristicCounter(), clock=FixedClock())
    turn(gone, "gone", 0)
    gone.persist(store)
    store.delete(GONE)
    for cid, name, turns in (("conv-a", "alpha", 14), ("conv-b", "beta", 7)):
        tl = Timeline(cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())
        tl.begin_turn()
        tl.append(blocks.user_prompt("Project rule: never touch migrations."), pin=True)
        for i in range(turns):
            turn(tl, name, i)
            tl.render("sys")  # compacts when over the budget
            tl.persist(store)
            if cid == "conv-a" and i == 6:
                store.save_checkpoint(cid, "cp-6", tl.snapshot())
    store.close()
    seen = observe(f"sqlite:///{db}")
    text = json.dumps(seen, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    (out / "store_v3_expected.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]))
