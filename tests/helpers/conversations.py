"""Conversations the compaction tests build: a coding turn, the summaries a timeline recorded."""

from __future__ import annotations

from typing import Any

import msgspec

from timeline import (
    Block,
    Timeline,
    blocks,
)


def coding_turn(tl: Timeline, i: int, result_chars: int = 900, calls: int = 1) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"Task {i}: fix module m{i}.py"))
    made = [
        tl.append(blocks.tool_call("read_file", {"path": f"m{i}_{k}.py"})) for k in range(calls)
    ]
    for c in made:
        tl.append(blocks.tool_result(c.call_id or "", "x" * result_chars, tool_id="read_file"))
    tl.append(blocks.assistant_completion(f"Fixed m{i}.py."))


def summaries(tl: Timeline) -> list[Any]:
    return [b for b in tl.blocks if b.type == "conv.range.summary"]


def numbered(*items: Block) -> list[Block]:
    """The blocks with ids ``b0``, ``b1``, ... in order (as a ledger would give them)."""
    return [msgspec.structs.replace(b, id=f"b{i}") for i, b in enumerate(items)]
