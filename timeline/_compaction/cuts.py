"""Where a compaction may cut and where it does: valid cuts and the cut planner.

* the region after the latest summary is what can be compacted;
* the prompt after the cut (system prompt, summary, kept blocks) holds ``keep_ratio *
  (budget - system)`` tokens besides the system prompt (``emergency_keep_ratio`` when
  forced; the clearing tier's ``summary_keep_ratio`` when it has one), whatever the
  protections below say: one that cannot be honoured in that share is relaxed;
* the last ``keep_recent_turns`` turns stay whole when they fit in that share;
* the carried follow-ups of the running turn (prompts sent while it had tool calls) take
  at most half of what stays verbatim: the oldest beyond that are carried no more (the
  summary covers them), or they alone would hold the prompt near the trigger;
* a cut is never a tool result or a summary and never separates a tool call from any of
  its results (parallel and still-pending calls included);
* turn boundaries are preferred, then message boundaries; the cut block stays visible;
* a cut inside a turn summarizes that turn's prefix separately ("Turn Context (split
  turn)") when it has at least ``min_split_prefix_blocks`` blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set
from typing import Final

import attrs

from timeline._compaction.policy import CompactionPolicy
from timeline._compaction.stats import CutPlan
from timeline._model import (
    CONV_RANGE_SUMMARY,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    Block,
    Boundary,
    block_type,
)

__all__ = ["cut_boundary", "plan_at", "plan_cut", "valid_cuts"]


def valid_cuts(blocks: Sequence[Block], start: int) -> list[bool]:
    """``valid[i]``: a summary may be inserted before ``blocks[i]`` (i > start).

    Invalid when ``blocks[i]`` is a tool result or a summary, right after a
    thinking/reasoning block, when a tool call before ``i`` has a result at or after
    ``i``, or has no result yet (it may still arrive), or between two opaque provider
    blocks sharing a ``call_id`` (a server tool use and its result).
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
    paired: dict[str, tuple[int, int]] = {}  # provider blocks' call id -> (first, last)
    for i, b in enumerate(region):
        if b.type == REACT_TOOL_CALL and b.call_id:
            end = last_result.get(b.call_id, n)  # pending: open to the end
            if end > i:
                delta[i + 1] += 1
                delta[end + 1] -= 1
        elif b.call_id and block_type(b.type).render == "provider":
            paired[b.call_id] = (paired.get(b.call_id, (i, i))[0], i)
    for first, last in paired.values():
        delta[first + 1] += 1
        delta[last + 1] -= 1
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

    The type's registered boundary first; otherwise the author decides: a
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


def _kept_tokens(
    blocks: Sequence[Block], start: int, costs: Sequence[int], pinned: Set[str], room: int = 0
) -> Callable[[int], int]:
    """``kept(c)``: the tokens that stay visible when cutting at ``c`` (everything from
    ``c`` on, plus the pinned blocks before it, plus ``room``: tokens expected after the
    last block). Arrays over the region only (index - start): the blocks before the
    latest summary can be thousands when nothing is evicted."""
    size = len(blocks) - start
    suffix = [0] * (size + 1)
    pinned_prefix = [0] * (size + 1)
    for j in range(size - 1, -1, -1):
        suffix[j] = suffix[j + 1] + costs[start + j]
    if pinned:
        for j in range(size):
            pin = costs[start + j] if blocks[start + j].id in pinned else 0
            pinned_prefix[j + 1] = pinned_prefix[j] + pin

    def kept(c: int) -> int:
        return suffix[c - start] + pinned_prefix[c - start] + room

    return kept


def _keep_target(
    total: int,
    policy: CompactionPolicy,
    *,
    budget: int,
    base_tokens: int,
    fixed_tokens: int,
    summary_reserve: int,
    force: bool,
    keep_tokens: int | None,
) -> float:
    """How many tokens stay verbatim after the cut (``total``: what could stay; with a
    ``room`` planned ahead it is counted in ``total``)."""
    context_budget = budget - base_tokens
    available = budget - fixed_tokens - summary_reserve
    keep: float
    if keep_tokens is not None:
        keep = keep_tokens  # manual compaction: the caller says how much stays verbatim
    elif force:
        keep = min(policy.emergency_keep_ratio * context_budget, 0.5 * total)
    elif policy.keep_recent_tokens is not None:
        keep = policy.keep_recent_tokens  # the recent context kept verbatim
    else:
        # the prompt after the cut (the fixed part, the summary and what stays verbatim)
        # sits at keep_ratio of the budget whatever protects the recent turns, so the next
        # compaction is (trigger_ratio - keep_ratio) x budget of new content away; recent
        # turns that do not fit in that share are not kept whole (keeping them would leave
        # the prompt just under the trigger and compact again a message later)
        goal = base_tokens + policy.summary_keep_ratio * context_budget
        keep = goal - fixed_tokens - summary_reserve
    return max(0.0, min(keep, available))


def _choose_cut(
    blocks: Sequence[Block],
    start: int,
    hi: int,
    kept: Callable[[int], int],
    keep: float,
    policy: CompactionPolicy,
) -> int | None:
    """The preferred valid cut in ``blocks[start + 1 : hi + 1]`` keeping at most ``keep``
    tokens (and ``keep_ratio * max_blocks`` blocks), else the latest valid one before."""
    valid = _valid_from(blocks, start)
    n = len(blocks)
    keep_blocks = n
    if policy.max_blocks is not None:
        keep_blocks = int(policy.keep_ratio * policy.max_blocks)
    k = n
    for c in range(n - 1, start, -1):
        if kept(c) > keep or n - c > keep_blocks:
            break
        k = c
    candidates = [c for c in range(max(k, start + 1), hi + 1) if valid[c - start]]
    if policy.keep_recent_turns and candidates:
        # the recent turns stay whole when they fit in what is kept: no cut inside them
        recent = _recent_turn_start(blocks, start, policy.keep_recent_turns)
        candidates = [c for c in candidates if c <= recent] or candidates
    if candidates:
        return _preferred(blocks, candidates, kept)
    earlier = [c for c in range(start + 1, min(k, hi + 1)) if valid[c - start]]
    return earlier[-1] if earlier else None


def plan_cut(
    blocks: Sequence[Block],
    start: int,
    costs: Sequence[int],
    carried: Set[str],
    policy: CompactionPolicy,
    *,
    budget: int,
    base_tokens: int,
    fixed_tokens: int,
    summary_reserve: int,
    force: bool,
    keep_tokens: int | None = None,
    current_turn: str = "",
    pinned: Set[str] | None = None,
    room: int = 0,
    follow_ups: Mapping[str, int] | None = None,
) -> CutPlan | None:
    """Choose the cut in ``blocks[start:]`` (``start`` = first block after the latest
    summary); ``costs[i]`` is the rendered cost of ``blocks[i]``. None: nothing to cut.

    ``carried`` stay visible after the summary (their cost is kept); ``pinned`` (default:
    ``carried``) are left out of it (a carried plan or follow-up is summarized too: it
    leaves the view later). ``base_tokens``: system prompt, framing and tools; ``room``: plan as
    if that many tokens were appended after the last block (the cut a compaction at the
    trigger will make, planned ahead of it; the recent turns it protects are not known
    yet, so none is). ``follow_ups``: costs of the carried follow-ups (oldest first; in
    ``fixed_tokens`` when before ``start``), which the plan's ``released`` may relax."""
    hi = len(blocks) - max(1, policy.preserve_recent_blocks)
    if start + 1 > hi:
        return None
    kept = _kept_tokens(blocks, start, costs, carried, room)
    total = kept(start)

    def target(fixed: int) -> float:
        return _keep_target(
            total,
            policy,
            budget=budget,
            base_tokens=base_tokens,
            fixed_tokens=fixed,
            summary_reserve=summary_reserve,
            force=force,
            keep_tokens=keep_tokens,
        )

    released, freed = _released(blocks[start:], follow_ups or {}, fixed_tokens, target)
    if released:
        carried = {i for i in carried if i not in released}
        fixed_tokens -= freed
        kept = _kept_tokens(blocks, start, costs, carried, room)
    cut = _choose_cut(blocks, start, hi, kept, target(fixed_tokens), policy)
    if cut is None:
        return None
    excluded = carried if pinned is None else pinned
    plan = _split(blocks, start, cut, excluded, policy, kept(cut), current_turn)
    if plan is None or not released:
        return plan
    later = {b.id for b in blocks[cut:] if b.id in released}  # visible where they are
    return attrs.evolve(plan, released=tuple(i for i in released if i not in later))


def _released(
    region: Sequence[Block],
    follow_ups: Mapping[str, int],
    fixed: int,
    target: Callable[[int], float],
) -> tuple[dict[str, None], int]:
    """The follow-ups carried no more, and the tokens of those before ``region`` (counted
    in ``fixed``): the newest stay while they fit in half of what stays verbatim
    (``target`` of the fixed tokens without any follow-up), the older ones are left to
    the summary."""
    if not follow_ups:
        return {}, 0
    inside = {b.id for b in region if b.id in follow_ups}
    early = {i: c for i, c in follow_ups.items() if i not in inside}
    share = 0.5 * target(fixed - sum(early.values()))
    total = 0
    ids = list(follow_ups)
    for n in range(len(ids) - 1, -1, -1):
        total += follow_ups[ids[n]]
        if total > share:
            released = dict.fromkeys(ids[: n + 1])
            return released, sum(c for i, c in early.items() if i in released)
    return {}, 0


def plan_at(
    blocks: Sequence[Block],
    start: int,
    cut: int,
    costs: Sequence[int],
    carried: Set[str],
    policy: CompactionPolicy,
    *,
    current_turn: str = "",
    pinned: Set[str] | None = None,
) -> CutPlan | None:
    """The plan of a cut at ``cut`` (chosen earlier, see :func:`plan_cut`'s ``room``),
    as :func:`plan_cut` would make it now: None when ``cut`` is no valid cut any more
    or leaves nothing to summarize."""
    if not start < cut < len(blocks) or not _valid_from(blocks, start)[cut - start]:
        return None
    kept = _kept_tokens(blocks, start, costs, carried)
    excluded = carried if pinned is None else pinned
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
