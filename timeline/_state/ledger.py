"""The one owner of a timeline's blocks and of everything derived from them.

A :class:`Ledger` holds the blocks in order (summaries in place) and what is derived from
them: blocks by id, tool-call ids, the latest summary, pinned and carried blocks, the
blocks new since the last persist, the persisted state and the visible stream. Appends,
hiding, pinning, compaction, restore and persistence each call one method here, which
updates every index it affects; nothing else changes them. Readers get read-only views.
``incremental=False`` makes it the reference engine: nothing is remembered between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set

import attrs
import msgspec

from timeline._cache import SentRequest
from timeline._model import (
    CONV_RANGE_SUMMARY,
    Block,
    CallIds,
    IndexStore,
    TimelineError,
    TimelineSnapshot,
    TimelineState,
    block_type,
)
from timeline._state.archive import RecallMemo
from timeline._state.carry import CarriedIds, Carry
from timeline._state.notes import RenderNotes
from timeline._state.state_writes import StateWrites
from timeline._state.stream import VisibleStream, latest_summary_index
from timeline._tokens import BlockTokenMemo

__all__ = ["Ledger", "RenderNotes"]


@attrs.define(eq=False)
class Ledger(StateWrites):
    """Blocks, derived indexes and state of one conversation (see the module docstring;
    the typed writes of state fields nothing derives from: :class:`StateWrites`)."""

    memo: BlockTokenMemo
    incremental: bool = True
    recall: RecallMemo = attrs.field(factory=RecallMemo)
    """What the last renders recalled, reused while nothing it depends on changed."""
    notes: RenderNotes = attrs.field(factory=RenderNotes, init=False)
    store: IndexStore | None = attrs.field(default=None, init=False)
    """The store last persisted to or loaded from: the archive beyond memory."""
    _blocks: list[Block] = attrs.field(factory=list, init=False)
    _by_id: dict[str, Block] = attrs.field(factory=dict, init=False)
    _calls: CallIds = attrs.field(factory=CallIds, init=False)
    _summary_index: int = attrs.field(default=-1, init=False)
    _summary_count: int = attrs.field(default=0, init=False)
    _state: TimelineState = attrs.field(factory=TimelineState, init=False)
    _version: int = attrs.field(default=0, init=False)
    _new_ids: list[str] = attrs.field(factory=list, init=False)
    _carry: Carry = attrs.field(factory=Carry, init=False)
    _carried: CarriedIds = attrs.field(init=False)
    _stream: VisibleStream = attrs.field(init=False)
    prepared: object | None = attrs.field(default=None, init=False)
    """The summary being prepared for the next compaction (opaque here: see
    :mod:`timeline._render.prepared`), or None; a summary inserted or a reset drops it."""

    def __attrs_post_init__(self) -> None:
        self._carried = CarriedIds(self._carry)
        self._stream = VisibleStream(self.memo)

    # -- reading ---------------------------------------------------------------------

    @property
    def blocks(self) -> Sequence[Block]:
        """Every block in memory, in order (read-only: change them through the ledger)."""
        return self._blocks

    @property
    def state(self) -> TimelineState:
        return self._state

    @property
    def version(self) -> int:
        """The store version last persisted at or loaded from."""
        return self._version

    @property
    def summary_index(self) -> int:
        """Index of the latest summary in :attr:`blocks`, or -1."""
        return self._summary_index

    @property
    def summary_count(self) -> int:
        """Summary blocks held in memory."""
        return self._summary_count

    @property
    def pinned(self) -> Set[str]:
        return self._carry.pinned.keys()

    @property
    def carried(self) -> Set[str]:
        """Blocks kept visible right after the latest summary (a live view)."""
        return self._carried

    @property
    def plan_id(self) -> str | None:
        return self._carry.plan_id

    @property
    def new_ids(self) -> Sequence[str]:
        """Ids of the blocks appended or inserted since the last persist."""
        return self._new_ids

    def get(self, block_id: str) -> Block | None:
        return self._by_id.get(block_id)

    @property
    def calls(self) -> CallIds:
        """The tool-call ids held and the names callers give them (read-only)."""
        return self._calls

    def cost(self, block: Block) -> int:
        """Exact prompt tokens of ``block`` as rendered (hidden: its replacement)."""
        return self._stream.cost(block)

    def refresh_stream(self) -> VisibleStream:
        """Bring the visible stream up to date (extended after appends, rebuilt after
        anything else changed the structure) and return it."""
        stream = self._stream
        version = self._state.structure_version
        if stream.version != version:
            stream.rebuild(self._blocks, self._summary_index, self._carried, self._state.cleared)
            stream.version = version
        else:
            stream.extend(self._blocks, self._state.cleared)
        return stream

    def begin_call(self) -> None:
        """Start of a render, estimate or compaction (the reference engine forgets all)."""
        if not self.incremental:
            self.memo.reset()
            self._stream.version = -1
            self.recall = RecallMemo()

    def snapshot(self, conversation_id: str) -> TimelineSnapshot:
        state = msgspec.structs.replace(self._state, pinned=list(self._carry.pinned))
        return TimelineSnapshot(conversation_id, list(self._blocks), state)

    def window(self, conversation_id: str) -> TimelineSnapshot:
        """The live window: pinned blocks from before the latest summary, then the summary
        onward (everything when there is no summary), with the state to continue from."""
        s = self._summary_index
        carried = self._carried
        pinned = [b for b in self._blocks[:s] if b.id in carried] if s >= 0 else []
        window = pinned + self._blocks[max(s, 0) :]
        # the ids only filter pins and cleared blocks: a window of many blocks and neither
        # (an import) does not build a set of every id on each persist
        ids = {b.id for b in window} if self._carry.pinned or self._state.cleared else set()
        state = msgspec.structs.replace(
            self._state,
            pinned=[i for i in self._carry.pinned if i in ids],
            cleared={i: t for i, t in self._state.cleared.items() if i in ids},
        )
        return TimelineSnapshot(conversation_id, window, state)

    # -- changing --------------------------------------------------------------------

    def append(
        self,
        stored: Sequence[Block],
        state: TimelineState,
        offloaded: Mapping[str, str] | None = None,
    ) -> None:
        """Add validated blocks (``state``: the counters after them; ``offloaded``: ids
        shown by a preview from the start, with it)."""
        if offloaded:
            state = msgspec.structs.replace(state, cleared={**state.cleared, **offloaded})
        carry = self._carry
        carried_before = carry.unpinned_extra()
        for b in stored:
            self._blocks.append(b)
            self._by_id[b.id] = b
            self._new_ids.append(b.id)
            self._calls.track(b, block_type(b.type).render)
            carry.track(b)
        self._state = state
        lost = carried_before - set(carry.extra())
        if lost and self._summary_index >= 0:
            self._bump()  # a block carried past the summary is carried no more
        elif lost:
            self._stream.uncarried(lost)  # still shown where it is, no longer carried

    def replace(self, changed: Mapping[int, Block]) -> None:
        """Swap blocks in place (hide, unhide, pruning): same ids, new renders."""
        for index, block in changed.items():
            self._blocks[index] = block
            self._by_id[block.id] = block
        if changed:
            self._bump()

    def pin(self, block_ids: Iterable[str]) -> None:
        """Keep blocks visible after every compaction (a cleared one is shown whole)."""
        ids = list(block_ids)
        for i in ids:
            self._carry.pinned[i] = None
        self._uncleared(ids)
        self._bump()

    def clear_content(self, placeholders: Mapping[str, str]) -> None:
        """The clearing tier: show the blocks with these ids as their placeholder (``""``:
        left out) from now on. The blocks themselves stay as they are (turn log, search,
        ``read``); only their rendered form changes."""
        if placeholders:
            cleared = {**self._state.cleared, **placeholders}
            self._state = msgspec.structs.replace(self._state, cleared=cleared)
            self._bump()

    def restore_content(self, block_ids: Iterable[str]) -> None:
        """Show cleared blocks whole again (``Timeline.unhide`` of their paths)."""
        if self._uncleared(block_ids):
            self._bump()

    def _uncleared(self, block_ids: Iterable[str]) -> bool:
        cleared = self._state.cleared
        drop = [i for i in block_ids if i in cleared]
        if drop:
            kept = {i: t for i, t in cleared.items() if i not in drop}
            self._state = msgspec.structs.replace(self._state, cleared=kept)
        return bool(drop)

    def unpin(self, block_ids: Iterable[str]) -> None:
        for i in block_ids:
            self._carry.pinned.pop(i, None)
        self._bump()

    def insert_summary(
        self, at: int, summary: Block, cost: int, history: Block | None, block_seq: int
    ) -> None:
        """A compaction's summary (and the plan history after it) inserted at ``at``;
        ``cost`` is the summary's exact token cost, ``block_seq`` the counter after it."""
        fresh = not self._carry.release(summary)  # follow-ups left to it: carried no more
        inserted = [summary] if history is None else [summary, history]
        self.prepared = None
        self._blocks[at:at] = inserted
        for b in inserted:
            self._by_id[b.id] = b
            self._new_ids.append(b.id)
        self.memo.remember(summary, cost)
        self._summary_index = at
        self._summary_count += 1
        stream = self._stream
        current = stream.version == self._state.structure_version
        version = self._state.structure_version + 1
        self._state = msgspec.structs.replace(
            self._state, block_seq=block_seq, compacted_at_seq=block_seq, structure_version=version
        )
        spliced = self.incremental and history is None and current and fresh
        if spliced and stream.splice_summary(self._blocks, at):
            stream.version = version

    def note_render(
        self, key: tuple[int, ...], raw_estimate: Callable[[], int], sent: SentRequest
    ) -> None:
        """A render finished: what it was made of, its size (counted when asked) and
        what it shows."""
        n = self.notes
        self.notes = RenderNotes(
            raw_estimate, key, n.skipped_at_seq, n.warned_no_budget, sent, n.cached
        )

    def note_skipped(self) -> None:
        """A compaction was skipped at the current ``block_seq`` (its summary would not
        have been smaller): not planned again until something is appended."""
        self.notes = attrs.evolve(self.notes, skipped_at_seq=self._state.block_seq)

    def note_warned(self) -> None:
        """The no-budget warning was given (once per timeline)."""
        self.notes = attrs.evolve(self.notes, warned_no_budget=True)

    def fork(self) -> Ledger:
        """A copy to try a change on (a dry run): its own blocks, state, indexes and
        stream; the same token memo and prepared summary."""
        other = Ledger(self.memo, incremental=self.incremental)
        pinned = list(self._carry.pinned)
        other._install(self._blocks, msgspec.structs.replace(self._state, pinned=pinned))
        other._version = self._version
        other._new_ids = list(self._new_ids)
        other.notes = self.notes
        other.prepared = self.prepared
        return other

    def reset(
        self, blocks: Sequence[Block], state: TimelineState, new_ids: Iterable[str] | None = None
    ) -> None:
        """Replace everything by ``blocks`` and ``state`` (load, restore, clear, evict);
        ``new_ids`` (default: unchanged) are the blocks the next persist writes."""
        self._install(blocks, state)
        self.memo.forget(self._by_id.__contains__)
        if new_ids is not None:
            self._new_ids = list(new_ids)

    def _install(self, blocks: Sequence[Block], state: TimelineState) -> None:
        """Take ``blocks`` and ``state`` and derive every index from them."""
        self._blocks = list(blocks)
        self.prepared = None
        self._by_id = {b.id: b for b in self._blocks}
        self._calls = CallIds()
        for b in self._blocks:
            self._calls.track(b, block_type(b.type).render)
        self._summary_index = latest_summary_index(self._blocks)
        self._summary_count = sum(1 for b in blocks if b.type == CONV_RANGE_SUMMARY)
        pinned = [i for i in state.pinned if i in self._by_id]
        cleared = {i: t for i, t in state.cleared.items() if i in self._by_id}
        self._state = msgspec.structs.replace(state, pinned=[], cleared=cleared)
        self._carry.load(blocks, pinned, state.current_turn_id, self._summary_index)
        self._stream.version = -1

    def hand_over(self, conversation_id: str) -> list[Block]:
        """Every block, taken out of memory (``Timeline.drain``); the state goes on, and
        the tool-call ids stay known, so a later result may answer a call handed over.
        Refused unless every block is new and in the window."""
        if self._version or self._summary_count or self._carry.pinned or self._state.cleared:
            raise TimelineError(
                f"timeline {conversation_id!r} cannot be drained: it was persisted, loaded "
                "or compacted, or has pinned or cleared blocks; drain is for a new "
                "timeline whose every block the caller stores"
            )
        blocks, calls = self._blocks, self._calls
        self.reset([], self._state, new_ids=())
        self._calls = calls
        self._bump()
        return blocks

    def bump(self) -> None:
        """Something changed how the blocks render (the stream is rebuilt)."""
        self._bump()

    def persisted(
        self,
        version: int,
        written: Set[str],
        window: TimelineSnapshot | None,
        store: IndexStore | None = None,
    ) -> None:
        """A commit to ``store`` succeeded at ``version`` with the blocks ``written``;
        ``window`` (when nothing changed meanwhile) replaces the blocks in memory
        (eviction)."""
        self._version = version
        self.store = store
        self._new_ids = [i for i in self._new_ids if i not in written]
        if window is not None and len(window.blocks) != len(self._blocks):
            state = msgspec.structs.replace(self._state, pinned=window.state.pinned)
            prepared = self.prepared  # covers blocks after the summary, still in memory
            self.reset(window.blocks, state)
            self.prepared = prepared

    def restored(self, snapshot: TimelineSnapshot) -> None:
        """Take over a checked snapshot (``Timeline.restore``): its blocks count as new,
        and the counters never go back, so an id is never reused for a different block."""
        now = self._state
        state = msgspec.structs.replace(
            snapshot.state,
            block_seq=max(snapshot.state.block_seq, now.block_seq),
            turn_seq=max(snapshot.state.turn_seq, now.turn_seq),
            structure_version=max(snapshot.state.structure_version, now.structure_version),
        )
        self.reset(snapshot.blocks, state, new_ids=[b.id for b in snapshot.blocks])
        self.bump()

    def cleared(self) -> None:
        """Drop every block (``Timeline.clear``); the counters go on."""
        state = msgspec.structs.replace(
            self._state, current_turn_id="", pinned=[], usage=None, compacted_at_seq=-1
        )
        self.reset([], state, new_ids=())
        self.bump()

    def loaded(
        self, version: int, snapshot: TimelineSnapshot, store: IndexStore | None = None
    ) -> None:
        """Take over a window stored in ``store`` (its stored policy is the timeline's)."""
        state = snapshot.state
        if state.policy is not None:
            state = msgspec.structs.replace(state, policy=None)
        self.reset(snapshot.blocks, state, new_ids=())
        self._version = version
        self.store = store

    def _bump(self) -> None:
        self._state = msgspec.structs.replace(
            self._state, structure_version=self._state.structure_version + 1
        )
