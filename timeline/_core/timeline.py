"""``Timeline``: the conversation as an ordered list of blocks, and what changes it.

The public face of one conversation. Its blocks and everything derived from them live in
one :class:`~timeline._state.ledger.Ledger`, which only this class holds; rendering,
compaction and persistence are handed the ledger (and this object as their read-only
settings) and change it through its methods. Appends are validated first: on any error
the timeline is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from timeline._compaction import (
    AsyncSummarizer,
    CompactionPolicy,
    Summarizer,
    policy_type,
    stored_policy,
)
from timeline._core import persist as _persist
from timeline._core import usage as _usage
from timeline._core.append import Batch
from timeline._core.compacting import Compacting
from timeline._core.hiding import (
    check_pin_fits,
    clean_replacement,
    known_paths,
    plan_path,
    set_hidden,
)
from timeline._core.usage import CacheBreakHook
from timeline._model import (
    CONV_RANGE_SUMMARY,
    Block,
    CacheBreak,
    IndexStore,
    InvalidBlockError,
    InvalidConversationIdError,
    NotFoundError,
    TimelineSnapshot,
    check_identifier,
    check_render_args,
    check_snapshot,
    tool_specs,
    turn_header,
)
from timeline._render import Clock, Hook, IdFactory, RenderedContext, pipeline
from timeline._state import Ledger
from timeline._tokens import BlockTokenMemo, TiktokenCounter, TokenCounter

__all__ = ["Clock", "IdFactory", "Timeline", "sequential_ids", "utc_now"]


def utc_now() -> datetime:
    return datetime.now(UTC)


def sequential_ids(kind: str, seq: int) -> str:
    """The default ids: ``b1, b2...`` for blocks, ``t1, t2...`` for turns. The counters are
    persisted with the window, so ids stay unique in the conversation."""
    return f"{kind[0]}{seq}"


@attrs.define(eq=False)
class Timeline(Compacting):
    """A conversation as a timeline of typed blocks: append, render, compact, persist."""

    conversation_id: str
    policy: CompactionPolicy = attrs.field(
        factory=CompactionPolicy, kw_only=True, validator=policy_type
    )
    summarizer: Summarizer | AsyncSummarizer | None = attrs.field(default=None, kw_only=True)
    token_counter: TokenCounter | None = attrs.field(default=None, kw_only=True)
    on_before_compaction: Hook | None = attrs.field(default=None, kw_only=True)
    on_after_compaction: Hook | None = attrs.field(default=None, kw_only=True)
    on_cache_break: CacheBreakHook | None = attrs.field(default=None, kw_only=True)
    """Called with each :class:`CacheBreak` that :meth:`record_usage` finds."""
    clock: Clock = attrs.field(default=utc_now, kw_only=True)
    id_factory: IdFactory = attrs.field(default=sequential_ids, kw_only=True)
    model: str | None = attrs.field(default=None, kw_only=True)
    """A model name: when the policy knows no budget, the registry's context window for
    it gives one (``context_window_for``)."""
    incremental: bool = attrs.field(default=True, kw_only=True)
    """False: the reference engine. Every render counts and streams from scratch (no
    memo, no upper bounds, no splice); the same decisions and output, much slower. The
    differential tests run both side by side."""
    _ledger: Ledger = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.conversation_id, str) or not self.conversation_id:
            raise InvalidConversationIdError("conversation_id must be a non-empty string")
        check_identifier(self.conversation_id, "conversation_id", InvalidConversationIdError)
        if self.model is not None and not isinstance(self.model, str):
            raise InvalidBlockError(f"model must be a str, got {type(self.model).__name__}")
        if self.model is not None and self.policy.budget is None and self.policy.model is None:
            self.policy = attrs.evolve(self.policy, model=self.model)
        counter = self.token_counter if self.token_counter is not None else TiktokenCounter()
        memo = BlockTokenMemo(counter, lazy_bounds=self.incremental)
        self._ledger = Ledger(memo, incremental=self.incremental)

    # -- reading -------------------------------------------------------------------

    @property
    def blocks(self) -> tuple[Block, ...]:
        """Every block held in memory, in order (summaries in place)."""
        return tuple(self._ledger.blocks)

    @property
    def current_turn_id(self) -> str:
        return self._ledger.state.current_turn_id

    @property
    def version(self) -> int:
        """The store version this timeline was last persisted at or loaded from."""
        return self._ledger.version

    @property
    def pinned_ids(self) -> tuple[str, ...]:
        return tuple(self._ledger.pinned)

    @property
    def cleared_ids(self) -> frozenset[str]:
        """Blocks the clearing tier shows in their cleared form (whole in the timeline)."""
        return frozenset(self._ledger.state.cleared)

    @property
    def carried_ids(self) -> frozenset[str]:
        """Blocks kept visible right after the latest summary: the pinned ones, the newest
        plan, and prompts that arrived while the running turn had tool calls."""
        return frozenset(self._ledger.carried)

    @property
    def token_memo(self) -> BlockTokenMemo:
        """The per-block token memo (exposes ``calls`` and ``chars_tokenized``)."""
        return self._ledger.memo

    def block_tokens(self, block: Block) -> int:
        """Exact prompt tokens of ``block`` as rendered (hidden: its replacement)."""
        return self._ledger.cost(block)

    def get(self, block_id: str) -> Block:
        if not isinstance(block_id, str):
            raise InvalidBlockError(f"block_id must be a str, got {type(block_id).__name__}")
        block = self._ledger.get(block_id)
        if block is None:
            raise NotFoundError(
                f"no block {block_id!r} in memory",
                conversation_id=self.conversation_id,
                block_id=block_id,
            )
        return block

    # -- appending -----------------------------------------------------------------

    def begin_turn(self, **meta: Any) -> str:
        """Start a turn: appends a ``turn.header`` and returns the new turn id."""
        return self.append(turn_header(**meta)).turn_id

    def _batch(self) -> Batch:
        ledger = self._ledger
        return Batch(ledger, self.conversation_id, self.clock, self.id_factory, ledger.state)

    def append(self, block: Block, *, pin: bool = False) -> Block:
        """Validate, fill ``id``/``ts``/``turn_id``/``path``, append; returns the stored block.

        ``pin=True`` keeps the block rendered after every compaction. On any error the
        timeline is unchanged.
        """
        batch = self._batch()
        stored = batch.add(block)
        if pin:
            check_pin_fits(self._ledger, self.policy, self.conversation_id, stored)
        offloaded = {} if pin else batch.offloaded(self.policy)
        self._ledger.append(batch.stored, batch.state, offloaded)
        if pin:
            self._ledger.pin([stored.id])
        return stored

    def extend(self, blocks: Iterable[Block]) -> list[Block]:
        """Append several blocks atomically: all of them, or none on error."""
        if isinstance(blocks, Block | str | bytes) or not isinstance(blocks, Iterable):
            raise InvalidBlockError(f"extend takes an iterable of blocks, not {blocks!r}")
        batch = self._batch()
        for block in blocks:
            batch.add(block)
        self._ledger.append(batch.stored, batch.state, batch.offloaded(self.policy))
        return list(batch.stored)

    # -- hiding and pinning ----------------------------------------------------------

    def hide(self, paths: Iterable[str], replacement_text: str | None = None) -> int:
        """Hide every block at ``paths``; each renders as ``replacement_text`` once per
        path (omitted without one). Returns how many blocks changed."""
        return self._set_hidden(paths, True, replacement_text)

    def unhide(self, paths: Iterable[str]) -> int:
        """Show the blocks at ``paths`` again, as they were appended (blocks the clearing
        tier cleared included)."""
        return self._set_hidden(paths, False, None)

    def _set_hidden(self, paths: Iterable[str], hidden: bool, replacement: str | None) -> int:
        wanted = self._known_paths(paths)
        return set_hidden(self._ledger, wanted, hidden, clean_replacement(replacement))

    def pin(self, paths: Iterable[str]) -> None:
        """Pin the blocks at ``paths`` (kept visible after every compaction)."""
        wanted = self._known_paths(paths)
        ledger = self._ledger
        pinned: list[Block] = []
        for b in ledger.blocks:
            if b.path in wanted and b.id not in ledger.pinned and b.type != CONV_RANGE_SUMMARY:
                check_pin_fits(ledger, self.policy, self.conversation_id, b, pinned)
                pinned.append(b)
        ledger.pin([b.id for b in pinned])

    def unpin(self, paths: Iterable[str]) -> None:
        """Unpin the blocks at ``paths``; they may be summarized by a later compaction."""
        wanted = self._known_paths(paths)
        self._ledger.unpin([b.id for b in self._ledger.blocks if b.path in wanted])

    def resolve_path(self, path: str) -> str:
        """``path`` with the alias ``plan.latest`` replaced by the newest plan's path."""
        return plan_path(self._ledger, self.conversation_id, path)

    def _known_paths(self, paths: Iterable[str]) -> set[str]:
        return known_paths(self._ledger, self.conversation_id, paths)

    # -- snapshots ---------------------------------------------------------------------

    def snapshot(self) -> TimelineSnapshot:
        """Everything in memory, as plain data, for :meth:`restore` or a checkpoint."""
        return self._ledger.snapshot(self.conversation_id)

    def restore(self, snapshot: TimelineSnapshot) -> None:
        """Replace the in-memory timeline with ``snapshot``.

        Blocks of the snapshot count as new for the next persist; the store skips the ones
        it already holds unchanged. The snapshot is checked like an append (field types,
        unique ids, no orphan tool results, no forged summaries): on error the timeline is
        unchanged.
        """
        self._ledger.restored(check_snapshot(snapshot, self.conversation_id))

    def clear(self) -> None:
        """Drop every block from memory; the counters go on, so ids
        stay unique, and the store keeps the turn log."""
        self._ledger.cleared()

    def drain(self) -> list[Block]:
        """Take every block out of memory and return them, for a caller that stores them
        itself as they come: building a long conversation (an import) into a store's
        ``commit_stream`` holds one message's blocks at a time, not the conversation.
        Unlike :meth:`clear`, appends go on in the same turn, and a tool result may answer
        a call drained before it. Only for a timeline never persisted, loaded or
        compacted, with nothing pinned or cleared (TimelineError otherwise; nothing
        changes)."""
        return self._ledger.hand_over(self.conversation_id)

    # -- usage calibration -----------------------------------------------------------

    def record_usage(
        self,
        usage: Any = None,
        *,
        prompt_tokens: int | None = None,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> CacheBreak | None:
        """The provider's usage for the latest render (the reply's usage object, or the
        figures as keywords): the next estimate is its prompt tokens plus our estimate
        of what changed since, and its cache figures are checked against what the
        previous request left cached. Returns the cache break found (also reported to
        ``on_cache_break`` and kept for ``inspect``), or None."""
        figures = _usage.usage_of(usage, prompt_tokens, cache_read_tokens, cache_write_tokens)
        hook, model = self.on_cache_break, self.model
        return _usage.record(self._ledger, self, figures, model=model, hook=hook)

    # -- rendering, compaction, persistence (implemented in their modules) -------------

    def render(
        self,
        system: str = "",
        *,
        tools: Sequence[Any] = (),
        force_sanitize: bool = False,
        tail: Sequence[Block] = (),
    ) -> RenderedContext:
        """The prompt for the next model call: compacts first when the estimate
        is over the trigger or ``force_sanitize`` is set (the retry after the provider said
        the prompt was too long), then slices, hides, truncates and places checkpoints.
        ``tools`` (definitions or :class:`~timeline.ToolSpec`) count against the budget
        and every payload method sends them."""
        system, tail = check_render_args(system, tail, force_sanitize)
        specs = tool_specs(tools)
        return pipeline.render(
            self._ledger, self, system, force=force_sanitize, tail=tail, tools=specs
        )

    async def arender(
        self,
        system: str = "",
        *,
        tools: Sequence[Any] = (),
        force_sanitize: bool = False,
        tail: Sequence[Block] = (),
    ) -> RenderedContext:
        """:meth:`render` for async summarizers (awaited, with the policy's timeout)."""
        system, tail = check_render_args(system, tail, force_sanitize)
        specs = tool_specs(tools)
        return await pipeline.arender(
            self._ledger, self, system, force=force_sanitize, tail=tail, tools=specs
        )

    def estimate(
        self, system: str = "", tail: Sequence[Block] = (), *, tools: Sequence[Any] = ()
    ) -> int:
        """Estimated prompt tokens if rendered now (calibrated by :meth:`record_usage`)."""
        system, tail = check_render_args(system, tail)
        return pipeline.estimate(self._ledger, system, tail, tool_specs(tools))

    def persist(self, store: IndexStore) -> int:
        """Commit to ``store`` (see :mod:`timeline._model.persistence`) with this timeline's
        policy; returns the new version. On success the evicted blocks (before the latest
        summary, unpinned) leave memory."""
        return _persist.persist(self._ledger, self.conversation_id, store, self.policy)

    @classmethod
    def load(cls, store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
        """The timeline persisted under ``conversation_id``; takes ``Timeline()``'s keywords
        and renders exactly as the persisted one did. Without ``policy=`` it compacts with
        the policy it was persisted with."""
        return cls._continued(
            conversation_id, _persist.fetch(store, conversation_id), kwargs, store
        )

    @classmethod
    def load_or_create(cls, store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
        """The timeline persisted under ``conversation_id``, or a new empty one when the
        store has none (its first :meth:`persist` creates it): what a script that runs
        again and again wants, instead of a ``ConflictError`` on the second run."""
        return cls._continued(conversation_id, _persist.find(store, conversation_id), kwargs, store)

    @classmethod
    def _continued(
        cls,
        conversation_id: str,
        found: tuple[int, TimelineSnapshot] | None,
        kwargs: dict[str, Any],
        store: IndexStore,
    ) -> Timeline:
        """A timeline continuing the stored window ``found`` (None: a new one); without
        ``policy=`` (or with None) the policy stored with the window."""
        if found is not None and kwargs.get("policy") is None:
            kwargs = {**kwargs, "policy": stored_policy(found[1].state)}
        tl = cls(conversation_id, **kwargs)
        if found is not None:
            tl._ledger.loaded(*found, store)
        return tl

    async def apersist(self, store: IndexStore) -> int:
        """:meth:`persist` without blocking the event loop (the store's async API when it
        has one, else its sync one in a worker thread). Do not change the timeline while
        it is pending: if it changes anyway, nothing is lost, eviction just waits."""
        return await _persist.apersist(self._ledger, self.conversation_id, store, self.policy)

    @classmethod
    async def aload(cls, store: IndexStore, conversation_id: str, **kwargs: Any) -> Timeline:
        """:meth:`load` without blocking the event loop."""
        found = await _persist.afetch(store, conversation_id)
        return cls._continued(conversation_id, found, kwargs, store)

    @classmethod
    async def aload_or_create(
        cls, store: IndexStore, conversation_id: str, **kwargs: Any
    ) -> Timeline:
        """:meth:`load_or_create` without blocking the event loop."""
        found = await _persist.afind(store, conversation_id)
        return cls._continued(conversation_id, found, kwargs, store)
