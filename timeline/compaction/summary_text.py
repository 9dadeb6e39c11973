"""The stored summary text around what a summarizer wrote.

Whatever the summarizer (inventory, LLM, sliding window, truncate), every summary block
the library inserts reads, in order:

1. ``## Active Work Reminder``: the request being worked on at the cut, the last action
   before it, the next step and the paths to read back (upstream v2);
2. the summarizer's text;
3. ``## Tagged Notes``: every ``[P]``/``[D]``/``[S]`` line so far, verbatim;
4. the split-turn context: ``## Turn Context (split turn)`` for an older turn, or for the
   turn still running a ``[MID-TURN COMPACTION n]`` checkpoint.

The reminder, the notes and the split-turn part are rebuilt at each compaction, so they are
taken out of the previous summary before a summarizer reads it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from timeline.compaction.digest import CompactionDigest
from timeline.compaction.summarizers._sections import carried
from timeline.compaction.textscan import (
    clip,
    first_line,
    has_text,
    has_word,
    newline_only,
    split_sentences,
)
from timeline.model.block import (
    ASSISTANT_COMPLETION,
    REACT_PLAN,
    REACT_PLAN_HISTORY,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
    Block,
)
from timeline.model.block_types import block_type

__all__ = [
    "REMINDER_HEADING",
    "SPLIT_TURN_HEADING",
    "TAGGED_NOTES_HEADING",
    "active_work_reminder",
    "assemble",
    "mid_turn_heading",
    "strip_rebuilt_sections",
]

SPLIT_TURN_HEADING: Final = "## Turn Context (split turn)"
REMINDER_HEADING: Final = "## Active Work Reminder"
TAGGED_NOTES_HEADING: Final = "## Tagged Notes"
_CLIP: Final = 160
_NEXT = re.compile(r"\b(next|then|todo|remaining|need to|will)\b", re.IGNORECASE)
_NEXT_WORDS: Final = ("next", "then", "todo", "remaining", "need to", "will")
_MID_TURN_TEXT: Final = "[MID-TURN COMPACTION "
_MID_TURN = re.compile(r"^\[MID-TURN COMPACTION \d+\]$", re.MULTILINE)


def mid_turn_heading(n: int) -> str:
    """``[MID-TURN COMPACTION n]``: n counts the compactions within the running turn."""
    return f"[MID-TURN COMPACTION {n}]"


def _clip(text: str, cap: int = _CLIP) -> str:
    return clip(text, cap)


def _action(block: Block) -> str:
    if block.type == REACT_TOOL_CALL:
        return _clip(f"called {block.tool_id} {block.text}")
    if block.type == REACT_TOOL_RESULT:
        status = "failed" if block.meta.get("is_error") else "returned"
        return _clip(f"{block.tool_id or 'tool'} {status}: {first_line(block.text)}")
    if block.type == ASSISTANT_COMPLETION:
        return _clip(f"answered: {block.text}")
    return _clip(f"{block_type(block.type).label} {block.text}".strip())


def _next_step(compacted: Sequence[Block], cut_block: Block | None) -> str:
    for b in reversed(compacted):
        if b.type == ASSISTANT_COMPLETION and has_text(b.text):
            if has_word(_NEXT, _NEXT_WORDS, b.text):  # else no sentence has one either
                for s in split_sentences(b.text):
                    if s.strip() and has_word(_NEXT, _NEXT_WORDS, s):
                        return _clip(s)
            break
    if cut_block is not None:
        label = block_type(cut_block.type).label or cut_block.type
        return f"continue from the kept conversation below ({label} at {cut_block.path})"
    return "continue from the kept conversation below"


def active_work_reminder(
    compacted: Sequence[Block], cut_block: Block | None, digest: CompactionDigest
) -> str:
    """What the agent was doing at the cut and the next step, from the compacted blocks."""
    prompts = [b for b in compacted if b.type == USER_PROMPT and has_text(b.text)]
    if prompts:
        request = _clip(prompts[-1].text)
    elif digest.user_requests:
        request = _clip(digest.user_requests[-1])
    else:
        request = "(none stated)"
    content = [
        b
        for b in compacted
        if block_type(b.type).render not in ("header", "summary")
        and b.type not in (REACT_PLAN, REACT_PLAN_HISTORY)  # plans are carried, not summarized
    ]
    doing = _action(content[-1]) if content else "(nothing yet)"
    refs = [
        b.path for b in content if b.type in (USER_PROMPT, REACT_TOOL_RESULT, ASSISTANT_COMPLETION)
    ]
    refs = list(dict.fromkeys(reversed(refs)))[:3]
    lines = [
        REMINDER_HEADING,
        f"- Active request: {request}",
        f"- At the cut: {doing}",
        f"- Next step: {_next_step(compacted, cut_block)}",
        f"- Read back: {', '.join(refs) if refs else '(nothing compacted to read)'}",
    ]
    return "\n".join(lines)


def assemble(
    reminder: str,
    main: str,
    digest: CompactionDigest,
    prefix: str | None = None,
    mid_turn: int | None = None,
) -> str:
    """The stored summary: reminder, summarizer text, tagged notes, split-turn part."""
    parts = [reminder, main.strip()] if main.strip() else [reminder]
    if digest.tagged_notes:
        parts.append("\n".join([TAGGED_NOTES_HEADING, *digest.tagged_notes]))
    if prefix is not None:
        if mid_turn is not None:
            heading = mid_turn_heading(mid_turn)
            parts.append(f"{heading}\n{prefix.strip()}\n[/MID-TURN COMPACTION {mid_turn}]")
        else:
            parts.append(f"{SPLIT_TURN_HEADING}\n{prefix.strip()}")
    text = "\n\n".join(parts)
    global _stripped
    main = main.strip()
    _stripped = (text, main) if prefix is None and _reads_back(reminder, main, digest) else None
    return text


_stripped: tuple[str, str] | None = None
"""The newest summary :func:`assemble` made and what :func:`strip_rebuilt_sections`
returns for it, when that is known without reading it again."""


def _reads_back(reminder: str, main: str, digest: CompactionDigest) -> bool:
    """``strip_rebuilt_sections`` of the summary assembled from these parts (no split-turn
    part) is ``main``: ``main`` is the inventory's newest summary, whose lines are plain
    and which starts with ``## Goal`` (see ``summarizers._sections``), the reminder is its
    five lines, and no tagged note is a heading or a mid-turn marker."""
    if carried(main) is None or not newline_only(reminder) or reminder.count("\n") != 4:
        return False
    notes = digest.tagged_notes
    if not notes:
        return True
    joined = "\n".join(notes)
    return (
        newline_only(joined)
        and joined.count("\n") == len(notes) - 1
        and not any(n.startswith("## ") or _MID_TURN.match(n) for n in notes)
    )


def _mid_turn_start(text: str) -> int:
    """``_MID_TURN.search(text).start()`` (-1: none), trying only where its text is."""
    i = text.find(_MID_TURN_TEXT)
    while i >= 0:
        if (i == 0 or text[i - 1] == "\n") and _MID_TURN.match(text, i):
            return i
        i = text.find(_MID_TURN_TEXT, i + 1)
    return -1


def strip_rebuilt_sections(text: str) -> str:
    """The previous summary without the parts every compaction rebuilds (reminder, tagged
    notes, mid-turn checkpoint): what a summarizer should merge."""
    known = _stripped
    if known is not None and text == known[0]:
        return known[1]
    mid = _mid_turn_start(text)
    if mid >= 0:
        text = text[:mid]
    if newline_only(text):
        return _strip_sections(text)
    out: list[str] = []
    skipping = False
    for line in text.splitlines():
        if line.startswith("## "):
            skipping = line.strip() in (REMINDER_HEADING, TAGGED_NOTES_HEADING)
        if not skipping:
            out.append(line)
    return "\n".join(out).strip()


_REBUILT: Final = (REMINDER_HEADING, TAGGED_NOTES_HEADING)


def _strip_sections(text: str) -> str:
    """The line loop of :func:`strip_rebuilt_sections` for a text whose only line break
    is ``\n``, a section (from one ``## `` line to the next) at a time."""
    heads = [0] if text.startswith("## ") else []
    i = text.find("\n## ")
    while i >= 0:
        heads.append(i + 1)
        i = text.find("\n## ", i + 1)
    kept: list[str] = []
    skipping = False
    start = 0
    for h in heads:
        if h and not skipping:
            kept.append(text[start : h - 1])
        eol = text.find("\n", h)
        skipping = text[h : len(text) if eol < 0 else eol].strip() in _REBUILT
        start = h
    if not skipping:
        kept.append(text[start:])
    return "\n".join(kept).strip()
