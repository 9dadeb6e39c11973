"""The inventory summary of a conversation between people (no tool use): who speaks and
over which days, the task when one was asked for, and the facts, each with its path and
day.

```
## Conversation
- Caroline and Melanie, 8 May 2023 to 3 July 2023

## Facts
- Caroline: I've been researching adoption agencies lately. [ar:t3.user.prompt, 8 May 2023]
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from timeline._compaction.quoting import quote
from timeline._compaction.sections import Fact, SummarySections
from timeline._compaction.speakers import speaker_of
from timeline._compaction.summarizers._fact_pick import fact_lines, pick_facts
from timeline._compaction.summarizers._facts import day_of
from timeline._compaction.summarizers._sentences import clip_lines
from timeline._compaction.summarizers.base import SummaryResult
from timeline._compaction.textscan import has_text
from timeline._model import ASSISTANT_COMPLETION, USER_PROMPT, Block

__all__ = ["CONVERSATION", "conversation_summary"]

CONVERSATION: Final = "conversation"
_MAX_PEOPLE: Final = 8


def _people(blocks: Sequence[Block], previous: list[str]) -> list[str]:
    """Who speaks: the names messages start with or their custom authors, first seen
    first (the previous summary's first)."""
    seen = dict.fromkeys(previous)
    for b in blocks:
        if b.type in (USER_PROMPT, ASSISTANT_COMPLETION) and has_text(b.text):
            name = speaker_of(b)
            if name:
                seen.setdefault(name)
    return list(seen)[:_MAX_PEOPLE]


def _span(blocks: Sequence[Block], previous: list[str]) -> list[str]:
    """The first and the last day of the conversation so far."""
    days = [d for d in (day_of(b.ts) for b in blocks if b.type == USER_PROMPT) if d]
    days += [d for d in (day_of(b.ts) for b in blocks[-1:]) if d]
    first = previous[:1] or days[:1]
    last = days[-1:] or previous[-1:]
    return [*first, *last] if first else []


def _who(people: list[str], span: list[str]) -> str:
    names = people or ["the user", "the assistant"]
    who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    if not span:
        return f"- {who}"
    when = f"on {span[0]}" if span[0] == span[-1] else f"{span[0]} to {span[-1]}"
    return f"- {who}, {when}"


def conversation_summary(
    blocks: Sequence[Block],
    previous: SummarySections,
    facts: Sequence[Fact],
    goal: list[str],
) -> Callable[[int], SummaryResult]:
    """The conversation form at a size: the facts worth most per character that fit
    after the heading lines."""
    people = _people(blocks, previous.people)
    span = _span(blocks, previous.span)
    head = ["## Conversation", _who([quote(p) for p in people], span), ""]
    if goal:
        head += ["## Goal", *map(quote, goal), ""]
    if previous.earlier:
        head += ["## Earlier Summary", "\n\n".join(previous.earlier), ""]
    head.append("## Facts")
    fixed = sum(map(len, head)) + len(head)

    def fit(budget_chars: int) -> SummaryResult:
        picked = pick_facts(facts, budget_chars - fixed)
        text = "\n".join([*head, *(fact_lines(picked) or ["- (none yet)"])])
        if len(text) > budget_chars:
            text = clip_lines(text, budget_chars)
        sections = SummarySections(
            goal=goal,
            earlier=previous.earlier,
            facts=picked,
            people=people,
            span=span,
            form=CONVERSATION,
        )
        return SummaryResult(text, sections)

    return fit
