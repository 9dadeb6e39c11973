"""The inventory summary of a split turn's prefix (the start of a turn the cut falls
inside): the turn's original request, its follow-ups, the tool calls made so far, the
context the kept part continues from, and the facts of the prefix.

The facts come last and get at least :data:`FACT_SHARE` of the size when they need it;
a conversation's prefix (no tool use) is its request and its facts only.
"""

from __future__ import annotations

from typing import Final

from timeline.compaction.quoting import quote, quote_capped
from timeline.compaction.sections import SummarySections
from timeline.compaction.summarizers._fact_pick import fact_lines, pick_facts
from timeline.compaction.summarizers._facts import window_facts
from timeline.compaction.summarizers._progress import results_by_call, tool_line
from timeline.compaction.summarizers._sentences import clip_line, clip_lines
from timeline.compaction.summarizers.base import SummaryRequest, SummaryResult
from timeline.compaction.textscan import has_text
from timeline.model.block import (
    ASSISTANT_COMPLETION,
    REACT_NOTE,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
)

__all__ = ["FACT_SHARE", "prefix_summary"]

FACT_SHARE: Final = 0.7
"""The share of a summary's size its facts get at least, when they need it."""
_NO_ORIGINAL: Final = "(the request came before this part of the turn)"


def prefix_summary(request: SummaryRequest) -> SummaryResult:
    """The prefix summary within ``request.max_tokens`` (chars/4)."""
    blocks = request.blocks
    cap = request.user_prompt_cap_chars
    agent = any(b.type in (REACT_TOOL_CALL, REACT_TOOL_RESULT) for b in blocks)
    prompts = [b for b in blocks if b.type == USER_PROMPT and has_text(b.text)]
    original = quote_capped(prompts[0].text, cap) if prompts else ""
    lines = ["### Original Request", f"- {original or _NO_ORIGINAL}", ""]
    progress: list[str] = []
    context: list[str] = []
    if agent:
        results = results_by_call(blocks)
        calls = [b for b in blocks if b.type == REACT_TOOL_CALL]
        progress = [tool_line(b, results.get(b.call_id or "", ())) for b in calls][-20:]
        context = [
            clip_line(b.text)
            for b in blocks
            if b.type in (ASSISTANT_COMPLETION, REACT_NOTE) and has_text(b.text)
        ][-4:]
        if len(prompts) > 1:  # follow-ups and steers that arrived during the turn
            lines += ["### Follow-ups", *(f"- {quote_capped(p.text, cap)}" for p in prompts[1:])]
            lines.append("")
        lines.append("### Early Progress")
        lines += [f"- {p}" for p in progress] or ["- (no tool calls)"]
        lines += ["", "### Context for Suffix"]
        lines += [f"- {c}" for c in context] or ["- (none)"]
        lines.append("")
    facts = window_facts(blocks, messages=not agent)
    budget_chars = request.max_tokens * 4
    heading = "### Facts"
    wanted = len("\n".join(fact_lines(facts))) + len(heading) + 2
    fixed = "\n".join(lines).rstrip()
    fixed_room = max(budget_chars - wanted, int(budget_chars * (1 - FACT_SHARE)))
    if len(fixed) > fixed_room:
        fixed = clip_lines(fixed, fixed_room)
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
