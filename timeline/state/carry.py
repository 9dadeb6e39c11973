"""Which blocks stay visible right after the latest summary ("carried").

Three kinds: pinned blocks (``append(pin=True)``, ``pin(paths)``), the newest
``react.plan``, and the user prompts that arrived while the running turn already had tool
calls (follow-ups the agent has not answered yet). :class:`Carry` is derived from the
blocks in order; the ledger feeds it every appended block and rebuilds it on load.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Set

import attrs

from timeline.model.block import REACT_PLAN, TURN_HEADER, USER_PROMPT, Block
from timeline.model.block_types import block_type

__all__ = ["Carry", "CarriedIds"]


@attrs.define
class Carry:
    """The pinned ids (in pin order), the newest plan and the running turn's follow-ups."""

    pinned: dict[str, None] = attrs.field(factory=dict)
    plan_id: str | None = None
    followups: dict[str, None] = attrs.field(factory=dict)
    turn_has_calls: bool = False

    def extra(self) -> list[str]:
        """The carried ids besides the pinned ones: follow-ups, then the newest plan."""
        extra = list(self.followups)
        if self.plan_id is not None:
            extra.append(self.plan_id)
        return extra

    def unpinned_extra(self) -> set[str]:
        return {i for i in self.extra() if i not in self.pinned}

    def track(self, block: Block) -> None:
        """Take in one appended block."""
        if block.type == TURN_HEADER:
            self.followups = {}
            self.turn_has_calls = False
        elif block.type == REACT_PLAN:
            self.plan_id = block.id
        elif block_type(block.type).render == "tool_call":
            self.turn_has_calls = True
        elif block.type == USER_PROMPT and self.turn_has_calls:
            self.followups[block.id] = None

    def load(
        self, blocks: Sequence[Block], pinned: Iterable[str], current_turn: str, summary_index: int
    ) -> None:
        """Derive everything again for a loaded or restored window (``pinned`` already
        filtered to ids it holds). In place: the live views of it stay valid."""
        self.pinned = dict.fromkeys(pinned)
        self.plan_id = None
        self.followups = {}
        self.turn_has_calls = False
        for b in blocks:
            if b.type == REACT_PLAN:
                self.plan_id = b.id
            elif b.turn_id == current_turn:
                self.track(b)
        header = any(b.type == TURN_HEADER and b.turn_id == current_turn for b in blocks)
        if current_turn and not header:
            # a persisted window whose turn start was evicted: the prompts of the running
            # turn before the summary are there only because they were carried follow-ups
            for b in blocks[: max(summary_index, 0)]:
                if b.type == USER_PROMPT and b.turn_id == current_turn and b.id not in self.pinned:
                    self.followups[b.id] = None


class CarriedIds(Set[str]):
    """A live read-only view of the carried ids (pinned first, then the others)."""

    def __init__(self, carry: Carry) -> None:
        self._carry = carry

    def __contains__(self, item: object) -> bool:
        c = self._carry
        return item in c.pinned or item == c.plan_id or item in c.followups

    def __iter__(self) -> Iterator[str]:
        c = self._carry
        yield from c.pinned
        yield from (i for i in c.extra() if i not in c.pinned)

    def __len__(self) -> int:
        return sum(1 for _ in self)
