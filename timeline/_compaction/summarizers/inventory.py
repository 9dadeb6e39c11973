"""The deterministic inventory summarizer (the default; no model).

Fills the structured sections (Goal, Progress, Key Decisions...) from the blocks and the
digest, merges them with the previous summary's sections section by section (nothing
from an earlier summary is dropped unless the size cap forces the oldest progress lines
out), and lists every user request verbatim up to a per-request cap so no request
disappears across compactions, unless even the shortest cap would break ``max_tokens``:
then the older requests fold (counted, still in the turn log). The summary never exceeds
``max_tokens`` (chars/4).

The previous sections come as data (``request.previous_sections``), and the summary's own
sections go back as data (:meth:`InventorySummarizer.summarize_sections`): a summary's
text is never parsed. A previous summary without sections (another summarizer's text, or
one stored by an earlier version) is carried verbatim under ``## Earlier Summary``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Final

import attrs
import msgspec

from timeline._compaction.digest import USER_REQUEST_MIN_CHARS, CompactionDigest, cap_request
from timeline._compaction.quoting import quote
from timeline._compaction.sections import SummarySections
from timeline._compaction.speakers import speaks
from timeline._compaction.summarizers._chat import CONVERSATION, conversation_summary
from timeline._compaction.summarizers._fact_pick import fact_lines, merge_facts, pick_facts
from timeline._compaction.summarizers._facts import window_facts
from timeline._compaction.summarizers._goal import goal_of
from timeline._compaction.summarizers._page import Page
from timeline._compaction.summarizers._prefix import prefix_summary
from timeline._compaction.summarizers._progress import results_by_call, turn_items
from timeline._compaction.summarizers._sentences import (
    CONSTRAINT,
    NEXT,
    clip_line,
    clip_lines,
    matching_sentences,
)
from timeline._compaction.summarizers.base import SummaryRequest, SummaryResult, within
from timeline._compaction.textscan import has_text
from timeline._model import (
    ASSISTANT_COMPLETION,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
)

__all__ = ["LIST_CAPS", "InventorySummarizer"]

LIST_CAPS: Final = {
    "constraints": 15,
    "done": 40,
    "not_started": 10,
    "blocked": 8,
    "decisions": 15,
    "critical": 20,
    "files": 60,
}
_CAP_LADDER: Final = (600, 240, 120, 60)
_FOLD_STEP: Final = 8
"""Requests fold in steps of this many, so the request lines shift rarely."""
FACT_SHARE: Final = 0.7
"""The share of an agent's summary its facts get at least, when they need it (the other
sections shrink first: their items are the agent's own words, the facts what it read)."""
EARLIER_SHARE: Final = 3
"""Summaries carried verbatim take at most 1/3 of the summary's size."""


def _listed_chars(requests: list[str]) -> int:
    """The characters request lines take (``- `` and a line break each)."""
    return sum(map(len, requests)) + 3 * len(requests)


def _dedupe(*parts: Sequence[str]) -> list[str]:
    """The non-empty items of ``parts`` in order, each once."""
    return list(dict.fromkeys(filter(None, itertools.chain(*parts))))


def _previous(request: SummaryRequest) -> SummarySections:
    """The sections the summary extends: the previous ones as data, or the previous text
    carried verbatim when it has none."""
    if request.previous_sections is not None:
        return request.previous_sections
    text = request.previous_summary.strip()
    return SummarySections(earlier=[text] if text else [])


def _earlier(texts: list[str], max_tokens: int) -> list[str]:
    """The verbatim summaries within their share of the size: cut at a word, the rest
    counted (``[... N more chars]``)."""
    joined = "\n\n".join(texts)
    share = max_tokens * 4 // EARLIER_SHARE
    return texts if len(joined) <= share else [cap_request(joined, max(0, share - 30))]


def _critical(digest: CompactionDigest) -> list[str]:
    """Critical Context the window adds besides its facts: artifacts, hidden blocks."""
    out = []
    for a in digest.artifacts + digest.streamed_artifacts:
        streamed = ", streamed" if a.visibility == "external" else ""
        out.append(clip_line(f"artifact {quote(a.path)} ({a.kind or a.mime}{streamed})"))
    for h in digest.hidden_blocks:
        out.append(clip_line(f"hidden {h.path}: {h.replacement_text or '(omitted)'}"))
    return out


def _lists(
    request: SummaryRequest, prev: SummarySections, prompts: list[str]
) -> dict[str, list[str]]:
    """Each bulleted section: the previous items, then what the window adds (``prompts``:
    the window's prompts). Errors, decisions and values are facts."""
    blocks = request.blocks
    results = results_by_call(blocks)
    done, in_progress, waiting = turn_items(blocks, results)
    active = {b.turn_id for b in blocks if b.type in (REACT_TOOL_CALL, ASSISTANT_COMPLETION)}
    return {
        "constraints": _dedupe(prev.constraints, matching_sentences(prompts, CONSTRAINT)),
        "done": _dedupe(prev.done, prev.in_progress, done),
        "in_progress": in_progress,
        "not_started": _dedupe(
            [i for i in prev.not_started if i.split(":")[0] not in active], waiting
        ),
        "blocked": list(prev.blocked),
        "decisions": list(prev.decisions),  # (the window's decisions are facts)
        "critical": _dedupe(
            prev.critical,
            prev.original_request,
            prev.early_progress,
            prev.context_for_suffix,
            _critical(request.digest),
        ),
    }


def _shown(page: Page, caps: dict[str, int]) -> dict[str, int]:
    """How many items each list shows at ``caps`` (a cap over a list's length shows it
    whole: scaling it down changes nothing)."""
    lengths = {name: len(items) for name, items in page.lists.items()}
    lengths["files"] = page.file_count
    return {name: min(cap, lengths.get(name, 0)) for name, cap in caps.items()}


def _form(request: SummaryRequest, prev: SummarySections) -> str:
    """``"conversation"`` for people talking (no tool use so far: in the summary it
    extends, the blocks it replaces or the prompt they are part of), else ``"agent"``."""
    if prev.form == CONVERSATION or (prev.form == "" and request.previous_sections is None):
        tools = (REACT_TOOL_CALL, REACT_TOOL_RESULT)
        if not any(b.type in tools for b in (*request.blocks, *request.context)):
            return CONVERSATION
    return "agent"


def _goal(
    request: SummaryRequest, prev: SummarySections, prompts: list[str], form: str
) -> list[str]:
    """The previous Goal; else the task the user asked for (a greeting is never one): in
    the window's prompts, or in the digest's requests when the window has none or
    extends a summary carried verbatim (whose Goal is not read out of it). A
    conversation looks at its first messages only, once, and between named people only
    a request counts."""
    if prev.goal:
        return prev.goal
    requests = request.digest.user_requests
    asked = requests if requests and (not prompts or prev.earlier) else prompts
    cap = request.user_prompt_cap_chars
    if form != CONVERSATION:
        goal = goal_of(asked, cap)
    elif prev.facts or prev.people:
        return []  # asked for nothing at the start: a conversation has no goal
    else:
        goal = goal_of(asked[:3], cap, people=any(map(speaks, asked[:3])))
    return [goal] if goal else []


def _next_steps(prev: SummarySections, completions: list[str]) -> list[str]:
    """The next steps the window's last reply names, else the previous ones."""
    if not completions:
        return prev.next_steps
    return matching_sentences(completions[-1:], NEXT)[:5]


@attrs.frozen
class InventorySummarizer:
    """Deterministic structured summary; the fallback for every other summarizer."""

    name: str = "inventory"

    def summarize(self, request: SummaryRequest) -> str:
        return self.summarize_sections(request).text

    def summarize_sections(self, request: SummaryRequest) -> SummaryResult:
        """The summary's text and its sections as data (what the next summary extends),
        within ``request.max_tokens``."""
        if request.kind == "turn_prefix":
            return within(request, prefix_summary(request))
        prev = _previous(request)
        blocks = request.blocks
        prompts = [b.text for b in blocks if b.type == USER_PROMPT and has_text(b.text)]
        completions = [
            b.text for b in blocks if b.type == ASSISTANT_COMPLETION and has_text(b.text)
        ]
        form = _form(request, prev)
        conversation = form == CONVERSATION
        digest = request.digest
        changes = {op.call_id for op in (*digest.file_writes, *digest.file_patches)}
        found = window_facts(blocks, messages=conversation, confirming=changes)
        facts = merge_facts(prev.facts, found)
        goal = _goal(request, prev, prompts, form)
        earlier = _earlier(prev.earlier, request.max_tokens)
        if conversation:
            prev = msgspec.structs.replace(prev, earlier=earlier)
            return within(request, conversation_summary(blocks, prev, facts, goal))
        page = Page(
            _lists(request, prev, prompts),
            goal,
            _next_steps(prev, completions),
            request.digest,
            earlier,
            facts,
        )

        def fit(budget_chars: int) -> SummaryResult:
            return SummaryResult(self._fit_facts(request, page, budget_chars), page.sections())

        return within(request, fit)

    def _fit_facts(self, request: SummaryRequest, page: Page, budget_chars: int) -> str:
        """The page within ``budget_chars``: the other sections fitted first into what
        the facts leave them (at least ``1 - FACT_SHARE`` of the size), then the facts
        worth most per character in the room left; whole lines go from the end only if
        the other sections at their shortest are still too long."""
        wanted = len("\n".join(fact_lines(page.facts))) + 2
        rest = max(budget_chars - wanted, int(budget_chars * (1 - FACT_SHARE)))
        page.pick([])  # (a refit starts over)
        text = self._fit(request, page, rest)
        page.pick(pick_facts(page.facts, budget_chars - len(text) - 2))
        if page.picked:
            assert page.last is not None
            text = page.render(*page.last)
        return text if len(text) <= budget_chars else clip_lines(text, budget_chars)

    def _fit(self, request: SummaryRequest, page: Page, budget_chars: int) -> str:
        """The page rendered within ``budget_chars`` (its facts not listed yet)."""
        requests_at = page.requests_at
        render = page.render

        # At most three renders: as is; list caps scaled down in one step; then the
        # per-request cap computed from what the requests may still take. Every request
        # stays listed, even if that alone is over the soft cap.
        caps = dict(LIST_CAPS)
        cap_chars = request.user_prompt_cap_chars
        size = page.size(caps, cap_chars)  # (the text is built only when it is kept)
        if size <= budget_chars:
            return render(caps, cap_chars)
        scale = budget_chars / size
        shown = _shown(page, caps)
        caps = {k: max(3, int(n * scale)) for k, n in shown.items()}
        size = page.size(caps, cap_chars)
        requests = request.digest.user_requests
        if size <= budget_chars or not requests:
            return render(caps, cap_chars)
        listed = _listed_chars(requests_at(cap_chars))
        room = budget_chars - (size - listed)
        marker = 30  # the " [... N more chars]" a capped request gains
        fit = room // len(requests) - marker
        # a fixed ladder, so consecutive summaries repeat identical request lines
        cap_chars = next(
            (c for c in _CAP_LADDER if c <= min(cap_chars, fit)), USER_REQUEST_MIN_CHARS
        )
        text = render(caps, cap_chars)
        if len(text) <= budget_chars:
            return text
        return self._fold(page, budget_chars, caps, cap_chars)

    @staticmethod
    def _fold(page: Page, budget_chars: int, caps: dict[str, int], cap_chars: int) -> str:
        """Over the cap even with every request at its shortest: fold the older requests
        (the first, the goal, stays; the newest that fit stay; the folded ones are counted
        and remain in the turn log); while that is not enough, halve what each list shows
        and fold again; at the end whole lines go from the end (by the caller). The
        summary never exceeds ``max_tokens`` at any session length.
        """
        fold_line = 120  # the "(N earlier requests omitted ...)" line a fold may add
        listed = page.requests_at(cap_chars)
        while True:
            text = page.render(caps, cap_chars)
            room = budget_chars - (len(text) - _listed_chars(listed)) - fold_line
            keep = 0
            for r in reversed(listed[1:]):
                room -= len(r) + 3
                if room < 0:
                    break
                keep += 1
            # a fixed step, so consecutive summaries fold at the same lines
            keep -= keep % _FOLD_STEP if keep >= _FOLD_STEP else 0
            text = page.render(caps, cap_chars, keep)
            shown = _shown(page, caps)
            if len(text) <= budget_chars or max(shown.values(), default=0) <= 1:
                return text
            caps = {name: max(1, n // 2) for name, n in shown.items()}
