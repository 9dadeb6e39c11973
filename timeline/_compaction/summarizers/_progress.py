"""The inventory summary's Progress: one item per compacted turn, and a turn prefix's
tool calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from timeline._compaction.quoting import quote
from timeline._compaction.summarizers._sentences import clip_line, first_sentence
from timeline._compaction.textscan import has_text
from timeline._model import (
    ASSISTANT_COMPLETION,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
    Block,
)

__all__ = ["ITEM_CAP", "results_by_call", "tool_line", "turn_items"]

ITEM_CAP: Final = 160
"""A Progress item quotes its turn's reply (the first sentence) up to this many chars."""


def results_by_call(blocks: Sequence[Block]) -> dict[str, list[Block]]:
    """The tool results of ``blocks`` by call id."""
    results: dict[str, list[Block]] = {}
    for b in blocks:
        if b.type == REACT_TOOL_RESULT and b.call_id:
            results.setdefault(b.call_id, []).append(b)
    return results


def tool_line(call: Block, results: Sequence[Block]) -> str:
    """A tool call, its parameters (shortened) and how it ended."""
    params = call.text if len(call.text) <= 120 else call.text[:117] + "..."
    status = ""
    if any(r.meta.get("is_error") for r in results):
        status = " (error)"
    elif not results:
        status = " (no result)"
    return clip_line(f"{quote(call.tool_id or 'tool')} {params}{status} [turn {call.turn_id}]")


def _tools_used(calls: Sequence[Block], results: dict[str, list[Block]]) -> str:
    """``read_file x2, bash; 1 failed``: which tools a turn called, in first-call order."""
    counts: dict[str, int] = {}
    for c in calls:
        name = quote(c.tool_id or "tool")
        counts[name] = counts.get(name, 0) + 1
    notes = [", ".join(name if n == 1 else f"{name} x{n}" for name, n in counts.items())]
    answers = [results.get(c.call_id or "", []) for c in calls]
    failed = sum(1 for rs in answers if any(r.meta.get("is_error") for r in rs))
    unanswered = sum(1 for rs in answers if not rs)
    if failed:
        notes.append(f"{failed} failed")
    if unanswered:
        notes.append(f"{unanswered} without result")
    return "; ".join(notes)


def turn_items(
    blocks: Sequence[Block], results: dict[str, list[Block]]
) -> tuple[list[str], list[str], list[str]]:
    """One Progress item per turn: the first sentence of its last reply and the tools it
    used (the files are in the file lists, the commands in Critical Context, every call in
    the turn log). Done when the turn has a reply, In Progress when it has none yet, Not
    Started when the user asked and nothing was done yet."""
    turns: dict[str, list[Block]] = {}
    for b in blocks:
        turns.setdefault(b.turn_id, []).append(b)
    done: list[str] = []
    open_: list[str] = []
    not_started: list[str] = []
    for turn_id, turn in turns.items():
        calls: list[Block] = []
        reply = asked = None  # the last reply / prompt with text
        for b in turn:
            if b.type == REACT_TOOL_CALL:
                calls.append(b)
            elif b.type == ASSISTANT_COMPLETION and has_text(b.text):
                reply = b
            elif b.type == USER_PROMPT and has_text(b.text):
                asked = b
        if not calls and reply is None:
            if asked is not None:
                first = clip_line(first_sentence(asked.text, ITEM_CAP), ITEM_CAP)
                not_started.append(f"{turn_id}: {first}")
            continue
        head = (
            clip_line(first_sentence(reply.text, ITEM_CAP), ITEM_CAP)
            if reply is not None
            else "(no reply yet)"
        )
        tools = f" ({_tools_used(calls, results)})" if calls else ""
        (done if reply is not None else open_).append(f"{turn_id}: {head}{tools}")
    return done, open_, not_started
