"""Incremental payloads: a request plans and builds what changed since the previous one.

A timeline keeps one :class:`PayloadCache`. For each provider it remembers the last
message plan (:func:`~timeline.formats._plan.plan_stream`) and each message's provider
items, built once without checkpoints. The next payload keeps the plan's messages up to
the last clean cut at or before the first block that changed (blocks are compared by
identity: a block never changes, a hidden block renders as a new object) and plans only
the blocks after it; every kept message reuses its items.

A cut may also fall after the last message when that is a user message (an assistant
message is planned again: as the final one it lost trailing whitespace and reasoning)
and the stream does not end open: on calls a following call would join, or on thinking
dropped only because nothing followed it (``KeptPlan.tail``; either can sit below blocks
the last message shows, which then must be planned again with what follows).
A cut before message ``j`` is clean when the messages before it hold only blocks before
its first block, the messages from it on only blocks from there, no call before it waits
for a result, and the blocks after it neither answer a call before it nor call for a
result shown before it.

A compaction replaces the head of the stream (a new summary, the pinned blocks it
covered, then the kept blocks unchanged). Then the plan is *rebased*
(:meth:`PayloadCache._rebase`): the new head is planned (:func:`plan_head`), the last
plan's messages from the first clean cut in the kept blocks on move behind it with their
items (``KeptPlan.shifts`` records how far their parts' indices moved), the head's last
message merges with the first moved one when both are user messages, and the messages
after the last clean cut are planned again as after an append. The head must not end on
a waiting call, a lone reasoning block or assistant text before an assistant message,
nor share a call id with the moved messages; otherwise, and for anything else (a hidden
block, a new result for an old call), the whole stream is planned again, but every
message of the new plan equal to one of the last plan (same role, same parts: kind,
block and result blocks by identity, text, synthetic or not) takes the items built for
it. The payload always equals the one built from scratch
(``tests/test_incremental_payloads.py`` and ``tests/test_payload_rebase.py`` check that
on random timelines and random heads, kept runs and rests).

Only the newest render uses the cache (:meth:`PayloadCache.begin_render`): the payloads
of an earlier view are built from scratch and leave it as it was, so keeping an old view
and asking it again cannot change what a later one reuses.

What the caller owns: everything. The cache keeps the items it built to itself, and
every payload is a structural copy of them (:func:`msgspec.to_builtins`, one C-level
pass: every dict and list new, the strings and numbers in them shared, since those cannot
change), with the Anthropic checkpoints' ``cache_control`` added to the copy. So a caller
may change anything reachable from a payload (add ``cache_control``, edit a message, a
content part or a tool input, clear a list) without changing any other payload, earlier
or later (``tests/test_payload_ownership.py``). The items are JSON data (the builders make
dicts, lists and strings; tool inputs and thinking items are decoded JSON), which the
copy leaves as they are. The copy costs time in proportion to the payload's dicts and
lists, not to what changed; it is the cheapest way measured to hand out payloads nobody
else holds (a recursive copy in Python took about three times as long).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from itertools import accumulate, chain
from typing import Any, cast

import attrs
import msgspec

from timeline.formats._kept_plan import (
    Items,
    KeptPlan,
    carry_items,
    common_prefix,
    kept_run,
    moved_part,
)
from timeline.formats._plan import Message, plan_head, plan_rest, plan_stream
from timeline.formats.anthropic import (
    CacheTTLs,
    anthropic_messages,
    anthropic_payload,
    breakpoint_ttls,
    mark_checkpoints,
)
from timeline.formats.openai import chat_items, chat_system, responses_items, responses_system
from timeline.model.block import Block
from timeline.model.block_types import block_type

__all__ = ["PayloadCache"]

_TOOL_KINDS = ("tool_call", "tool_result")
_NONE: frozenset[int] = frozenset()


def _end(plan: KeptPlan) -> int:
    """The block an append after ``plan``'s last message plans from: the one after the
    last one its messages show (blocks after it that show nothing, e.g. a dropped lone
    reasoning block, are planned again with the rest), or the first block of the stream's
    open end (``KeptPlan.tail``) when that comes before: then the cut after the last
    message is not clean (blocks after the open end are shown already)."""
    end = plan.highs[-1] + 1
    return end if plan.tail < 0 else min(end, plan.tail)


@attrs.define
class PayloadCache:
    """Per-timeline memo of message plans and provider items (see the module docstring)."""

    _plans: dict[str | None, KeptPlan] = attrs.field(factory=dict)
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
    """Messages whose items were built (once each: checkpoints go on the copy)."""
    _render: int = 0
    """The number of the newest render (:meth:`begin_render`)."""

    def begin_render(self) -> int:
        """A render that will build its payloads here: its number. From now on only it
        does; a view of an earlier render builds its payloads from scratch, so it cannot
        change what a later one reuses."""
        self._render += 1
        return self._render

    def serves(self, render: int) -> bool:
        """Render ``render`` is the newest: its payloads may use and update the cache."""
        return render == self._render

    def clear(self) -> None:
        self._plans.clear()

    def plan(self, blocks: tuple[Block, ...], provider: str | None) -> KeptPlan:
        """The plan of ``blocks`` for ``provider``, extending the last one when it can."""
        last = self._plans.get(provider)
        if last is not None and last.blocks is blocks:
            return last
        if last is not None and last.messages:
            same = common_prefix(last.blocks, blocks)
            j = self._cut(last, same) if same else 0
            if j > 0 and self._extend(last, blocks, provider, j):
                self.partial_plans += 1
                self.planned_messages += len(last.messages) - j
                return last
            rebased = self._rebase(last, blocks, provider)
            if rebased is not None:
                self._plans[provider] = rebased
                self.rebased_plans += 1
                return rebased
        plan = KeptPlan(blocks=blocks)
        messages, tail = plan_stream(blocks, provider)
        self.planned_messages += len(messages)
        plan.add(messages, tail)
        if last is not None:
            self.reused_messages += carry_items(last, plan)
        self._plans[provider] = plan
        self.full_plans += 1
        return plan

    def _rebase(
        self, last: KeptPlan, blocks: tuple[Block, ...], provider: str | None
    ) -> KeptPlan | None:
        """The plan of ``blocks`` when they replace ``last``'s head (a compaction: the new
        summary and pinned blocks, then kept blocks, then new ones): the new head is
        planned, the kept messages move behind it (indices shifted) with their items, the
        rest is planned as after an append. None when that cannot be shown equal to
        planning it all (see :meth:`_head_cut`, :func:`plan_head`, :meth:`_extend`)."""
        a, c, n = kept_run(last.blocks, blocks)
        j = self._head_cut(last, a, a + n) if n else 0
        if j == 0 or last.highs[j] >= a + n:
            return None  # no clean cut, or its message shows blocks past the kept run
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
            moved = tuple(moved_part(p, last.shifts[j] + shift) for p in first.parts)
            head[-1] = Message("user", head[-1].parts + moved)
            start = j + 1
        plan = KeptPlan(blocks=blocks)
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
    def _head_cut(last: KeptPlan, lo: int, hi: int) -> int:
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
    def _cut(plan: KeptPlan, same: int) -> int:
        """The last clean cut before a message starting at or before block ``same``, or
        after the last message when that is a user message (an assistant one loses
        trailing whitespace and reasoning as the final message, so it is planned again)
        and every block it shows comes before ``same``; 0 if none."""
        last = len(plan.messages) - 1
        if (
            last > 0
            and plan.messages[last].role == "user"
            and not plan.open_before[last]
            and 0 <= plan.highs[last] < _end(plan) <= same
        ):
            return last + 1
        for j in range(last, 0, -1):
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
    def _extend(plan: KeptPlan, blocks: tuple[Block, ...], provider: str | None, j: int) -> bool:
        s = plan.starts[j] if j < len(plan.messages) else _end(plan)
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
        plan.truncate(j, s)
        plan.blocks = blocks
        plan.add(*suffix)
        return True

    def items(self, plan: KeptPlan, fmt: str, build: Callable[[Message], Items]) -> Items:
        """Every message's items in order, built once (without checkpoints) and copied at
        every call: the caller owns every dict and list returned."""
        built = plan.items.setdefault(fmt, [None] * len(plan.messages))
        messages = plan.messages
        j = -1
        with contextlib.suppress(ValueError):  # none left to build
            while True:  # C-level scans: most messages are built already
                j = built.index(None, j + 1)
                self.built_messages += 1
                built[j] = build(messages[j])
        rows = cast("list[Items]", built)
        return cast("Items", msgspec.to_builtins(list(chain.from_iterable(rows))))

    def anthropic(
        self,
        system: str,
        blocks: tuple[Block, ...],
        cache_points: Sequence[int],
        system_cached: bool,
        cache_ttl: CacheTTLs = None,
    ) -> dict[str, Any]:
        """What :func:`~timeline.formats.anthropic.to_anthropic` returns, incrementally:
        the checkpoints go on the copy (the message dicts of each plan message)."""
        cached = system_cached and bool(system.strip())
        system_ttl, ttls = breakpoint_ttls(cache_ttl, cache_points, cached)
        plan = self.plan(blocks, "anthropic")
        messages = self.items(plan, "anthropic", lambda m: anthropic_messages(m, _NONE))
        # where each plan message's payload messages start (a system message kept exactly
        # is a payload message of its own inside a plan message)
        rows = cast("list[Items]", plan.items["anthropic"])
        first = [0, *accumulate(map(len, rows))]
        owner, shifts = plan.owner, plan.shifts
        for j in {owner[q] for q in cache_points if 0 <= q < len(owner)} - {-1}:
            shift = shifts[j]  # a moved message's parts keep the indices planned before
            mine = {q - shift: ttls[q] for q in cache_points if q >= shift}
            mark_checkpoints(messages[first[j] : first[j + 1]], plan.messages[j], mine.keys(), mine)
        return anthropic_payload(system, messages, system_cached, system_ttl)

    def openai(self, system: str, blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
        """What :func:`~timeline.formats.openai.to_openai` returns, incrementally."""
        plan = self.plan(blocks, "chat")
        return chat_system(system) + self.items(plan, "chat", chat_items)

    def openai_responses(self, system: str, blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
        """What :func:`~timeline.formats.openai.to_openai_responses` returns, incrementally."""
        plan = self.plan(blocks, "responses")
        items = self.items(plan, "responses", responses_items)
        return responses_system(system) + items
