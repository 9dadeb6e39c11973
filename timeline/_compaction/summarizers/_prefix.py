"""The inventory summary of a split turn's prefix (the start of a turn the cut falls
inside): the turn's original request, its follow-ups, the tool calls made so far, the
context the kept part continues from, and the facts of the prefix's tool output. A
conversation's prefix (no tool calls) names the request it started with, if any, its last
two messages and the facts of its messages.

The facts come last and get at least half the size when they need it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from timeline._compaction.quoting import quote, quote_capped
from timeline._compaction.sections import Fact, SummarySections
from timeline._compaction.speakers import speaks
from timeline._compaction.summarizers._fact_pick import fact_lines, pick_facts
from timeline._compaction.summarizers._facts import window_facts
from timeline._compaction.summarizers._goal import goal_of
from timeline._compaction.summarizers._progress import results_by_call, tool_line
from timeline._compaction.summarizers._sentences import clip_line, clip_lines
from timeline._compaction.summarizers.base import SummaryRequest, SummaryResult
from timeline._compaction.textscan import has_text
from timeline._model import (
    ASSISTANT_COMPLETION,
    REACT_NOTE,
    REACT_TOOL_CALL,
    USER_PROMPT,
)

__all__ = ["prefix_summary"]

_NO_ORIGINAL: Final = "(the request came before this part of the turn)"


def prefix_summary(request: SummaryRequest) -> Callable[[int], SummaryResult]:
    """The prefix summary at a size (characters)."""
    blocks = request.blocks
    cap = request.user_prompt_cap_chars
    prompts = [b for b in blocks if b.type == USER_PROMPT and has_text(b.text)]
    calls = [b for b in blocks if b.type == REACT_TOOL_CALL]
    if not calls:  # a conversation: its messages are facts, not requests and progress
        texts = [b.text for b in prompts]
        original = goal_of(texts, cap, people=any(map(speaks, texts)))
        said = [b for b in blocks if b.type in (USER_PROMPT, ASSISTANT_COMPLETION)]
        context = [clip_line(b.text, 160) for b in said if has_text(b.text)][-2:]
        lines = ["### Original Request", original or _NO_ORIGINAL, ""]
        lines += ["### Early Progress", "- (no tool calls)", "", "### Context for Suffix"]
        lines += [f"- {c}" for c in context] or ["- (none)"]
        facts = window_facts(blocks, messages=True)
        return _fitter(lines, facts, original, [], context)
    original = quote_capped(prompts[0].text, cap) if prompts else ""
    lines = ["### Original Request", original or _NO_ORIGINAL, ""]
    if len(prompts) > 1:  # follow-ups and steers that arrived during the turn
        lines += ["### Follow-ups", *(f"- {quote_capped(p.text, cap)}" for p in prompts[1:])]
        lines.append("")
    results = results_by_call(blocks)
    progress = [tool_line(b, results.get(b.call_id or "", ())) for b in calls][-20:]
    context = [
        clip_line(b.text)
        for b in blocks
        if b.type in (ASSISTANT_COMPLETION, REACT_NOTE) and has_text(b.text)
    ][-4:]
    lines.append("### Early Progress")
    lines += [f"- {p}" for p in progress] or ["- (no tool calls)"]
    lines += ["", "### Context for Suffix"]
    lines += [f"- {c}" for c in context] or ["- (none)"]
    digest = request.digest
    changes = {op.call_id for op in (*digest.file_writes, *digest.file_patches)}
    facts = window_facts(blocks, messages=False, confirming=changes)
    return _fitter(lines, facts, original, progress, context)


def _fitter(
    lines: list[str], facts: list[Fact], original: str, progress: list[str], context: list[str]
) -> Callable[[int], SummaryResult]:
    """The prefix summary at a size: ``lines``, then the facts that fit."""
    heading = "### Facts"
    wanted = len("\n".join(fact_lines(facts))) + len(heading) + 2
    whole = "\n".join(lines).rstrip()

    def fit(budget_chars: int) -> SummaryResult:
        fixed_room = max(budget_chars - wanted, budget_chars // 2)  # (what the turn did first)
        fixed = whole if len(whole) <= fixed_room else clip_lines(whole, fixed_room)
        picked = pick_facts(facts, budget_chars - len(fixed) - len(heading) - 3)
        text = f"{fixed}\n\n{heading}\n" + "\n".join(fact_lines(picked)) if picked else fixed
        sections = SummarySections(
            original_request=[quote(original)] if original else [],
            early_progress=progress,
            context_for_suffix=context,
            facts=picked,
        )
        fitted = text if len(text) <= budget_chars else clip_lines(text, budget_chars)
        return SummaryResult(fitted, sections)

    return fit
