"""The state :class:`~timeline._formats.incremental.PayloadCache` keeps per provider: the
last message plan with what a cut needs to know, and the helpers that compare two
streams and move a plan's messages (see ``timeline._formats.incremental``)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import attrs

from timeline._formats._plan import Message, Part
from timeline._model import Block, block_type

__all__ = [
    "Items",
    "KeptPlan",
    "carry_items",
    "common_prefix",
    "kept_run",
    "message_key",
    "moved_part",
]

Items = list[dict[str, Any]]


@attrs.define
class KeptPlan:
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
    tail: int = -1
    """First block of the stream's open end, whose parts blocks appended after the stream
    can still change (thinking dropped only because nothing followed it, calls a
    following call would join; -1: none): see :func:`~timeline._formats._plan.plan_stream`."""

    def add(self, messages: list[Message], tail: int = -1) -> None:
        """Append planned ``messages``; ``tail`` is the open end of the stream they end
        (-1: none, or not the end: a head)."""
        self.tail = tail
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

    def graft(self, last: KeptPlan, j: int, s: int, shift: int) -> int:
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
        self.tail = last.tail + shift if last.tail >= 0 else -1
        for fmt, built in last.items.items():
            fresh: list[Items | None] = [None] * (len(self.messages) - len(built) + j)
            self.items[fmt] = fresh + built[j:]
        return moved

    def truncate(self, j: int, s: int) -> None:
        """Forget messages ``j`` on and blocks ``s`` on (the first block of message ``j``,
        or the block after the last one shown)."""
        del self.owner[s:]
        del self.messages[j:], self.starts[j:], self.highs[j:], self.open_before[j:]
        del self.answers[j:], self.shifts[j:], self.waits[j:]
        for built in self.items.values():
            del built[j:]


def message_key(message: Message) -> tuple[object, ...]:
    """All a message's items depend on (without a checkpoint): its role and each part's
    kind, block and result blocks (by identity), text and whether it is synthetic."""
    return (
        message.role,
        *((p.kind, id(p.block), p.index < 0, p.text, *map(id, p.results)) for p in message.parts),
    )


def carry_items(last: KeptPlan, plan: KeptPlan) -> int:
    """Give ``plan``'s messages the items ``last`` built for an equal message (the kept
    blocks after a compaction or a hidden block); how many were carried over. Both plans
    hold their blocks while the keys are compared, so an ``id`` stands for one block."""
    carried = 0
    for fmt, built in last.items.items():
        known = {
            message_key(m): items
            for m, items in zip(last.messages, built, strict=True)
            if items is not None
        }
        if not known:
            continue
        mine = [known.get(message_key(m)) for m in plan.messages]
        carried += sum(items is not None for items in mine)
        plan.items[fmt] = mine
    return carried


def kept_run(old: Sequence[Block], new: Sequence[Block]) -> tuple[int, int, int]:
    """``(a, c, n)``: a run ``new[c : c + n]`` that is ``old[a : a + n]`` (by identity;
    both sequences alive, so an ``id`` stands for one block). A compaction keeps the end
    of the stream, so first the run ending on one of ``old``'s last blocks found near
    ``new``'s end; else the longest run."""
    for back in range(1, min(len(old), 4) + 1):
        x = old[-back]
        for p in range(len(new) - 1, max(len(new) - 17, -1), -1):
            if new[p] is x:
                end = len(old) - back  # old[end] is new[p]
                n = common_prefix(old[end::-1], new[p::-1])
                return end + 1 - n, p + 1 - n, n
    where = {id(b): i for i, b in enumerate(old)}
    best = (0, 0, 0)
    c = 0
    while c < len(new):
        a = where.get(id(new[c]))
        if a is None:
            c += 1
            continue
        n = common_prefix(old[a:], new[c:])
        if n > best[2]:
            best = (a, c, n)
        c += n
    return best


def moved_part(part: Part, shift: int) -> Part:
    """``part`` with its block indices moved by ``shift`` (synthetic stays synthetic)."""
    if not shift:
        return part
    return attrs.evolve(
        part,
        index=part.index + shift if part.index >= 0 else part.index,
        indices=tuple(i + shift for i in part.indices),
    )


def common_prefix(a: Sequence[Block], b: Sequence[Block]) -> int:
    """How many leading blocks ``a`` and ``b`` share, by identity (C-level loops)."""
    same = list(map(operator.is_, a, b))
    try:
        return same.index(False)
    except ValueError:
        return len(same)
