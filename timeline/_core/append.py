"""What an append checks and fills in: ``id``, ``ts``, ``turn_id``, ``author``, ``path``
and the call id, against the blocks already held (unique ids, no orphan results)."""

from __future__ import annotations

from typing import Any

import attrs
import msgspec

from timeline._compaction import CompactionPolicy, offload_preview
from timeline._model import (
    SOURCE_CALL_ID,
    TURN_HEADER,
    Block,
    CallIds,
    DuplicateBlockIdError,
    InvalidBlockError,
    OrphanToolResultError,
    TimelineState,
    block_type,
    check_block,
    provider_call_id,
)
from timeline._render import Clock, IdFactory, timestamp
from timeline._state import Ledger

__all__ = ["Batch", "new_id"]


def new_id(id_factory: IdFactory, kind: str, seq: int) -> str:
    """``id_factory``'s id, checked: a non-empty str of at most 128 printable,
    non-space characters (a generated call id is then made provider-safe)."""
    value = id_factory(kind, seq)
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= 128
        or not value.isprintable()
        or any(map(str.isspace, value))
    ):
        raise InvalidBlockError(
            f"id_factory returned {value!r} for a {kind}: ids must be non-empty strings of "
            "at most 128 printable characters without spaces"
        )
    return value


@attrs.define
class Batch:
    """Blocks being appended together (one ``append`` or one ``extend``): each is checked
    against the ledger and the batch so far; nothing reaches the ledger until the whole
    batch is ready."""

    ledger: Ledger
    conversation_id: str
    clock: Clock
    id_factory: IdFactory
    state: TimelineState
    stored: list[Block] = attrs.field(factory=list)
    _ids: set[str] = attrs.field(factory=set)
    _calls: CallIds = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._calls = CallIds(self.ledger.calls)

    def add(self, block: Block) -> Block:
        """Check and complete ``block``; returns the block as it will be stored."""
        block = check_block(block)
        spec = block_type(block.type)
        state = self.state
        turn_id = state.current_turn_id
        if block.type == TURN_HEADER:
            turn_seq = state.turn_seq + 1
            turn_id = new_id(self.id_factory, "turn", turn_seq)
            state = msgspec.structs.replace(state, turn_seq=turn_seq, current_turn_id=turn_id)
        elif not turn_id:
            raise InvalidBlockError("no turn has begun: call begin_turn() before appending blocks")
        block_seq = state.block_seq + 1
        state = msgspec.structs.replace(state, block_seq=block_seq)
        block_id = block.id or new_id(self.id_factory, "block", block_seq)
        self._check_id(block_id)
        updates: dict[str, Any] = {"id": block_id}
        if not block.turn_id:
            updates["turn_id"] = turn_id
        if not block.ts:
            updates["ts"] = timestamp(self.clock)
        if not block.author:
            updates["author"] = spec.default_author or "system"
        call_id = self._call_id(block, spec.render, block_id, updates)
        if not block.path:
            name = block.meta.get("name") if spec.render == "attachment" else None
            updates["path"] = spec.default_path(
                updates.get("turn_id", block.turn_id), call_id, str(name) if name else None
            )
        stored = msgspec.structs.replace(block, **updates)
        self.state = state
        self.stored.append(stored)
        self._ids.add(stored.id)
        self._calls.track(stored, spec.render)
        return stored

    def _check_id(self, block_id: str) -> None:
        if self.ledger.get(block_id) is not None or block_id in self._ids:
            raise DuplicateBlockIdError(
                f"block id {block_id!r} is already used in conversation {self.conversation_id!r}",
                conversation_id=self.conversation_id,
                block_id=block_id,
            )

    def _call_id(
        self, block: Block, render: str, block_id: str, updates: dict[str, Any]
    ) -> str | None:
        """A call's internal id (see :mod:`timeline._model.call_ids`: a taken id gets a
        free one, the given id kept in meta); the internal id of the call a result
        answers (an orphan result is refused)."""
        given = block.call_id
        if render == "tool_call":
            if not given:
                base = provider_call_id(f"call_{block_id}")
                internal = updates["call_id"] = self._calls.generated_id(base)
                return internal
            internal = self._calls.internal_id(given)
        elif render == "tool_result":
            answered = self._calls.answered_by(given)
            if answered is None:
                raise OrphanToolResultError(
                    f"tool result names call_id {given!r} but no earlier react.tool.call has it",
                    conversation_id=self.conversation_id,
                    block_id=block_id,
                )
            internal = answered
        else:
            return given
        if internal != given:
            updates["call_id"] = internal
            updates["meta"] = {**block.meta, SOURCE_CALL_ID: given}
        return internal

    def offloaded(self, policy: CompactionPolicy) -> dict[str, str]:
        """The batch's text tool results over the policy's ``offload_over_tokens`` (none
        of an excluded tool), by id, with the preview each shows from now on instead of
        its text (:mod:`timeline._compaction.offload`). A cheap upper bound rules most
        results out before any exact count."""
        clearing = policy.clearing
        over = clearing.offload_over_tokens if clearing is not None and policy.enabled else None
        if clearing is None or over is None:
            return {}
        memo = self.ledger.memo
        out: dict[str, str] = {}
        for i, b in enumerate(self.stored):
            if block_type(b.type).render != "tool_result" or b.data is not None:
                continue
            if b.tool_id in clearing.exclude_tools or (memo.lazy and memo.bound(b) <= over):
                continue
            tokens = memo.block(b)
            if tokens <= over:
                continue
            preview = offload_preview(b, self._call_of(b, i), tokens)
            if memo.text(preview) < tokens:
                out[b.id] = preview
        return out

    def _call_of(self, result: Block, before: int) -> Block | None:
        """The call ``result`` answers: in the batch before it, else the newest in the
        ledger with its call id."""
        for b in reversed(self.stored[:before]):
            if b.call_id == result.call_id and block_type(b.type).render == "tool_call":
                return b
        for b in reversed(self.ledger.blocks):
            if b.call_id == result.call_id and block_type(b.type).render == "tool_call":
                return b
        return None
