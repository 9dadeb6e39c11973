"""Incremental payloads: a request's payload costs what changed since the previous one.

A timeline keeps one :class:`PayloadCache`. For each provider it remembers the last
message plan (:func:`~timeline.formats._plan.plan_messages`) and each message's provider
items. The next payload keeps the plan's messages up to the last clean cut at or before
the first block that changed (blocks are compared by identity: a block never changes, a
hidden block renders as a new object) and plans only the blocks after it; messages
carrying a cache checkpoint are rebuilt, every other kept message reuses its items.

A cut before message ``j`` is clean when the messages before it hold only blocks before
its first block, the messages from it on only blocks from there, no call before it waits
for a result, and the blocks after it neither answer a call before it nor call for a
result shown before it. Anything else (a compaction, a hidden block, a new result for an
old call) plans the whole stream again, but every message of the new plan equal to one of
the last plan (same role, same parts: kind, block and result blocks by identity, text,
synthetic or not) takes the items built for it, so after a compaction only the summary,
the pins and what changed are built. The payload always equals the one built from
scratch (``tests/test_incremental_payloads.py`` checks that on random timelines).

What is shared: each call returns a fresh top-level container (the payload dict and its
``messages`` list, or the item list) but the message and item dicts inside are shared with
the cache and with later payloads of the same timeline. Treat them as read-only; copy
(``copy.deepcopy``) before editing one in place.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Sequence
from itertools import accumulate, chain
from typing import Any, cast

import attrs

from timeline.block import Block
from timeline.block_types import block_type
from timeline.formats._plan import Message, Part, plan_head, plan_messages, plan_rest
from timeline.formats.anthropic import anthropic_message, anthropic_payload
from timeline.formats.openai import chat_items, chat_system, responses_items, responses_system

__all__ = ["PayloadCache"]

Items = list[dict[str, Any]]
_TOOL_KINDS = ("tool_call", "tool_result")


@attrs.define
class _Plan:
    """One provider's last plan of ``blocks`` with what a cut needs to know."""

    blocks: tuple[Block, ...] = ()
    messages: list[Message] = attrs.field(factory=list)
    starts: list[int] = attrs.field(factory=list)
    """Smallest block index in each message (-1: synthetic parts only)."""
    highs: list[int] = attrs.field(factory=list)
    """Largest block index in messages 0..j (running)."""
    open_before: list[bool] = attrs.field(factory=list)
    """A call in messages 0..j has no result (running)."""
    answers: list[bool] = attrs.field(factory=list)
    """Message j answers a call of an earlier message (no clean cut right before it)."""
    owner: list[int] = attrs.field(factory=list)
    """Block index -> index of the message showing it (-1: none)."""
    call_message: dict[str, int] = attrs.field(factory=dict)
    """Call id -> index of the message holding the call (stale entries only ever cause
    a full plan, never a wrong one)."""
    text_results: dict[str, int] = attrs.field(factory=dict)
    """Call id -> block index of a result shown as text (its call was not visible)."""
    items: dict[str, list[Items | None]] = attrs.field(factory=dict)
    """Format -> items of each message built without a checkpoint (None: not built)."""
    shifts: list[int] = attrs.field(factory=list)
    """What to add to each message's part indices to get block indices (messages kept
    across a compaction keep the parts planned before it)."""
    waits: list[bool] = attrs.field(factory=list)
    """Message j holds a call's synthetic "no result recorded" result."""
    last_use: dict[str, int] = attrs.field(factory=dict)
    """Call id -> at least the index of the last message showing a call or result with it
    (stale entries only ever cause a full plan)."""

    def add(self, messages: list[Message]) -> None:
        owner = self.owner
        owner += [-1] * (len(self.blocks) - len(owner))
        last_use = self.last_use
        for message in messages:
            j = len(self.messages)
            self.messages.append(message)
            lo, hi, waiting = -1, self.highs[-1] if self.highs else -1, False
            answers = False
            for p in message.parts:
                for i in (p.index, *p.indices):
                    if i >= 0:
                        lo = i if lo < 0 else min(lo, i)
                        hi = max(hi, i)
                        owner[i] = j
                if p.kind == "tool_call" and p.block.call_id:
                    self.call_message[p.block.call_id] = j
                    last_use[p.block.call_id] = j
                elif p.kind == "tool_result":
                    answers = answers or self.call_message.get(p.block.call_id or "", j) < j
                    waiting = waiting or p.index < 0
                    last_use[p.block.call_id or ""] = j
                elif p.kind == "text" and block_type(p.block.type).render == "tool_result":
                    self.text_results.setdefault(p.block.call_id or "", p.index)
                    last_use[p.block.call_id or ""] = j
            self.starts.append(lo)
            self.answers.append(answers)
            self.highs.append(hi)
            self.waits.append(waiting)
            self.shifts.append(0)
            self.open_before.append(waiting or bool(self.open_before and self.open_before[-1]))
            for built in self.items.values():
                built.append(None)

    def graft(self, last: _Plan, j: int, s: int, shift: int) -> int:
        """Append ``last``'s messages from ``j`` on, their blocks moved by ``shift``
        (``last`` planned them for blocks now ``shift`` further); what to add to a message
        index of ``last`` to get its index here. ``last``'s blocks from ``s`` on must be
        shown only in messages from ``j`` on (or ``j - 1``, when this plan's last
        message is that one merged) and those messages only show them."""
        moved = len(self.messages) - j
        self.messages += last.messages[j:]
        self.shifts += map(shift.__add__, last.shifts[j:])
        self.starts += [k + shift if k >= 0 else -1 for k in last.starts[j:]]
        self.highs += map(shift.__add__, last.highs[j:])
        self.answers += last.answers[j:]
        self.waits += last.waits[j:]
        running = accumulate(
            last.waits[j:], operator.or_, initial=bool(self.open_before and self.open_before[-1])
        )
        self.open_before += list(running)[1:]
        del self.owner[s + shift :]
        self.owner += [k + moved if k >= 0 else -1 for k in last.owner[s:]]
        # no id is in both (the caller checked), so the updates overwrite nothing
        self.call_message.update({c: k + moved for c, k in last.call_message.items() if k >= j})
        self.last_use.update({c: k + moved for c, k in last.last_use.items() if k >= j})
        self.text_results.update({c: i + shift for c, i in last.text_results.items() if i >= s})
        for fmt, built in last.items.items():
            fresh: list[Items | None] = [None] * (len(self.messages) - len(built) + j)
            self.items[fmt] = fresh + built[j:]
        return moved

    def truncate(self, j: int) -> None:
        """Forget messages ``j`` on (the blocks from ``starts[j]`` on)."""
        del self.owner[self.starts[j] :]
        del self.messages[j:], self.starts[j:], self.highs[j:], self.open_before[j:]
        del self.answers[j:], self.shifts[j:], self.waits[j:]
        for built in self.items.values():
            del built[j:]


def _message_key(message: Message) -> tuple[object, ...]:
    """All a message's items depend on (without a checkpoint): its role and each part's
    kind, block and result blocks (by identity), text and whether it is synthetic."""
    return (
        message.role,
        *((p.kind, id(p.block), p.index < 0, p.text, *map(id, p.results)) for p in message.parts),
    )


def _carry_items(last: _Plan, plan: _Plan) -> int:
    """Give ``plan``'s messages the items ``last`` built for an equal message (the kept
    blocks after a compaction or a hidden block); how many were carried over. Both plans
    hold their blocks while the keys are compared, so an ``id`` stands for one block."""
    carried = 0
    for fmt, built in last.items.items():
        known = {
            _message_key(m): items
            for m, items in zip(last.messages, built, strict=True)
            if items is not None
        }
        if not known:
            continue
        mine = [known.get(_message_key(m)) for m in plan.messages]
        carried += sum(items is not None for items in mine)
        plan.items[fmt] = mine
    return carried


def _kept_run(old: Sequence[Block], new: Sequence[Block]) -> tuple[int, int, int]:
    """``(a, c, n)``: a run ``new[c : c + n]`` that is ``old[a : a + n]`` (by identity;
    both sequences alive, so an ``id`` stands for one block). A compaction keeps the end
    of the stream, so first the run ending on one of ``old``'s last blocks found near
    ``new``'s end; else the longest run."""
    for back in range(1, min(len(old), 4) + 1):
        x = old[-back]
        for p in range(len(new) - 1, max(len(new) - 17, -1), -1):
            if new[p] is x:
                end = len(old) - back  # old[end] is new[p]
                n = _common_prefix(old[end::-1], new[p::-1])
                return end + 1 - n, p + 1 - n, n
    where = {id(b): i for i, b in enumerate(old)}
    best = (0, 0, 0)
    c = 0
    while c < len(new):
        a = where.get(id(new[c]))
        if a is None:
            c += 1
            continue
        n = _common_prefix(old[a:], new[c:])
        if n > best[2]:
            best = (a, c, n)
        c += n
    return best


def _moved(part: Part, shift: int) -> Part:
    """``part`` with its block indices moved by ``shift`` (synthetic stays synthetic)."""
    if not shift:
        return part
    return attrs.evolve(
        part,
        index=part.index + shift if part.index >= 0 else part.index,
        indices=tuple(i + shift for i in part.indices),
    )


def _common_prefix(a: Sequence[Block], b: Sequence[Block]) -> int:
    """How many leading blocks ``a`` and ``b`` share, by identity (C-level loops)."""
    same = list(map(operator.is_, a, b))
    try:
        return same.index(False)
    except ValueError:
        return len(same)


@attrs.define
class PayloadCache:
    """Per-timeline memo of message plans and provider items (see the module docstring)."""

    _plans: dict[str | None, _Plan] = attrs.field(factory=dict)
    full_plans: int = 0
    """How many payloads planned the whole stream (for tests and benchmarks)."""
    partial_plans: int = 0
    """How many planned only the blocks after a kept prefix."""
    rebased_plans: int = 0
    """How many planned only a new head (a compaction's summary and pins) and the blocks
    after the kept messages, which moved behind the new head unchanged."""
    planned_messages: int = 0
    """Messages planned (a kept or moved message is not planned again)."""
    reused_messages: int = 0
    """Messages of a full or rebased plan whose items came from the previous plan."""
    built_messages: int = 0
    """Messages whose items were built (checkpoint messages included)."""

    def clear(self) -> None:
        self._plans.clear()

    def plan(self, blocks: tuple[Block, ...], provider: str | None) -> _Plan:
        """The plan of ``blocks`` for ``provider``, extending the last one when it can."""
        last = self._plans.get(provider)
        if last is not None and last.blocks is blocks:
            return last
        if last is not None and last.messages:
            same = _common_prefix(last.blocks, blocks)
            j = self._cut(last, same) if same else 0
            if j > 0 and self._extend(last, blocks, provider, j):
                self.partial_plans += 1
                return last
            rebased = self._rebase(last, blocks, provider)
            if rebased is not None:
                self._plans[provider] = rebased
                self.rebased_plans += 1
                return rebased
        plan = _Plan(blocks=blocks)
        messages = plan_messages(blocks, provider)
        self.planned_messages += len(messages)
        plan.add(messages)
        if last is not None:
            self.reused_messages += _carry_items(last, plan)
        self._plans[provider] = plan
        self.full_plans += 1
        return plan

    def _rebase(self, last: _Plan, blocks: tuple[Block, ...], provider: str | None) -> _Plan | None:
        """The plan of ``blocks`` when they replace ``last``'s head (a compaction: the new
        summary and pinned blocks, then kept blocks, then new ones): the new head is
        planned, the kept messages move behind it (indices shifted) with their items, the
        rest is planned as after an append. None when that cannot be shown equal to
        planning it all (see :meth:`_head_cut`, :func:`plan_head`, :meth:`_extend`)."""
        a, c, n = _kept_run(last.blocks, blocks)
        j = self._head_cut(last, a, a + n) if n else 0
        if j == 0:
            return None
        s, shift = last.starts[j], c - a
        head_blocks = blocks[: s + shift]
        use = last.last_use
        for b in head_blocks:  # a call or result of the head linked to a kept one
            cid = b.call_id
            if cid and use.get(cid, -1) >= j and block_type(b.type).render in _TOOL_KINDS:
                return None
        head = plan_head(head_blocks, provider)
        if head is None:
            return None
        first, start = last.messages[j], j
        if head[-1].role == first.role:
            if first.role == "assistant":
                return None
            moved = tuple(_moved(p, last.shifts[j] + shift) for p in first.parts)
            head[-1] = Message("user", head[-1].parts + moved)
            start = j + 1
        plan = _Plan(blocks=blocks)
        plan.add(head)
        plan.graft(last, start, s, shift)
        cut = self._cut(plan, c + n)
        planned = len(head)
        if cut == 0 or not self._extend(plan, blocks, provider, cut):
            return None
        planned += len(plan.messages) - cut
        self.planned_messages += planned
        self.reused_messages += sum(len(b) - b.count(None) for b in plan.items.values())
        return plan

    @staticmethod
    def _head_cut(last: _Plan, lo: int, hi: int) -> int:
        """The first message of ``last`` (not the first) starting a clean cut at a block in
        ``lo..hi - 1``: the messages before it show only blocks before its first block,
        it and the later ones only blocks from there, and it answers no earlier call;
        0 if none among the first few candidates."""
        starts = last.starts
        tries = 0
        first = max(1, last.owner[lo] if lo < len(last.owner) else 1)
        for j in range(first, len(last.messages) - 1):
            s = starts[j]
            if s < lo:
                continue
            if s >= hi or tries == 4:
                break
            tries += 1
            if last.answers[j] or last.highs[j - 1] >= s:
                continue
            later = starts[j:]
            if min(later) >= s or all(k < 0 or k >= s for k in later):
                return j
        return 0

    @staticmethod
    def _cut(plan: _Plan, same: int) -> int:
        """The last clean cut before a message starting at or before block ``same``,
        keeping at least the last message to plan again; 0 if none."""
        for j in range(len(plan.messages) - 1, 0, -1):
            s = plan.starts[j]
            if s < 0 or s > same or plan.answers[j]:
                continue
            closed = plan.highs[j - 1] < s and not plan.open_before[j - 1]
            if closed and all(st < 0 or st >= s for st in plan.starts[j:]):
                return j
            if len(plan.messages) - j > 8:
                break  # a clean cut is always near the end; past that, plan it all
        return 0

    @staticmethod
    def _extend(plan: _Plan, blocks: tuple[Block, ...], provider: str | None, j: int) -> bool:
        s = plan.starts[j]
        rest = blocks[s:]
        for b in rest:
            render = block_type(b.type).render
            cid = b.call_id or ""
            if render == "tool_result" and plan.call_message.get(cid, j) < j:
                return False  # a late result for a call before the cut
            if render == "tool_call" and plan.text_results.get(cid, s) < s:
                return False  # its result was shown before the cut as plain text
        suffix = plan_rest(rest, provider, s, plan.messages[j - 1].role)
        if suffix is None:
            return False
        plan.truncate(j)
        plan.blocks = blocks
        plan.add(suffix)
        return True

    def items(
        self,
        plan: _Plan,
        fmt: str,
        build: Callable[[Message, set[int]], Items],
        points: set[int],
    ) -> Items:
        """Every message's items in order: messages with a checkpoint built now, the
        others from the cache."""
        built = plan.items.setdefault(fmt, [None] * len(plan.messages))
        messages, owner = plan.messages, plan.owner
        marked = {owner[q] for q in points if 0 <= q < len(owner)}
        marked.discard(-1)
        empty: set[int] = set()
        j = -1
        with contextlib.suppress(ValueError):  # none left to build
            while True:  # C-level scans: most messages are built already
                j = built.index(None, j + 1)
                if j not in marked:  # a marked message is built with its checkpoints below
                    self.built_messages += 1
                    built[j] = build(messages[j], empty)
        rows = cast("list[Items]", built)
        if marked:
            rows = list(rows)
            for j in marked:
                self.built_messages += 1
                shift = plan.shifts[j]
                rows[j] = build(messages[j], {q - shift for q in points if q >= shift})
        return list(chain.from_iterable(rows))

    def anthropic(
        self,
        system: str,
        blocks: tuple[Block, ...],
        cache_points: Sequence[int],
        system_cached: bool,
    ) -> dict[str, Any]:
        """What :func:`~timeline.formats.anthropic.to_anthropic` returns, incrementally."""
        plan = self.plan(blocks, "anthropic")
        messages = self.items(
            plan, "anthropic", lambda m, p: [anthropic_message(m, p)], set(cache_points)
        )
        return anthropic_payload(system, messages, system_cached)

    def openai(self, system: str, blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
        """What :func:`~timeline.formats.openai.to_openai` returns, incrementally."""
        plan = self.plan(blocks, None)
        return chat_system(system) + self.items(plan, "chat", lambda m, _: chat_items(m), set())

    def openai_responses(self, system: str, blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
        """What :func:`~timeline.formats.openai.to_openai_responses` returns, incrementally."""
        plan = self.plan(blocks, "responses")
        items = self.items(plan, "responses", lambda m, _: responses_items(m), set())
        return responses_system(system) + items
