"""Which blocks stay visible right after the latest summary ("carried").

Three kinds: pinned blocks (``append(pin=True)``, ``pin(paths)``), the newest
``react.plan``, and the user prompts that arrived while the running turn already had tool
calls (follow-ups the agent has not answered yet). :class:`Carry` is derived from the
blocks in order; the ledger feeds it every appended block and rebuilds it on load.

Follow-ups are the one protection a compaction may relax: the oldest ones that do not fit
in their share of what stays verbatim are left to the summary (which lists them), and the
summary's meta names them (:data:`RELEASED_KEY`) so a rebuilt carry leaves them out too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Set
from typing import Final

import attrs

from timeline._model import (
    CONV_RANGE_SUMMARY,
    REACT_PLAN,
    TURN_HEADER,
    USER_PROMPT,
    Block,
    block_type,
)

__all__ = ["RELEASED_KEY", "Carry", "CarriedIds"]

RELEASED_KEY: Final = "released_follow_ups"
"""A summary's meta: the ids of the follow-ups its compaction stopped carrying (only
present when it released some)."""


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

    def release(self, summary: Block) -> bool:
        """Stop carrying the follow-ups ``summary``'s compaction left to it (its meta names
        them); whether it named any."""
        released = summary.meta.get(RELEASED_KEY) or ()
        for i in released:
            self.followups.pop(i, None)
        return bool(released)

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
        summaries: list[Block] = []
        for b in blocks:
            if b.type == REACT_PLAN:
                self.plan_id = b.id
            elif b.type == CONV_RANGE_SUMMARY:
                summaries.append(b)
            elif b.turn_id == current_turn:
                self.track(b)
        header = any(b.type == TURN_HEADER and b.turn_id == current_turn for b in blocks)
        if current_turn and not header:
            # a persisted window whose turn start was evicted: the prompts of the running
            # turn before the summary are there only because they were carried follow-ups
            for b in blocks[: max(summary_index, 0)]:
                if b.type == USER_PROMPT and b.turn_id == current_turn and b.id not in self.pinned:
                    self.followups[b.id] = None
        for summary in summaries:
            self.release(summary)


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
