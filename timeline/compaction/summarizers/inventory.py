"""The deterministic inventory summarizer (the default; no model).

Fills seed 000's structured sections from the blocks and the digest, merges them with
the previous summary section by section (nothing from an earlier summary is dropped
unless the size cap forces the oldest progress lines out), and lists every user request
verbatim up to a per-request cap so no request disappears across compactions, unless
even the shortest cap would break ``max_tokens``: then the older requests fold (counted,
still in the turn log). The summary never exceeds ``max_tokens`` (chars/4).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import attrs

from timeline.compaction.digest import USER_REQUEST_MIN_CHARS, CompactionDigest, cap_request
from timeline.compaction.summarizers._page import Page
from timeline.compaction.summarizers._sections import (
    parse_sections,
    plain_block,
    read,
    remember,
    whole_items,
)
from timeline.compaction.summarizers.base import SummaryRequest
from timeline.compaction.textscan import clip, first_line, has_text, has_word, sentences
from timeline.model.block import (
    ASSISTANT_COMPLETION,
    REACT_NOTE,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
    Block,
)
from timeline.model.block_types import block_type

__all__ = ["InventorySummarizer", "parse_sections"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|should|shouldn't|avoid|prefer|only|make sure|without)\b",
    re.IGNORECASE,
)
_CONSTRAINT_WORDS = (
    "must",
    "never",
    "always",
    "n't",
    "not",
    "should",
    "avoid",
    "prefer",
    "only",
    "make sure",
    "without",
)
_DECISION = re.compile(
    r"\b(decided|decide|will use|chose|choose|instead of|switch(?:ed)? to|opt(?:ed)? for|"
    r"going with|the fix is|root cause)\b",
    re.IGNORECASE,
)
_DECISION_WORDS = (
    "decide",
    "will use",
    "chose",
    "choose",
    "instead of",
    "switch",
    "opt",
    "going with",
    "the fix is",
    "root cause",
)
_NEXT = re.compile(r"\b(next|then|todo|remaining|need to|will)\b", re.IGNORECASE)
_NEXT_WORDS = ("next", "then", "todo", "remaining", "need to", "will")

LIST_CAPS: Final = {
    "constraints": 15,
    "done": 40,
    "not_started": 10,
    "blocked": 8,
    "decisions": 15,
    "critical": 20,
}
LINE_CAP: Final = 240
ITEM_CAP: Final = 160
"""A Progress item quotes its turn's reply (the first sentence) up to this many chars."""
_CAP_LADDER: Final = (600, 240, 120, 60)
_FOLD_STEP: Final = 8
"""Requests fold in steps of this many, so the request lines shift rarely."""


def _sentences(text: str) -> list[str]:
    return sentences(text)  # [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _sentence_end(text: str, stop: int) -> int:
    """Where the first sentence of ``text[:stop]`` ends (``stop`` if it does not): the
    first place ``_SENTENCE`` splits, found with ``str.find`` (the regex engine tries
    every position: several times slower on long texts without a sentence end)."""
    end = text.find("\n", 0, stop)
    end = stop if end < 0 else end
    last = len(text) - 1
    for mark in ".!?":
        i = text.find(mark, 0, end)
        while 0 <= i < last and not text[i + 1].isspace():
            i = text.find(mark, i + 1, end)
        if 0 <= i < last:
            end = i + 1
    return end


def _first_sentence(text: str, shown: int) -> str:
    """The first sentence of ``text`` as far as ``_clip(..., shown)`` shows it: a long
    text is only searched as far as its shown part can reach."""
    text = text.strip()
    window = min(len(text), 2 * shown)
    end = _sentence_end(text, window)
    if end == window < len(text) and len(" ".join(text[:window].split())) <= shown:
        end = _sentence_end(text, len(text))  # mostly whitespace: look further
    return text[:end]


def _matching_sentences(
    texts: Iterable[str], pattern: re.Pattern[str], words: tuple[str, ...]
) -> list[str]:
    """Sentences of ``texts`` that ``pattern`` finds a match in. ``words`` are substrings
    every match contains: a text without any of them is not searched (most are not)."""
    out = []
    for text in texts:
        low = text.lower()
        if any(w in low for w in words):
            out += [_clip(s) for s in _sentences(text) if has_word(pattern, words, s)]
    return out


def _first_line(text: str) -> str:
    return first_line(text)


def _clip(text: str, cap: int = LINE_CAP) -> str:
    return clip(text, cap)


def _clip_lines(text: str, budget_chars: int) -> str:
    """The whole lines of ``text`` that fit in ``budget_chars`` (the first one clipped if
    even it does not): the last resort that keeps a summary within its cap."""
    lines = text.split("\n")
    kept: list[str] = []
    size = -1
    for line in lines:
        size += len(line) + 1
        if size > budget_chars:
            break
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) if kept else _clip(lines[0], max(4, budget_chars))[:budget_chars]


def _listed_chars(requests: list[str]) -> int:
    """The characters request lines take (``- `` and a line break each)."""
    return sum(map(len, requests)) + 3 * len(requests)


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(filter(None, items)))


def _tool_line(call: Block, results: Sequence[Block]) -> str:
    params = call.text if len(call.text) <= 120 else call.text[:117] + "..."
    status = ""
    if any(r.meta.get("is_error") for r in results):
        status = " (error)"
    elif not results:
        status = " (no result)"
    return _clip(f"{call.tool_id} {params}{status} [turn {call.turn_id}]")


def _tools_used(calls: Sequence[Block], results: dict[str, list[Block]]) -> str:
    """``read_file x2, bash; 1 failed``: which tools a turn called, in first-call order."""
    counts: dict[str, int] = {}
    for c in calls:
        name = c.tool_id or "tool"
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


def _turn_items(
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
                first = _clip(_first_sentence(asked.text, ITEM_CAP), ITEM_CAP)
                not_started.append(f"{turn_id}: {first}")
            continue
        head = (
            _clip(_first_sentence(reply.text, ITEM_CAP), ITEM_CAP)
            if reply is not None
            else "(no reply yet)"
        )
        tools = f" ({_tools_used(calls, results)})" if calls else ""
        (done if reply is not None else open_).append(f"{turn_id}: {head}{tools}")
    return done, open_, not_started


def _carried(
    page: Page, text: str, steps: list[str], fresh: list[str] | None
) -> dict[str, list[str]] | None:
    """What the next summary reads from ``text``, the page's latest render: its sections'
    items as ``read`` parses them. None when ``text`` was clipped, or when an item would
    not read back as itself or a goal, request or file line would read as a heading or
    tag (then the next summary parses ``text``). ``fresh``: the items to check (None:
    all)."""
    if page.last_text is not text:
        return None
    kept = page.kept()
    check = fresh if fresh is not None else [*itertools.chain(*kept.values()), *steps]
    if not whole_items(check) or not plain_block(page.goal) or not page.plain_tail():
        return None
    sections = {
        "Goal": list(filter(None, map(str.strip, page.goal.split("\n")))),
        "Constraints & Preferences": kept["constraints"],
        "Done": kept["done"],
        "In Progress": kept["in_progress"],
        "Not Started": kept["not_started"],
        "Blocked": kept["blocked"],
        "Key Decisions": kept["decisions"],
        "Next Steps": steps,
        "Critical Context": kept["critical"],
    }
    return {name: lines for name, lines in sections.items() if lines}


@attrs.frozen
class InventorySummarizer:
    """Deterministic structured summary; the fallback for every other summarizer."""

    name: str = "inventory"

    def summarize(self, request: SummaryRequest) -> str:
        if request.kind == "turn_prefix":
            return self._turn_prefix(request)
        return self._history(request)

    def _history(self, request: SummaryRequest) -> str:
        prev, from_carry = read(request.previous_summary)
        blocks = request.blocks
        prompts = [b for b in blocks if b.type == USER_PROMPT and has_text(b.text)]
        completions = [b for b in blocks if b.type == ASSISTANT_COMPLETION and has_text(b.text)]
        results: dict[str, list[Block]] = {}
        for b in blocks:
            if b.type == REACT_TOOL_RESULT and b.call_id:
                results.setdefault(b.call_id, []).append(b)
        turns_done, turns_open, turns_waiting = _turn_items(blocks, results)
        active = {b.turn_id for b in blocks if b.type in (REACT_TOOL_CALL, ASSISTANT_COMPLETION)}
        not_started = _dedupe(
            [i for i in prev.get("Not Started", []) if i.split(":")[0] not in active]
            + turns_waiting
        )

        first_request = prompts[0].text if prompts else (request.digest.user_requests or [""])[0]
        goal = prev.get("Goal") or (
            [cap_request(first_request, request.user_prompt_cap_chars)] if first_request else []
        )
        new_constraints = _matching_sentences(
            (p.text for p in prompts), _CONSTRAINT, _CONSTRAINT_WORDS
        )
        constraints = _dedupe(prev.get("Constraints & Preferences", []) + new_constraints)
        done = _dedupe(prev.get("Done", []) + prev.get("In Progress", []) + turns_done)
        in_progress = turns_open
        new_blocked = [
            _clip(f"{r.tool_id or 'tool'}: {_first_line(r.text)}")
            for rs in results.values()
            for r in rs
            if r.meta.get("is_error")
        ]
        blocked = _dedupe(prev.get("Blocked", []) + new_blocked)
        new_decisions = _matching_sentences(
            (c.text for c in completions), _DECISION, _DECISION_WORDS
        )
        decisions = _dedupe(prev.get("Key Decisions", []) + new_decisions)
        next_steps = (
            _matching_sentences([completions[-1].text], _NEXT, _NEXT_WORDS)[:5]
            if completions
            else prev.get("Next Steps", [])
        )
        new_critical = self._critical(blocks, request.digest)
        critical = _dedupe(
            prev.get("Critical Context", [])
            + prev.get("Original Request", [])
            + prev.get("Early Progress", [])
            + prev.get("Context for Suffix", [])
            + new_critical
        )
        page = Page(
            {
                "constraints": constraints,
                "done": done,
                "in_progress": in_progress,
                "not_started": not_started,
                "blocked": blocked,
                "decisions": decisions,
                "critical": critical,
            },
            goal,
            next_steps,
            request.digest,
        )
        text = self._fit(request, page)
        # items this window added (the carried ones were whole when first carried)
        fresh = None
        if from_carry:
            fresh = [
                *turns_done,
                *turns_open,
                *turns_waiting,
                *new_constraints,
                *new_blocked,
                *new_decisions,
                *(next_steps if completions else ()),
                *new_critical,
            ]
        remember(text, _carried(page, text, next_steps, fresh))
        return text

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
        return text if len(text) <= budget_chars else _clip_lines(text, budget_chars)

    @staticmethod
    def _critical(blocks: Sequence[Block], digest: CompactionDigest) -> list[str]:
        out = []
        for b in blocks:
            spec = block_type(b.type)
            if b.type == REACT_NOTE or (
                spec.render == "text" and spec.type not in (USER_PROMPT, ASSISTANT_COMPLETION)
            ):
                out.append(_clip(f"{spec.label} {b.text}"))
        for hit in digest.memory_reads:
            out.append(_clip(f"memory_read {hit.query!r} -> {', '.join(hit.paths) or 'no hits'}"))
        for ex in digest.exec_outputs[-5:]:
            head = ex.output_head.strip().splitlines()[-1] if ex.output_head.strip() else ""
            out.append(_clip(f"{ex.command} -> {head}"))
        for a in digest.artifacts + digest.streamed_artifacts:
            streamed = ", streamed" if a.visibility == "external" else ""
            out.append(_clip(f"artifact {a.path} ({a.kind or a.mime}{streamed})"))
        for search in digest.searches[-5:]:
            hits = "?" if search.hits is None else search.hits
            out.append(_clip(f"{search.tool} {search.query!r} -> {hits} hits"))
        for h in digest.hidden_blocks:
            out.append(_clip(f"hidden {h.path}: {h.replacement_text or '(omitted)'}"))
        return out

    def _turn_prefix(self, request: SummaryRequest) -> str:
        blocks = request.blocks
        prompts = [b for b in blocks if b.type == USER_PROMPT and b.text.strip()]
        results: dict[str, list[Block]] = {}
        for b in blocks:
            if b.type == REACT_TOOL_RESULT and b.call_id:
                results.setdefault(b.call_id, []).append(b)
        progress = [
            _tool_line(b, results.get(b.call_id or "", ()))
            for b in blocks
            if b.type == REACT_TOOL_CALL
        ]
        context = [
            _clip(b.text)
            for b in blocks
            if b.type in (ASSISTANT_COMPLETION, REACT_NOTE) and has_text(b.text)
        ][-4:]
        original = (
            cap_request(prompts[0].text, request.user_prompt_cap_chars)
            if prompts
            else "(the request came before this part of the turn)"
        )
        lines = ["### Original Request", original, ""]
        if len(prompts) > 1:  # follow-ups and steers that arrived during the turn
            cap = request.user_prompt_cap_chars
            lines += ["### Follow-ups", *(f"- {cap_request(p.text, cap)}" for p in prompts[1:])]
            lines.append("")
        lines.append("### Early Progress")
        lines += [f"- {p}" for p in progress[-20:]] or ["- (no tool calls)"]
        lines += ["", "### Context for Suffix"]
        lines += [f"- {c}" for c in context] or ["- (none)"]
        text = "\n".join(lines)
        budget_chars = request.max_tokens * 4
        return text if len(text) <= budget_chars else _clip_lines(text, budget_chars)
