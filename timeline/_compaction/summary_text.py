"""The stored summary text around what a summarizer wrote.

Whatever the summarizer (inventory, LLM, sliding window, truncate), every summary block
the library inserts reads, in order:

1. ``## Active Work Reminder``: the request being worked on at the cut, the last action
   before it, the next step and the paths to read back;
2. the summarizer's text;
3. ``## Tagged Notes``: every ``[P]``/``[D]``/``[S]`` line so far, verbatim;
4. the split-turn context: ``## Turn Context (split turn)`` for an older turn, or for the
   turn still running a ``[MID-TURN COMPACTION n]`` checkpoint.

The reminder, the notes and the split-turn part are rebuilt at each compaction. The text is
only ever written from these parts (kept as data in the block's ``meta``, see
:mod:`~timeline._compaction.summary_state`), never read back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from timeline._compaction.digest import CompactionDigest
from timeline._compaction.quoting import quote
from timeline._compaction.speakers import speaks
from timeline._compaction.textscan import clip, first_line, has_text, has_word, split_sentences
from timeline._model import (
    ASSISTANT_COMPLETION,
    REACT_PLAN,
    REACT_PLAN_HISTORY,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
    Block,
    block_type,
)

__all__ = [
    "REMINDER_HEADING",
    "SPLIT_TURN_HEADING",
    "TAGGED_NOTES_HEADING",
    "active_work_reminder",
    "assemble",
    "mid_turn_heading",
]

SPLIT_TURN_HEADING: Final = "## Turn Context (split turn)"
REMINDER_HEADING: Final = "## Active Work Reminder"
TAGGED_NOTES_HEADING: Final = "## Tagged Notes"
_CLIP: Final = 160
_NEXT = re.compile(r"\b(next|then|todo|remaining|need to|will)\b", re.IGNORECASE)
_NEXT_WORDS: Final = ("next", "then", "todo", "remaining", "need to", "will")


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


def _people_talking(content: Sequence[Block]) -> bool:
    """The blocks are messages, most of them starting with their speaker's name."""
    if not content or any(b.type not in (USER_PROMPT, ASSISTANT_COMPLETION) for b in content):
        return False
    return 2 * sum(speaks(b.text) for b in content) > len(content)


def active_work_reminder(
    compacted: Sequence[Block], cut_block: Block | None, digest: CompactionDigest
) -> str:
    """What the agent was doing at the cut and the next step, from the compacted blocks
    (for people talking, only where to continue and what to read back)."""
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
    if _people_talking(content):  # no request, action or step to name
        return "\n".join(
            [
                REMINDER_HEADING,
                "- At the cut: a conversation; continue from the kept messages below",
                f"- Read back: {', '.join(refs)}",
            ]
        )
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
    tagged_notes: Sequence[str],
    prefix: str | None = None,
    mid_turn: int | None = None,
) -> str:
    """The stored summary: reminder, summarizer text, tagged notes, split-turn part."""
    parts = [reminder, main.strip()] if main.strip() else [reminder]
    if tagged_notes:
        parts.append("\n".join([TAGGED_NOTES_HEADING, *map(quote, tagged_notes)]))
    if prefix is not None:
        if mid_turn is not None:
            heading = mid_turn_heading(mid_turn)
            parts.append(f"{heading}\n{prefix.strip()}\n[/MID-TURN COMPACTION {mid_turn}]")
        else:
            parts.append(f"{SPLIT_TURN_HEADING}\n{prefix.strip()}")
    return "\n\n".join(parts)
