"""``Timeline``: the conversation as an ordered list of blocks, and what changes it.

Appends are validated (the timeline is unchanged on error). Rendering, compaction and
persistence are driven from here but live in their own modules (``_render``,
``compaction``, ``persistence``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from datetime import UTC, datetime
from typing import Any

import attrs
import msgspec

from timeline.compaction import CompactionStats
from timeline.compaction.policy import CompactionPolicy
from timeline.compaction.summarizers.base import AsyncSummarizer, Summarizer
from timeline.formats.incremental import PayloadCache
from timeline.model.block import (
    CONV_RANGE_SUMMARY,
    PLAN_LATEST,
    REACT_PLAN,
    TURN_HEADER,
    USER_PROMPT,
    Block,
)
from timeline.model.block_types import block_type
from timeline.model.constructors import turn_header
from timeline.model.errors import (
    DuplicateBlockIdError,
    InvalidBlockError,
    NotFoundError,
    OrphanToolResultError,
    PinnedOverBudgetError,
    UnknownPathError,
)
from timeline.model.json_text import check_identifier, clean_text
from timeline.model.names import provider_call_id
from timeline.model.persistence import IndexStore, TimelineSnapshot, TimelineState, UsageRecord
from timeline.model.validate import (
    check_block,
    check_count,
    check_paths,
    check_render_args,
    check_snapshot,
)
from timeline.render import pipeline as _render
from timeline.render.context import RenderedContext
from timeline.state.stream import VisibleStream, latest_summary_index
from timeline.tokens import BlockTokenMemo, TiktokenCounter, TokenCounter

__all__ = ["Clock", "IdFactory", "Timeline", "sequential_ids", "utc_now"]

Clock = Callable[[], datetime]
IdFactory = Callable[[str, int], str]
"""``(kind, seq) -> id`` where kind is ``"block"`` or ``"turn"`` and seq counts from 1."""
Hook = Callable[[CompactionStats], object]


def utc_now() -> datetime:
    return datetime.now(UTC)


def sequential_ids(kind: str, seq: int) -> str:
    """The default ids: ``b1, b2...`` for blocks, ``t1, t2...`` for turns. The counters are
    persisted with the window, so ids stay unique in the conversation."""
    return f"{kind[0]}{seq}"


@attrs.define(eq=False)
class Timeline:
    """A conversation as a timeline of typed blocks (see DESIGN §3-§7)."""

    conversation_id: str
    policy: CompactionPolicy = attrs.field(factory=CompactionPolicy, kw_only=True)
    summarizer: Summarizer | AsyncSummarizer | None = attrs.field(default=None, kw_only=True)
    token_counter: TokenCounter | None = attrs.field(default=None, kw_only=True)
    on_before_compaction: Hook | None = attrs.field(default=None, kw_only=True)
    on_after_compaction: Hook | None = attrs.field(default=None, kw_only=True)
    clock: Clock = attrs.field(default=utc_now, kw_only=True)
    id_factory: IdFactory = attrs.field(default=sequential_ids, kw_only=True)
    model: str | None = attrs.field(default=None, kw_only=True)
    """A model name: when the policy knows no budget, the registry's context window for
    it gives one (``context_window_for``)."""
    incremental: bool = attrs.field(default=True, kw_only=True)
    """False: the reference engine. Every render counts, streams and builds payloads from
    scratch (no memo, no upper bounds, no splice, no payload reuse); the same decisions
    and output, much slower. The differential tests run both side by side."""

    _blocks: list[Block] = attrs.field(factory=list, init=False)
    _by_id: dict[str, Block] = attrs.field(factory=dict, init=False)
    _calls: set[str] = attrs.field(factory=set, init=False)
    _pinned: dict[str, None] = attrs.field(factory=dict, init=False)
    _summary_index: int = attrs.field(default=-1, init=False)
    _summary_count: int = attrs.field(default=0, init=False)
    """Summary blocks held in memory (only compaction adds one; loading replaces all)."""
    _state: TimelineState = attrs.field(factory=TimelineState, init=False)
    _memo: BlockTokenMemo = attrs.field(init=False)
    _stream: VisibleStream = attrs.field(init=False)
    _version: int = attrs.field(default=0, init=False)
    _new_ids: list[str] = attrs.field(factory=list, init=False)
    _last_raw_estimate: Callable[[], int] | None = attrs.field(default=None, init=False)
    payload_cache: PayloadCache = attrs.field(factory=PayloadCache, init=False, repr=False)
    """Message plans and provider items of the last payloads, reused by the next ones."""
    _warned_no_budget: bool = attrs.field(default=False, init=False)
    _skipped_at_seq: int = attrs.field(default=-1, init=False)
    """``block_seq`` when a compaction was last skipped (not smaller): not retried until
    something is appended."""
    _last_render: tuple[tuple[int, ...], Callable[[], int]] | None = attrs.field(
        default=None, init=False
    )
    """(content key, prompt tokens) of the last render: the size a forced render beats."""
    _plan_id: str | None = attrs.field(default=None, init=False)
    """The newest ``react.plan`` block (carried right after every summary)."""
    _followups: dict[str, None] = attrs.field(factory=dict, init=False)
    """Prompts appended while the running turn had tool calls (kept visible mid-turn)."""
    _turn_has_calls: bool = attrs.field(default=False, init=False)
    _carried: _Carried = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.conversation_id, str) or not self.conversation_id:
            raise InvalidBlockError("conversation_id must be a non-empty string")
        check_identifier(self.conversation_id, "conversation_id")
        if self.model is not None and not isinstance(self.model, str):
            raise InvalidBlockError(f"model must be a str, got {type(self.model).__name__}")
        if self.model is not None and self.policy.budget is None and self.policy.model is None:
            self.policy = attrs.evolve(self.policy, model=self.model)
        self._carried = _Carried(self)
        counter = self.token_counter if self.token_counter is not None else TiktokenCounter()
        self._memo = BlockTokenMemo(counter, lazy_bounds=self.incremental)
        self._stream = VisibleStream(self._memo)

    # -- reading -------------------------------------------------------------------

    @property
    def blocks(self) -> tuple[Block, ...]:
        """Every block held in memory, in order (summaries in place)."""
        return tuple(self._blocks)

    @property
    def current_turn_id(self) -> str:
        return self._state.current_turn_id

    @property
    def version(self) -> int:
        """The store version this timeline was last persisted at or loaded from."""
        return self._version

    @property
    def pinned_ids(self) -> tuple[str, ...]:
        return tuple(self._pinned)

    @property
    def token_memo(self) -> BlockTokenMemo:
        """The per-block token memo (exposes ``calls`` and ``chars_tokenized``)."""
        return self._memo

    def block_tokens(self, block: Block) -> int:
        """Exact prompt tokens of ``block`` as rendered (hidden: its replacement)."""
        return self._stream.cost(block)

    def get(self, block_id: str) -> Block:
        if not isinstance(block_id, str):
            raise InvalidBlockError(f"block_id must be a str, got {type(block_id).__name__}")
        try:
            return self._by_id[block_id]
        except KeyError:
            raise NotFoundError(
                f"no block {block_id!r} in memory",
                conversation_id=self.conversation_id,
                block_id=block_id,
            ) from None

    # -- appending -----------------------------------------------------------------

    def begin_turn(self, **meta: Any) -> str:
        """Start a turn: appends a ``turn.header`` and returns the new turn id."""
        return self.append(turn_header(**meta)).turn_id

    def append(self, block: Block, *, pin: bool = False) -> Block:
        """Validate, fill ``id``/``ts``/``turn_id``/``path``, append; returns the stored block.

        ``pin=True`` keeps the block rendered after every compaction. On any error the
        timeline is unchanged.
        """
        stored, state = self._prepare(block, self._state, set(), set())
        if pin:
            self._check_pin_fits(stored)
        self._commit_append([stored], state)
        if pin:
            self._pinned[stored.id] = None
            self._bump_structure()
        return stored

    def extend(self, blocks: Iterable[Block]) -> list[Block]:
        """Append several blocks atomically: all of them, or none on error."""
        if isinstance(blocks, Block | str | bytes) or not isinstance(blocks, Iterable):
            raise InvalidBlockError(f"extend takes an iterable of blocks, not {blocks!r}")
        state = self._state
        ids: set[str] = set()
        calls: set[str] = set()
        stored: list[Block] = []
        for block in blocks:
            b, state = self._prepare(block, state, ids, calls)
            ids.add(b.id)
            if b.type == "react.tool.call" and b.call_id:
                calls.add(b.call_id)
            stored.append(b)
        self._commit_append(stored, state)
        return stored

    def _new_id(self, kind: str, seq: int) -> str:
        """``id_factory``'s id, checked: a non-empty str of at most 128 printable,
        non-space characters (a generated call id is then made provider-safe)."""
        value = self.id_factory(kind, seq)
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

    def _prepare(
        self, block: Block, state: TimelineState, new_ids: set[str], new_calls: set[str]
    ) -> tuple[Block, TimelineState]:
        block = check_block(block)
        spec = block_type(block.type)
        updates: dict[str, Any] = {}
        turn_id = state.current_turn_id
        if block.type == TURN_HEADER:
            turn_seq = state.turn_seq + 1
            turn_id = self._new_id("turn", turn_seq)
            state = msgspec.structs.replace(state, turn_seq=turn_seq, current_turn_id=turn_id)
        elif not turn_id:
            raise InvalidBlockError("no turn has begun: call begin_turn() before appending blocks")
        block_seq = state.block_seq + 1
        state = msgspec.structs.replace(state, block_seq=block_seq)
        block_id = block.id or self._new_id("block", block_seq)
        if block_id in self._by_id or block_id in new_ids:
            raise DuplicateBlockIdError(
                f"block id {block_id!r} is already used in conversation {self.conversation_id!r}",
                conversation_id=self.conversation_id,
                block_id=block_id,
            )
        updates["id"] = block_id
        if not block.turn_id:
            updates["turn_id"] = turn_id
        if not block.ts:
            updates["ts"] = self.clock().isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if not block.author:
            updates["author"] = spec.default_author or "system"
        call_id = block.call_id
        if spec.render == "tool_call":
            if not call_id:
                call_id = updates["call_id"] = provider_call_id(f"call_{block_id}")
            if call_id in self._calls or call_id in new_calls:
                raise InvalidBlockError(
                    f"tool call id {call_id!r} is already used", block_id=block_id
                )
        elif (
            spec.render == "tool_result"
            and call_id not in self._calls
            and (call_id not in new_calls)
        ):
            raise OrphanToolResultError(
                f"tool result names call_id {call_id!r} but no earlier react.tool.call has it",
                conversation_id=self.conversation_id,
                block_id=block_id,
            )
        if not block.path:
            name = block.meta.get("name") if spec.render == "attachment" else None
            updates["path"] = spec.default_path(
                updates.get("turn_id", block.turn_id), call_id, str(name) if name else None
            )
        return msgspec.structs.replace(block, **updates), state

    def _commit_append(self, stored: Sequence[Block], state: TimelineState) -> None:
        pinned = self._pinned
        carried_before = {i for i in self._carried_extra() if i not in pinned}
        for b in stored:
            self._blocks.append(b)
            self._by_id[b.id] = b
            self._new_ids.append(b.id)
            if block_type(b.type).render == "tool_call" and b.call_id:
                self._calls.add(b.call_id)
            self._track_carry(b)
        self._state = state
        if self._summary_index >= 0 and carried_before - set(self._carried_extra()):
            self._bump_structure()  # a block carried past the summary is carried no more

    def _carried_extra(self) -> list[str]:
        """The carried blocks besides the pinned ones: the follow-up prompts of the
        running turn and the latest plan (see ``_Carried``)."""
        extra = list(self._followups)
        if self._plan_id is not None:
            extra.append(self._plan_id)
        return extra

    def _track_carry(self, b: Block) -> None:
        if b.type == TURN_HEADER:
            self._followups = {}
            self._turn_has_calls = False
        elif b.type == REACT_PLAN:
            self._plan_id = b.id
        elif block_type(b.type).render == "tool_call":
            self._turn_has_calls = True
        elif b.type == USER_PROMPT and self._turn_has_calls:
            self._followups[b.id] = None

    @property
    def carried_ids(self) -> frozenset[str]:
        """Blocks kept visible right after the latest summary: the pinned ones, the newest
        plan, and prompts that arrived while the running turn had tool calls."""
        return frozenset(self._carried)

    def _check_pin_fits(self, block: Block) -> None:
        budget = self.policy.budget
        if budget is None or not self.policy.enabled:
            return
        pinned = sum(self._memo.block(self._by_id[i]) for i in self._pinned)
        need = pinned + self._stream.cost(block) + self._state.system_tokens
        if need > budget:
            raise PinnedOverBudgetError(
                f"pinned blocks would need {need} tokens (with the last system prompt) but "
                f"the budget is {budget}; unpin something or raise max_tokens",
                budget=budget,
                required=need,
                conversation_id=self.conversation_id,
            )

    # -- hiding and pinning ----------------------------------------------------------

    def hide(self, paths: Iterable[str], replacement_text: str | None = None) -> int:
        """Hide every block at ``paths``; each renders as ``replacement_text`` once per
        path (omitted without one). Returns how many blocks changed."""
        return self._set_hidden(paths, True, replacement_text)

    def unhide(self, paths: Iterable[str]) -> int:
        """Show the blocks at ``paths`` again, as they were appended."""
        return self._set_hidden(paths, False, None)

    def _set_hidden(self, paths: Iterable[str], hidden: bool, replacement: str | None) -> int:
        if replacement is not None and not isinstance(replacement, str):
            raise InvalidBlockError(
                f"replacement_text must be a str or None, got {type(replacement).__name__}"
            )
        replacement = None if replacement is None else clean_text(replacement)
        wanted = self._known_paths(paths)
        changed = 0
        for i, b in enumerate(self._blocks):
            if b.path in wanted and b.type != CONV_RANGE_SUMMARY:
                new = msgspec.structs.replace(b, hidden=hidden, replacement_text=replacement)
                if new != b:
                    self._blocks[i] = new
                    self._by_id[b.id] = new
                    changed += 1
        if changed:
            self._bump_structure()
        return changed

    def pin(self, paths: Iterable[str]) -> None:
        """Pin the blocks at ``paths`` (kept visible after every compaction)."""
        wanted = self._known_paths(paths)
        for b in self._blocks:
            if b.path in wanted and b.id not in self._pinned and b.type != CONV_RANGE_SUMMARY:
                self._check_pin_fits(b)
                self._pinned[b.id] = None
        self._bump_structure()

    def unpin(self, paths: Iterable[str]) -> None:
        """Unpin the blocks at ``paths``; they may be summarized by a later compaction."""
        wanted = self._known_paths(paths)
        for b in self._blocks:
            if b.path in wanted:
                self._pinned.pop(b.id, None)
        self._bump_structure()

    def resolve_path(self, path: str) -> str:
        """``path`` with the alias ``plan.latest`` replaced by the newest plan's path."""
        if path == PLAN_LATEST:
            plan = self._by_id.get(self._plan_id) if self._plan_id else None
            if plan is None:
                raise UnknownPathError(
                    "no react.plan block in memory for the alias 'plan.latest'",
                    conversation_id=self.conversation_id,
                    path=path,
                )
            return plan.path
        return path

    def _known_paths(self, paths: Iterable[str]) -> set[str]:
        wanted = {self.resolve_path(p) for p in check_paths(paths)}
        missing = wanted - {b.path for b in self._blocks}
        if missing:
            first = sorted(missing)[0]
            raise UnknownPathError(
                f"no block at path {first!r} in memory",
                conversation_id=self.conversation_id,
                path=first,
            )
        return wanted

    def _bump_structure(self) -> None:
        self._state = msgspec.structs.replace(
            self._state, structure_version=self._state.structure_version + 1
        )

    # -- snapshots ---------------------------------------------------------------------

    def snapshot(self) -> TimelineSnapshot:
        """Everything in memory, as plain data (seed 002 ``CreateSnapshot``)."""
        state = msgspec.structs.replace(self._state, pinned=list(self._pinned))
        return TimelineSnapshot(self.conversation_id, list(self._blocks), state)

    def restore(self, snapshot: TimelineSnapshot) -> None:
        """Replace the in-memory timeline with ``snapshot`` (seed 002 ``RestoreSnapshot``).

        Blocks of the snapshot count as new for the next persist; the store skips the ones
        it already holds unchanged. The snapshot is checked like an append (field types,
        unique ids, no orphan tool results, no forged summaries): on error the timeline is
        unchanged.
        """
        snapshot = check_snapshot(snapshot, self.conversation_id)
        state = msgspec.structs.replace(
            snapshot.state,
            block_seq=max(snapshot.state.block_seq, self._state.block_seq),
            turn_seq=max(snapshot.state.turn_seq, self._state.turn_seq),
            structure_version=max(snapshot.state.structure_version, self._state.structure_version),
        )  # counters never go back: an id is never reused for a different block
        self._load_blocks(snapshot.blocks, state)
        self._new_ids = [b.id for b in snapshot.blocks]
        self._bump_structure()

    def clear(self) -> None:
        """Drop every block from memory (seed 002 ``Clear``); the counters go on, so ids
        stay unique, and the store keeps the turn log."""
        state = msgspec.structs.replace(
            self._state, current_turn_id="", pinned=[], usage=None, compacted_at_seq=-1
        )
        self._load_blocks([], state)
        self._new_ids = []
        self._bump_structure()

    def _load_blocks(self, blocks: Sequence[Block], state: TimelineState) -> None:
        self._blocks = list(blocks)
        self._by_id = {b.id: b for b in blocks}
        self._calls = {
            b.call_id for b in blocks if block_type(b.type).render == "tool_call" and b.call_id
        }
        self._pinned = dict.fromkeys(i for i in state.pinned if i in self._by_id)
        self._summary_index = latest_summary_index(self._blocks)
        self._summary_count = sum(1 for b in blocks if b.type == CONV_RANGE_SUMMARY)
        self._state = msgspec.structs.replace(state, pinned=[])
        self._memo.forget(self._by_id.__contains__)
        self._stream.version = -1
        self._plan_id = None
        self._followups = {}
        self._turn_has_calls = False
        current = self._state.current_turn_id
        for b in blocks:
            if b.type == REACT_PLAN:
                self._plan_id = b.id
            elif b.turn_id == current:
                self._track_carry(b)
        header = any(b.type == TURN_HEADER and b.turn_id == current for b in blocks)
        if current and not header:
            # a persisted window whose turn start was evicted: the prompts of the running
            # turn before the summary are there only because they were carried follow-ups
            for b in blocks[: max(self._summary_index, 0)]:
                if b.type == USER_PROMPT and b.turn_id == current and b.id not in self._pinned:
                    self._followups[b.id] = None

    # -- usage calibration -----------------------------------------------------------

    def record_usage(self, *, prompt_tokens: int) -> None:
        """Calibrate with the provider's reported prompt tokens for the latest render:
        the next estimate is that figure plus our estimate of what changed since."""
        check_count(prompt_tokens, "prompt_tokens")
        if self._last_raw_estimate is None:
            return
        raw = self._last_raw_estimate()
        self._state = msgspec.structs.replace(
            self._state,
            usage=UsageRecord(prompt_tokens, raw, self._state.structure_version),
        )

    # -- rendering, compaction, persistence (implemented in their modules) -------------

    def render(
        self,
        system: str = "",
        *,
        force_sanitize: bool = False,
        tail: Sequence[Block] = (),
    ) -> RenderedContext:
        """The prompt for the next model call (DESIGN §4): compacts first when the estimate
        is over the trigger or ``force_sanitize`` is set (the retry after the provider said
        the prompt was too long), then slices, hides, truncates and places checkpoints."""
        system, tail = check_render_args(system, tail, force_sanitize)
        return _render.render(self, system, force=force_sanitize, tail=tail)

    async def arender(
        self,
        system: str = "",
        *,
        force_sanitize: bool = False,
        tail: Sequence[Block] = (),
    ) -> RenderedContext:
        """:meth:`render` for async summarizers (awaited, with the policy's timeout)."""
        system, tail = check_render_args(system, tail, force_sanitize)
        return await _render.arender(self, system, force=force_sanitize, tail=tail)

    def compact(
        self, system: str = "", *, force: bool = True, keep_recent_tokens: int | None = None
    ) -> CompactionStats | None:
        """Manual compaction (seed 004's ``/compact``); None when there is nothing to cut.

        ``force=True`` compacts even under the trigger; ``keep_recent_tokens`` overrides
        how much recent history stays verbatim."""
        system, _ = check_render_args(system, (), force)
        check_count(keep_recent_tokens, "keep_recent_tokens", optional=True)
        return _render.compact(self, system, force=force, keep_recent_tokens=keep_recent_tokens)

    async def acompact(
        self, system: str = "", *, force: bool = True, keep_recent_tokens: int | None = None
    ) -> CompactionStats | None:
        """:meth:`compact` for async summarizers (awaited, with the policy's timeout)."""
        system, _ = check_render_args(system, (), force)
        check_count(keep_recent_tokens, "keep_recent_tokens", optional=True)
        return await _render.acompact(
            self, system, force=force, keep_recent_tokens=keep_recent_tokens
        )

    def estimate(self, system: str = "", tail: Sequence[Block] = ()) -> int:
        """Estimated prompt tokens if rendered now (calibrated by :meth:`record_usage`)."""
        system, tail = check_render_args(system, tail)
        return _render.estimate(self, system, tail)

    def persist(self, store: IndexStore) -> int:
        """Commit to ``store`` (see :mod:`timeline.model.persistence`); returns the new version.
        On success the evicted blocks (before the latest summary, unpinned) leave memory."""
        from timeline.core.persist import persist

        return persist(self, store)

    @classmethod
    def load(cls, store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
        """The timeline persisted under ``conversation_id``; takes ``Timeline()``'s keywords
        and renders exactly as the persisted one did."""
        from timeline.core.persist import load

        return load(cls, store, conversation_id, **kwargs)

    async def apersist(self, store: IndexStore) -> int:
        """:meth:`persist` without blocking the event loop (the store's async API when it
        has one, else its sync one in a worker thread). Do not change the timeline while
        it is pending: if it changes anyway, nothing is lost, eviction just waits."""
        from timeline.core.apersist import apersist

        return await apersist(self, store)

    @classmethod
    async def aload(cls, store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
        """:meth:`load` without blocking the event loop."""
        from timeline.core.apersist import aload

        return await aload(cls, store, conversation_id, **kwargs)


class _Carried(Set[str]):
    """A live view of :attr:`Timeline.carried_ids` (the render stream holds it)."""

    def __init__(self, tl: Timeline) -> None:
        self._tl = tl

    def _extra(self) -> list[str]:
        return self._tl._carried_extra()

    def __contains__(self, item: object) -> bool:
        tl = self._tl
        return item in tl._pinned or item == tl._plan_id or item in tl._followups

    def __iter__(self) -> Iterator[str]:
        yield from self._tl._pinned
        yield from (i for i in self._extra() if i not in self._tl._pinned)

    def __len__(self) -> int:
        return sum(1 for _ in self)
