"""The visible stream: what a render shows of the in-memory blocks.

From the latest summary (inclusive), then the pinned blocks from before it, then every
later block; hidden blocks become their replacement text once per path. Kept
incrementally: appends extend it, a compaction splices the new summary in place of what it
covers, anything else (hide, pin, restore...) rebuilds it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence, Set

import attrs
import msgspec

from timeline._cache import kind_positions
from timeline._model import CONV_RANGE_SUMMARY, Block, block_type, canonical_json
from timeline._tokens import BlockTokenMemo

__all__ = ["HIDDEN_TOOL_PLACEHOLDER", "VisibleStream", "cleared_form", "rendered_form"]

HIDDEN_TOOL_PLACEHOLDER = "(hidden)"
"""Rendered for a hidden tool call/result without replacement: the pair must stay whole."""


def cleared_form(block: Block, placeholder: str) -> Block:
    """How the clearing tier shows ``block``: hidden behind ``placeholder`` (``""``: left
    out, or ``(hidden)`` for a tool call or result), as a hidden block renders."""
    return msgspec.structs.replace(block, hidden=True, replacement_text=placeholder or None)


def rendered_form(block: Block, seen_hidden_paths: set[str]) -> Block | None:
    """How ``block`` renders given the hidden paths already shown, or None if omitted.

    A hidden tool call or result is never omitted (that would orphan its partner): it
    renders with its replacement text, or a placeholder, in place of its content.
    """
    if not block.hidden:
        return block
    kind = block_type(block.type).render
    if kind in ("tool_call", "tool_result"):
        replacement = block.replacement_text or HIDDEN_TOOL_PLACEHOLDER
        if block.path in seen_hidden_paths and kind == "tool_result":
            return None
        seen_hidden_paths.add(block.path)
        text = canonical_json({"hidden": replacement}) if kind == "tool_call" else replacement
        return msgspec.structs.replace(block, text=text, data=None, mime="text/plain")
    if block.replacement_text is None or block.path in seen_hidden_paths:
        return None
    seen_hidden_paths.add(block.path)
    return msgspec.structs.replace(block, text=block.replacement_text, data=None, mime="text/plain")


@attrs.define
class VisibleStream:
    """The rendered stable stream plus its token total, extended on append."""

    memo: BlockTokenMemo
    blocks: list[Block] = attrs.field(factory=list)
    costs: list[int] = attrs.field(factory=list)
    source_index: list[int] = attrs.field(factory=list)
    """For each stream block, its index in the timeline's block list."""
    tokens: int = 0
    consumed: int = 0
    """How many timeline blocks have been looked at."""
    version: int = -1
    anchor: int | None = None
    """Stream index of the last block of the summary + pinned run (a stable prefix)."""
    positions: list[int] = attrs.field(factory=list)
    """Cache lookback position of each stream block (see ``timeline._cache.positions``)."""
    pinned_tokens: int = 0
    pending: list[int] = attrs.field(factory=list)
    """Stream positions whose cost is still an upper bound (see ``resolve``)."""
    pending_total: int = 0
    """The sum of the upper bounds at :attr:`pending` (so a render needs no pass over
    them: without a budget nothing is ever resolved and they are most of the stream)."""
    open_calls: dict[str, None] = attrs.field(factory=dict)
    """Call ids of visible tool calls without a visible result (payloads add a synthetic
    "no result recorded" result for each)."""
    _pinned: Set[str] = attrs.field(factory=frozenset)
    _cleared: Mapping[str, str] = attrs.field(factory=dict)
    """Blocks shown in their cleared form (id -> placeholder), as of the last rebuild."""
    _pinned_at: dict[str, int] = attrs.field(factory=dict)
    """Stream position of each block counted in :attr:`pinned_tokens`."""
    _kinds: list[str] = attrs.field(factory=list)
    """Render kind of each stream block (what ``positions`` is computed from)."""
    _seen_hidden: set[str] = attrs.field(factory=set)
    _pos: int = -1
    _prev_kind: str = ""

    def cost(self, block: Block) -> int:
        """Exact token cost of a block in its rendered form."""
        if block.hidden:
            return self.memo.hidden(block)
        return self.memo.block(block)

    def resolve(self, enough: Callable[[], bool] | None = None) -> None:
        """Replace upper bounds by exact costs (tokenizing each block once, ever); with
        ``enough``, largest bounds first and only until ``enough()`` holds."""
        if enough is not None:
            self.pending.sort(key=self.costs.__getitem__)
        while self.pending:
            if enough is not None and enough():
                break
            pos = self.pending.pop()
            block = self.blocks[pos]
            exact = self.memo.block(block)
            self.pending_total -= self.costs[pos]
            delta = exact - self.costs[pos]
            self.costs[pos] = exact
            self.tokens += delta
            if block.id in self._pinned_at:
                self.pinned_tokens += delta

    def rebuild(
        self,
        blocks: Sequence[Block],
        summary_index: int,
        pinned: Set[str],
        cleared: Mapping[str, str] | None = None,
    ) -> None:
        self.blocks = []
        self.costs = []
        self.source_index = []
        self.positions = []
        self._kinds = []
        self.pending = []
        self.pending_total = 0
        self.tokens = 0
        self.pinned_tokens = 0
        self._pinned_at = {}
        self.open_calls = {}
        self._pinned = pinned
        self._cleared = cleared or {}
        self._seen_hidden = set()
        self._pos = -1
        self._prev_kind = ""
        if summary_index >= 0:
            self._add(blocks[summary_index], summary_index)
            if pinned:
                for i in range(summary_index):
                    if blocks[i].id in pinned:
                        self._add(blocks[i], i)
            self.consumed = summary_index + 1
            self.anchor = len(self.blocks) - 1 if self.blocks else None
        else:
            self.consumed = 0
            self.anchor = None
        self.extend(blocks)

    def extend(self, blocks: Sequence[Block], cleared: Mapping[str, str] | None = None) -> None:
        """Take in the timeline blocks appended since the last call (``cleared``: the
        blocks shown by a placeholder now, appended ones offloaded on arrival among
        them)."""
        if cleared is not None:
            self._cleared = cleared
        for i in range(self.consumed, len(blocks)):
            self._add(blocks[i], i)
        self.consumed = len(blocks)

    def _add(self, block: Block, index: int) -> None:
        placeholder = self._cleared.get(block.id)
        source = block if placeholder is None or block.hidden else cleared_form(block, placeholder)
        shown = rendered_form(source, self._seen_hidden)
        if shown is None:
            return
        memo = self.memo
        if shown.hidden or not memo.lazy:
            cost = self.cost(shown)
        else:
            known = memo.known(shown)
            if known is None:
                cost = memo.bound(shown)
                self.pending.append(len(self.blocks))
                self.pending_total += cost
            else:
                cost = known
        self.blocks.append(shown)
        self.costs.append(cost)
        self.source_index.append(index)
        self.tokens += cost
        if block.id in self._pinned:
            self.pinned_tokens += cost
            self._pinned_at[block.id] = len(self.blocks) - 1
        kind = block_type(block.type).render
        self._kinds.append(kind)
        self._position(kind)
        track_call(self.open_calls, shown, kind)

    def _position(self, kind: str) -> None:
        (position,), self._pos, self._prev_kind = kind_positions(
            (kind,), self._pos, self._prev_kind
        )
        self.positions.append(position)

    def uncarried(self, block_ids: Set[str]) -> None:
        """Blocks that are carried no more (a superseded plan, the follow-ups of a turn
        that ended) but stay where they are: they leave :attr:`pinned_tokens`."""
        for block_id in block_ids:
            pos = self._pinned_at.pop(block_id, None)
            if pos is not None:
                self.pinned_tokens -= self.costs[pos]

    def splice_summary(self, blocks: Sequence[Block], summary_index: int) -> bool:
        """Take in a summary just inserted at ``summary_index`` of ``blocks`` without a
        rebuild: it replaces the stream up to the first block it does not cover, the
        pinned blocks of that part stay right after it, the rest is kept as is (source
        indices shifted by one).

        False, changing nothing, when a rebuild is needed: the stream was not up to date
        or still holds upper bounds, or a hidden block in the replaced part decides how a
        later block with the same path renders."""
        if self.consumed != len(blocks) - 1 or self.pending:
            return False
        summary = blocks[summary_index]
        lo = 0 if self.anchor is None else self.anchor + 1
        k = bisect_left(self.source_index, summary_index, lo=lo)
        old = self.blocks
        if any(old[p].hidden for p in range(k)):
            return False
        pinned = self._pinned
        keep = [p for p in range(k) if old[p].id in pinned and old[p].type != CONV_RANGE_SUMMARY]
        order = keep + list(range(k, len(old)))
        cost = self.cost(summary)
        self.blocks = [summary, *(old[p] for p in order)]
        self.costs = [cost, *(self.costs[p] for p in order)]
        self.tokens = sum(self.costs)
        index = self.source_index
        self.source_index = [summary_index, *(index[p] for p in keep)]
        self.source_index += [i + 1 for i in index[k:]]
        kinds = self._kinds
        self._kinds = [block_type(summary.type).render, *(kinds[p] for p in order)]
        self.positions, self._pos, self._prev_kind = kind_positions(self._kinds)
        self.anchor = len(keep)
        self.consumed = len(blocks)
        counted = self._pinned_at
        self._pinned_at = {b.id: pos for pos, b in enumerate(self.blocks) if b.id in counted}
        if keep:  # a pinned call may have lost its result: recount the calls without one
            self.open_calls = {}
            for b, kind in zip(self.blocks, self._kinds, strict=True):
                track_call(self.open_calls, b, kind)
        # else unchanged: a cut never separates a call from its results nor follows a call
        # still waiting for one, so no call of the replaced part was open
        return True


def track_call(open_calls: dict[str, None], block: Block, kind: str) -> None:
    """Keep ``open_calls`` (calls without a result so far) up to date with ``block``."""
    if not block.call_id:
        return
    if kind == "tool_call":
        open_calls[block.call_id] = None
    elif kind == "tool_result":
        open_calls.pop(block.call_id, None)


def latest_summary_index(blocks: Sequence[Block]) -> int:
    """Index of the last ``conv.range.summary`` in ``blocks``, or -1."""
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].type == CONV_RANGE_SUMMARY:
            return i
    return -1
