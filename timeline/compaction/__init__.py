"""Compaction: choose the cut, build the summary requests, run summarizers safely.

The v2 algorithm with DESIGN §5's rules made exact:

* the region after the latest summary is what can be compacted;
* keep ``keep_ratio * (budget - system)`` tokens (``emergency_keep_ratio`` when forced),
  raised to cover the last ``keep_recent_turns`` turns only when they fit;
* a cut is never a tool result or a summary and never separates a tool call from any of
  its results (parallel and still-pending calls included);
* turn boundaries are preferred, then message boundaries; the cut block stays visible;
* a cut inside a turn summarizes that turn's prefix separately ("Turn Context (split
  turn)") when it has at least ``min_split_prefix_blocks`` blocks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Sequence, Set
from typing import Final, Literal

import attrs

from timeline.compaction.digest import (
    PLAN,
    PLAN_HISTORY,
    CompactionDigest,
    build_digest,
    digest_from_meta,
)
from timeline.compaction.policy import CompactionPolicy
from timeline.compaction.summarizers.base import (
    AsyncSummarizer,
    Summarizer,
    SummaryRequest,
    estimate_tokens,
)
from timeline.compaction.summarizers.inventory import InventorySummarizer
from timeline.compaction.summary_text import (
    SPLIT_TURN_HEADING,
    active_work_reminder,
    strip_rebuilt_sections,
)
from timeline.model.block import CONV_RANGE_SUMMARY, REACT_TOOL_CALL, REACT_TOOL_RESULT, Block
from timeline.model.block_types import Boundary, block_type
from timeline.model.errors import AsyncSummarizerError

__all__ = [
    "SPLIT_TURN_HEADING",
    "CompactionReason",
    "CompactionStats",
    "CutPlan",
    "SummaryPlan",
    "cut_boundary",
    "plan_cut",
    "summarize_async",
    "summarize_sync",
    "valid_cuts",
]


CompactionReason = Literal["tokens", "blocks", "forced", "manual"]


@attrs.frozen
class CompactionStats:
    """What one compaction did (passed to the hooks and returned on ``view.compaction``).

    ``tokens_after`` is None in the ``on_before_compaction`` call. The seed 002
    ``CompactionResult`` counts are ``original_block_count`` / ``compacted_block_count``
    (visible blocks before / after).
    """

    reason: CompactionReason
    tokens_before: int
    tokens_after: int | None
    compacted_blocks: int
    summary_block_count: int
    split_turn: bool
    split_turn_id: str | None
    covered_turn_ids: tuple[str, ...]
    original_block_count: int
    compacted_block_count: int | None
    summarizer: str
    summarizer_error: str | None = None
    summary_path: str | None = None
    pruned_blocks: int = 0
    """Tool results hidden by cache-TTL pruning before (or instead of) the summary."""
    skipped: str | None = None
    """Why no summary was inserted although compaction ran (None when one was): the
    summarizer failed under ``on_summary_failure="skip"``, TTL pruning was enough, or the
    summary would not have made the prompt smaller (then the timeline is unchanged and
    ``tokens_after == tokens_before``)."""
    mid_turn: int | None = None
    """n of ``[MID-TURN COMPACTION n]`` when the current turn itself was compacted."""

    def as_dict(self) -> dict[str, object]:
        """Plain data for logs and events."""
        return attrs.asdict(self)


@attrs.frozen
class CutPlan:
    """Where to cut and what the summaries cover."""

    cut: int
    history: tuple[Block, ...]
    prefix: tuple[Block, ...]
    split_turn_id: str | None
    compacted: tuple[Block, ...]
    kept_tokens: int
    mid_turn: bool = False
    """The cut falls inside the running turn: its prefix becomes a mid-turn checkpoint."""


def valid_cuts(blocks: Sequence[Block], start: int) -> list[bool]:
    """``valid[i]``: a summary may be inserted before ``blocks[i]`` (i > start).

    Invalid when ``blocks[i]`` is a tool result or a summary, right after a
    thinking/reasoning block, or when a tool call before ``i`` has a result at or after
    ``i``, or has no result yet (it may still arrive).
    """
    return [False] * start + _valid_from(blocks, start)


def _valid_from(blocks: Sequence[Block], start: int) -> list[bool]:
    """:func:`valid_cuts` for ``blocks[start:]`` only (index 0 is ``start``): linear in
    the region, whatever lies before it."""
    region = blocks[start:]
    n = len(region)
    last_result: dict[str, int] = {}
    for i, b in enumerate(region):
        if b.type == REACT_TOOL_RESULT and b.call_id:
            last_result[b.call_id] = i
    # open[i] = number of calls started before i whose last result is >= i
    delta = [0] * (n + 2)
    for i, b in enumerate(region):
        if b.type == REACT_TOOL_CALL and b.call_id:
            end = last_result.get(b.call_id, n)  # pending: open to the end
            if end > i:
                delta[i + 1] += 1
                delta[end + 1] -= 1
    valid = [False] * n
    running = 0
    previous = ""
    for i, b in enumerate(region):
        running += delta[i]
        # thinking/reasoning stays with the assistant content it came with
        if i and running == 0 and previous != "reasoning":
            valid[i] = cut_boundary(b) != "none"
        previous = block_type(b.type).render
    return valid


_SYSTEM_AUTHORS: Final = frozenset({"system", "tool"})


def cut_boundary(block: Block) -> Boundary:
    """How good a cut before ``block`` is: ``"turn"``, ``"message"`` or ``"none"`` (never).

    The type's registered boundary first; otherwise the author decides (upstream v2): a
    block by the user, the assistant or any custom author is a message boundary even
    when its type is a custom one, a system- or tool-authored block never a cut. Tool
    results and summaries are never cuts."""
    if block.type in (REACT_TOOL_RESULT, CONV_RANGE_SUMMARY):
        return "none"
    boundary = block_type(block.type).boundary
    if boundary != "none":
        return boundary
    if block.author and block.author not in _SYSTEM_AUTHORS:
        return "message"
    return "none"


def _recent_turn_start(blocks: Sequence[Block], start: int, turns: int) -> int:
    seen: list[str] = []
    for i in range(len(blocks) - 1, start - 1, -1):
        tid = blocks[i].turn_id
        if not seen or seen[-1] != tid:
            if len(seen) == turns:
                return i + 1
            seen.append(tid)
    return start


def _turn_start(blocks: Sequence[Block], start: int, cut: int) -> int:
    tid = blocks[cut].turn_id
    i = cut
    while i - 1 >= start and blocks[i - 1].turn_id == tid:
        i -= 1
    return i


def plan_cut(
    blocks: Sequence[Block],
    start: int,
    costs: Sequence[int],
    pinned: Set[str],
    policy: CompactionPolicy,
    *,
    budget: int,
    system_tokens: int,
    fixed_tokens: int,
    summary_reserve: int,
    force: bool,
    keep_tokens: int | None = None,
    current_turn: str = "",
    pinned_only: Set[str] | None = None,
) -> CutPlan | None:
    """Choose the cut in ``blocks[start:]`` (``start`` = first block after the latest
    summary); ``costs[i]`` is the rendered cost of ``blocks[i]``. None: nothing to cut.

    ``pinned`` are the blocks that stay visible after the summary (their cost is kept);
    ``pinned_only`` (default: the same) the ones left out of the summary: a carried plan
    or follow-up prompt is summarized too (it leaves the view later)."""
    n = len(blocks)
    hi = n - max(1, policy.preserve_recent_blocks)
    if start + 1 > hi:
        return None
    # arrays over the region only (index - start): the blocks before the latest summary
    # can be thousands when nothing is evicted
    valid = _valid_from(blocks, start)
    size = n - start
    suffix = [0] * (size + 1)
    pinned_prefix = [0] * (size + 1)
    for j in range(size - 1, -1, -1):
        suffix[j] = suffix[j + 1] + costs[start + j]
    if pinned:
        for j in range(size):
            pin = costs[start + j] if blocks[start + j].id in pinned else 0
            pinned_prefix[j + 1] = pinned_prefix[j] + pin

    def kept(c: int) -> int:
        return suffix[c - start] + pinned_prefix[c - start]

    context_budget = budget - system_tokens
    available = budget - fixed_tokens - summary_reserve
    keep: float
    if keep_tokens is not None:
        keep = keep_tokens  # manual compaction: the caller says how much stays verbatim
    elif force:
        keep = min(policy.emergency_keep_ratio * context_budget, 0.5 * kept(start))
    elif policy.keep_recent_tokens is not None:
        keep = policy.keep_recent_tokens  # seed 000: the recent context kept verbatim
    else:
        # the kept share includes the summary that will sit in front of it, so a
        # compaction leaves the prompt near keep_ratio of the budget (not keep + summary)
        keep = max(policy.keep_ratio * context_budget - summary_reserve, 0.25 * context_budget)
        if policy.keep_recent_turns:
            recent = kept(_recent_turn_start(blocks, start, policy.keep_recent_turns))
            if fixed_tokens + summary_reserve + recent <= policy.trigger_ratio * budget:
                keep = max(keep, recent)
    keep = min(keep, available)
    keep_blocks = n
    if policy.max_blocks is not None:
        keep_blocks = int(policy.keep_ratio * policy.max_blocks)

    k = n
    for c in range(n - 1, start, -1):
        if kept(c) > keep or n - c > keep_blocks:
            break
        k = c
    candidates = [c for c in range(max(k, start + 1), hi + 1) if valid[c - start]]
    if candidates:
        cut = _preferred(blocks, candidates, kept)
    else:
        earlier = [c for c in range(start + 1, min(k, hi + 1)) if valid[c - start]]
        if not earlier:
            return None
        cut = earlier[-1]
    excluded = pinned if pinned_only is None else pinned_only
    return _split(blocks, start, cut, excluded, policy, kept(cut), current_turn)


def _preferred(blocks: Sequence[Block], candidates: list[int], kept: Callable[[int], int]) -> int:
    """First turn boundary keeping at least half of what the first candidate keeps, else
    the first message boundary likewise, else the first candidate."""
    first = candidates[0]
    floor = 0.5 * kept(first)
    for wanted in ("turn", "message"):
        for c in candidates:
            if kept(c) < floor:
                break
            if cut_boundary(blocks[c]) == wanted:
                if wanted == "turn":
                    c = _turn_header_before(blocks, c, candidates)
                return c
    return first


def _turn_header_before(blocks: Sequence[Block], c: int, candidates: list[int]) -> int:
    """A ``user.prompt`` right after its own ``turn.header``: cut at the header instead."""
    prev = c - 1
    if (
        prev in candidates
        and blocks[prev].turn_id == blocks[c].turn_id
        and block_type(blocks[prev].type).render == "header"
    ):
        return prev
    return c


def _split(
    blocks: Sequence[Block],
    start: int,
    cut: int,
    pinned: Set[str],
    policy: CompactionPolicy,
    kept_tokens: int,
    current_turn: str = "",
) -> CutPlan | None:
    def content(seq: Sequence[Block]) -> tuple[Block, ...]:
        return tuple(b for b in seq if b.id not in pinned and b.type != CONV_RANGE_SUMMARY)

    compacted = content(blocks[start:cut])
    if not any(block_type(b.type).render != "header" for b in compacted):
        return None
    turn_start = _turn_start(blocks, start, cut)
    prefix = content(blocks[turn_start:cut])
    prefix_size = sum(1 for b in prefix if block_type(b.type).render != "header")
    turn_id = blocks[cut].turn_id
    mid_turn = bool(current_turn and turn_id == current_turn and prefix_size)
    if mid_turn:
        # the running turn is protected: its whole prefix (blocks an earlier checkpoint
        # already covered included) is rebuilt into one [MID-TURN COMPACTION n]
        prefix = content(blocks[_turn_start(blocks, 0, cut) : cut])
    if mid_turn or (prefix_size and prefix_size >= policy.min_split_prefix_blocks):
        return CutPlan(
            cut=cut,
            history=content(blocks[start:turn_start]),
            prefix=prefix,
            split_turn_id=turn_id,
            compacted=compacted,
            kept_tokens=kept_tokens,
            mid_turn=mid_turn,
        )
    return CutPlan(cut, compacted, (), None, compacted, kept_tokens)


def _summarized(seq: Sequence[Block]) -> tuple[Block, ...]:
    """What a summarizer reads: plans are carried and folded, never summarized."""
    return tuple(b for b in seq if b.type not in (PLAN, PLAN_HISTORY))


@attrs.frozen
class SummaryPlan:
    """What one compaction asks of the summarizer, and what the library adds itself.

    ``history`` is None for a mid-turn compaction with nothing before the turn: then
    ``previous_text`` (the previous summary as it was) stands in for it. The summarizer's
    size budget leaves room for the ``reminder`` and the tagged notes."""

    digest: CompactionDigest
    history: SummaryRequest | None
    prefix: SummaryRequest | None
    previous_text: str
    reminder: str


def requests_for(
    plan: CutPlan,
    previous: Block | None,
    policy: CompactionPolicy,
    cut_block: Block | None = None,
) -> SummaryPlan:
    """The cumulative digest, the summary requests and the Active Work Reminder."""
    prev_digest = digest_from_meta(previous.meta) if previous is not None else None
    digest = build_digest(
        plan.compacted,
        prev_digest,
        tool_classification=policy.tool_classification,
        user_prompt_cap_chars=policy.user_prompt_cap_chars,
        max_user_requests=policy.max_user_requests,
    )
    reminder = active_work_reminder(plan.compacted, cut_block, digest)
    added = estimate_tokens(reminder) + sum(estimate_tokens(n) + 1 for n in digest.tagged_notes)
    budget = max(64, policy.summary_budget() - added - 8)
    previous_text = strip_rebuilt_sections(previous.text) if previous is not None else ""
    history_blocks = _summarized(plan.history)
    history = None
    if history_blocks or not plan.mid_turn:
        history = SummaryRequest(
            kind="history",
            blocks=history_blocks,
            previous_summary=previous_text,
            digest=digest,
            max_tokens=budget if not plan.prefix else max(128, budget * 2 // 3),
            focus=policy.focus_instructions,
            user_prompt_cap_chars=policy.user_prompt_cap_chars,
        )
    prefix = None
    if plan.prefix:
        prefix = SummaryRequest(
            kind="turn_prefix",
            blocks=_summarized(plan.prefix),
            digest=digest,
            max_tokens=max(128, budget // 3),
            focus=policy.focus_instructions,
            user_prompt_cap_chars=policy.user_prompt_cap_chars,
        )
    return SummaryPlan(digest, history, prefix, previous_text, reminder)


_FALLBACK = InventorySummarizer()


class _OwnError(Exception):
    """The summarizer's own exception (its own ``TimeoutError`` included), kept apart from
    the policy's timeout."""


def _failed(request: SummaryRequest, error: BaseException | str, fallback: bool) -> tuple[str, str]:
    if isinstance(error, _OwnError) and error.__cause__ is not None:
        error = error.__cause__
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return (_FALLBACK.summarize(request) if fallback else ""), reason


def _checked(request: SummaryRequest, text: object, fallback: bool) -> tuple[str, str | None]:
    if not isinstance(text, str) or not text.strip():
        return _failed(request, "summarizer returned an empty summary", fallback)
    return text.strip(), None


def _call_sync(summarizer: Summarizer, request: SummaryRequest) -> str:
    try:
        return summarizer.summarize(request)
    except Exception as exc:
        raise _OwnError() from exc


async def _call_async(summarizer: AsyncSummarizer, request: SummaryRequest) -> str:
    try:
        return await summarizer.asummarize(request)
    except Exception as exc:
        raise _OwnError() from exc


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def summarize_sync(
    summarizer: Summarizer | AsyncSummarizer | None,
    request: SummaryRequest,
    timeout: float | None,
    *,
    fallback: bool = True,
) -> tuple[str, str | None]:
    """Run a summarizer; a failure (exception, timeout, empty) falls back to the
    deterministic inventory, or with ``fallback=False`` gives ``""``. Returns the text and
    the failure reason, if any. An async summarizer inside a running event loop raises
    :class:`AsyncSummarizerError` (use ``arender``)."""
    if summarizer is None:
        return _FALLBACK.summarize(request), None
    if not isinstance(summarizer, Summarizer) and _in_running_loop():
        raise AsyncSummarizerError(
            f"{type(summarizer).__name__} is async and an event loop is running: render() and "
            "compact() cannot wait for it here; call `await timeline.arender(...)` or "
            "`await timeline.acompact(...)` instead"
        )
    try:
        if isinstance(summarizer, Summarizer):
            if timeout is None:
                text = _call_sync(summarizer, request)
            else:
                # no `with`: its exit would wait for a summarizer that overran
                pool = concurrent.futures.ThreadPoolExecutor(1, "timeline-summarizer")
                try:
                    text = pool.submit(_call_sync, summarizer, request).result(timeout)
                finally:
                    pool.shutdown(wait=False, cancel_futures=True)
        else:
            coro = _call_async(summarizer, request)
            text = asyncio.run(asyncio.wait_for(coro, timeout) if timeout else coro)
    except TimeoutError:
        return _failed(request, f"summarizer timed out after {timeout}s", fallback)
    except Exception as exc:
        return _failed(request, exc, fallback)
    return _checked(request, text, fallback)


async def summarize_async(
    summarizer: Summarizer | AsyncSummarizer | None,
    request: SummaryRequest,
    timeout: float | None,
    *,
    fallback: bool = True,
) -> tuple[str, str | None]:
    """The async form of :func:`summarize_sync` (sync summarizers run in a thread)."""
    if summarizer is None:
        return _FALLBACK.summarize(request), None
    try:
        if isinstance(summarizer, AsyncSummarizer):
            text = await asyncio.wait_for(_call_async(summarizer, request), timeout)
        else:
            call = asyncio.to_thread(_call_sync, summarizer, request)
            text = await asyncio.wait_for(call, timeout)
    except TimeoutError:
        return _failed(request, f"summarizer timed out after {timeout}s", fallback)
    except Exception as exc:
        return _failed(request, exc, fallback)
    return _checked(request, text, fallback)
