"""The deterministic inventory summarizer (the default; no model).

Fills seed 000's structured sections from the blocks and the digest, merges them with
the previous summary's sections section by section (nothing from an earlier summary is
dropped unless the size cap forces the oldest progress lines out), and lists every user
request verbatim up to a per-request cap so no request disappears across compactions,
unless even the shortest cap would break ``max_tokens``: then the older requests fold
(counted, still in the turn log). The summary never exceeds ``max_tokens`` (chars/4).

The previous sections come as data (``request.previous_sections``), and the summary's own
sections go back as data (:meth:`InventorySummarizer.summarize_sections`): a summary's
text is never parsed. A previous summary without sections (another summarizer's text, or
one stored by an earlier version) is carried verbatim under ``## Earlier Summary``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Final

import attrs

from timeline.compaction.digest import USER_REQUEST_MIN_CHARS, CompactionDigest, cap_request
from timeline.compaction.sections import SummarySections
from timeline.compaction.summarizers._page import Page
from timeline.compaction.summarizers._progress import results_by_call, tool_line, turn_items
from timeline.compaction.summarizers._sentences import (
    CONSTRAINT,
    DECISION,
    NEXT,
    clip_line,
    clip_lines,
    matching_sentences,
)
from timeline.compaction.summarizers.base import SummaryRequest, SummaryResult
from timeline.compaction.textscan import first_line, has_text
from timeline.model.block import (
    ASSISTANT_COMPLETION,
    REACT_NOTE,
    REACT_TOOL_CALL,
    USER_PROMPT,
    Block,
)
from timeline.model.block_types import block_type

__all__ = ["LIST_CAPS", "InventorySummarizer"]

LIST_CAPS: Final = {
    "constraints": 15,
    "done": 40,
    "not_started": 10,
    "blocked": 8,
    "decisions": 15,
    "critical": 20,
}
_CAP_LADDER: Final = (600, 240, 120, 60)
_FOLD_STEP: Final = 8
"""Requests fold in steps of this many, so the request lines shift rarely."""
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


def _critical(blocks: Sequence[Block], digest: CompactionDigest) -> list[str]:
    """Critical Context the window adds: notes and other text blocks, memory reads, the
    last commands and their output, artifacts, searches, hidden blocks."""
    out = []
    for b in blocks:
        spec = block_type(b.type)
        if b.type == REACT_NOTE or (
            spec.render == "text" and spec.type not in (USER_PROMPT, ASSISTANT_COMPLETION)
        ):
            out.append(clip_line(f"{spec.label} {b.text}"))
    for hit in digest.memory_reads:
        out.append(clip_line(f"memory_read {hit.query!r} -> {', '.join(hit.paths) or 'no hits'}"))
    for ex in digest.exec_outputs[-5:]:
        head = ex.output_head.strip().splitlines()[-1] if ex.output_head.strip() else ""
        out.append(clip_line(f"{ex.command} -> {head}"))
    for a in digest.artifacts + digest.streamed_artifacts:
        streamed = ", streamed" if a.visibility == "external" else ""
        out.append(clip_line(f"artifact {a.path} ({a.kind or a.mime}{streamed})"))
    for search in digest.searches[-5:]:
        hits = "?" if search.hits is None else search.hits
        out.append(clip_line(f"{search.tool} {search.query!r} -> {hits} hits"))
    for h in digest.hidden_blocks:
        out.append(clip_line(f"hidden {h.path}: {h.replacement_text or '(omitted)'}"))
    return out


def _lists(
    request: SummaryRequest, prev: SummarySections, prompts: list[str], completions: list[str]
) -> dict[str, list[str]]:
    """Each bulleted section: the previous items, then what the window adds (``prompts``
    and ``completions``: the window's texts of each)."""
    blocks = request.blocks
    results = results_by_call(blocks)
    done, in_progress, waiting = turn_items(blocks, results)
    active = {b.turn_id for b in blocks if b.type in (REACT_TOOL_CALL, ASSISTANT_COMPLETION)}
    blocked = [
        clip_line(f"{r.tool_id or 'tool'}: {first_line(r.text)}")
        for rs in results.values()
        for r in rs
        if r.meta.get("is_error")
    ]
    return {
        "constraints": _dedupe(prev.constraints, matching_sentences(prompts, CONSTRAINT)),
        "done": _dedupe(prev.done, prev.in_progress, done),
        "in_progress": in_progress,
        "not_started": _dedupe(
            [i for i in prev.not_started if i.split(":")[0] not in active], waiting
        ),
        "blocked": _dedupe(prev.blocked, blocked),
        "decisions": _dedupe(prev.decisions, matching_sentences(completions, DECISION)),
        "critical": _dedupe(
            prev.critical,
            prev.original_request,
            prev.early_progress,
            prev.context_for_suffix,
            _critical(blocks, request.digest),
        ),
    }


def _goal(request: SummaryRequest, prev: SummarySections, prompts: list[str]) -> list[str]:
    """The previous Goal; else the conversation's first request: the window's first
    prompt, or the digest's first request (already capped) when the window has none or
    extends a summary carried verbatim (whose Goal is not read out of it)."""
    if prev.goal:
        return prev.goal
    requests = request.digest.user_requests
    if prompts and not (prev.earlier and requests):
        return [cap_request(prompts[0], request.user_prompt_cap_chars)]
    return requests[:1]


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
        """The summary's text and its sections as data (what the next summary extends)."""
        if request.kind == "turn_prefix":
            return self._turn_prefix(request)
        prev = _previous(request)
        blocks = request.blocks
        prompts = [b.text for b in blocks if b.type == USER_PROMPT and has_text(b.text)]
        completions = [
            b.text for b in blocks if b.type == ASSISTANT_COMPLETION and has_text(b.text)
        ]
        page = Page(
            _lists(request, prev, prompts, completions),
            _goal(request, prev, prompts),
            _next_steps(prev, completions),
            request.digest,
            _earlier(prev.earlier, request.max_tokens),
        )
        text = self._fit(request, page)
        return SummaryResult(text, page.sections())

    def _fit(self, request: SummaryRequest, page: Page) -> str:
        """The page rendered within ``max_tokens``."""
        requests_at = page.requests_at
        render = page.render

        # At most three renders: as is; list caps scaled down in one step; then the
        # per-request cap computed from what the requests may still take. Every request
        # stays listed, even if that alone is over the soft cap.
        budget_chars = request.max_tokens * 4
        caps = dict(LIST_CAPS)
        cap_chars = request.user_prompt_cap_chars
        size = page.size(caps, cap_chars)  # (the text is built only when it is kept)
        if size <= budget_chars:
            return render(caps, cap_chars)
        scale = budget_chars / size
        caps = {k: max(3, int(v * scale)) for k, v in caps.items()}
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
        return self._fold(text, budget_chars, render, caps, requests_at(cap_chars), cap_chars)

    @staticmethod
    def _fold(
        text: str,
        budget_chars: int,
        render: Callable[[dict[str, int], int, int | None], str],
        caps: dict[str, int],
        listed: list[str],
        cap_chars: int,
    ) -> str:
        """Over the cap even with every request at its shortest: fold the older requests
        (the first, the goal, stays; the newest that fit stay; the folded ones are counted
        and remain in the turn log), then shorten the lists, then drop whole lines from
        the end. The summary never exceeds ``max_tokens`` (chars/4) at any session length.
        """
        fold_line = 120  # the "(N earlier requests omitted ...)" line a fold may add
        room = budget_chars - (len(text) - _listed_chars(listed)) - fold_line
        keep = 0
        for r in reversed(listed[1:]):
            room -= len(r) + 3
            if room < 0:
                break
            keep += 1
        # a fixed step, so consecutive summaries fold at the same lines
        keep -= keep % _FOLD_STEP if keep >= _FOLD_STEP else 0
        text = render(caps, cap_chars, keep)
        if len(text) <= budget_chars:
            return text
        text = render(dict.fromkeys(caps, 1), cap_chars, 0)
        return text if len(text) <= budget_chars else clip_lines(text, budget_chars)

    def _turn_prefix(self, request: SummaryRequest) -> SummaryResult:
        blocks = request.blocks
        prompts = [b for b in blocks if b.type == USER_PROMPT and b.text.strip()]
        results = results_by_call(blocks)
        progress = [
            tool_line(b, results.get(b.call_id or "", ()))
            for b in blocks
            if b.type == REACT_TOOL_CALL
        ][-20:]
        context = [
            clip_line(b.text)
            for b in blocks
            if b.type in (ASSISTANT_COMPLETION, REACT_NOTE) and has_text(b.text)
        ][-4:]
        original = cap_request(prompts[0].text, request.user_prompt_cap_chars) if prompts else ""
        lines = ["### Original Request", original or _NO_ORIGINAL, ""]
        if len(prompts) > 1:  # follow-ups and steers that arrived during the turn
            cap = request.user_prompt_cap_chars
            lines += ["### Follow-ups", *(f"- {cap_request(p.text, cap)}" for p in prompts[1:])]
            lines.append("")
        lines.append("### Early Progress")
        lines += [f"- {p}" for p in progress] or ["- (no tool calls)"]
        lines += ["", "### Context for Suffix"]
        lines += [f"- {c}" for c in context] or ["- (none)"]
        text = "\n".join(lines)
        budget_chars = request.max_tokens * 4
        sections = SummarySections(
            original_request=[line.strip() for line in original.splitlines() if line.strip()],
            early_progress=progress,
            context_for_suffix=context,
        )
        fitted = text if len(text) <= budget_chars else clip_lines(text, budget_chars)
        return SummaryResult(fitted, sections)


_NO_ORIGINAL: Final = "(the request came before this part of the turn)"
