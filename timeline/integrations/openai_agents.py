"""OpenAI Agents SDK: ``TimelineSession`` (the ``Session`` protocol) and its
``call_model_input_filter``.

::

    session = TimelineSession("user-42", store="sqlite:///agent.db", policy=policy)
    result = await Runner.run(agent, "hi", session=session,
                              run_config=RunConfig(call_model_input_filter=session.input_filter))

A drop-in for ``SQLiteSession``: ``get_items()`` gives the items back as they were added
(ids, ``status``, content form), except where compaction replaced older ones with a
summary, which then comes first; ``limit`` and ``session_settings.limit`` count items.
Every operation holds a lock of the (store, session id) shared by all threads, event
loops and session objects of the process, starts from the store's latest version
(another instance's writes are seen) and, when another process committed first,
reloads and applies itself again, so no item is lost.

``Runner.run`` reads the session once per run, so a long tool loop inside one run would
grow past the budget: ``session.input_filter`` bounds every model call of the run too
(the history as the session holds it, compacted when due, plus the run's items not
stored yet).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from timeline._compaction import CompactionPolicy
from timeline._core import Timeline
from timeline._model import (
    CONV_RANGE_SUMMARY,
    REACT_TOOL_CALL,
    TURN_HEADER,
    Block,
    ConflictError,
    IndexStore,
    InvalidBlockError,
    ToolSpec,
    call_names,
    name_home,
)
from timeline._render import RenderedContext
from timeline.integrations import missing_extra
from timeline.integrations._openai_items import (
    ITEM,
    PART,
    Item,
    as_items,
    counting_blocks,
    item_blocks,
    model_input,
    rendered_items,
    starts_turn,
    stored_items,
    unsaved_tail,
)
from timeline.integrations._threads import TimelineCache, open_store, store_key
from timeline.integrations._tools import host_tool_specs

try:
    from agents.memory.session import _CompactionSnapshot
    from agents.memory.session_settings import (
        SessionSettings,
        coerce_session_settings,
        resolve_session_limit,
    )
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("openai-agents", "openai-agents") from exc

__all__ = ["TimelineSession"]


def _mirror(tl: Timeline, items: Sequence[Item]) -> None:
    """Append each item's blocks, a user message opening a turn."""
    calls = {n for b in tl.blocks if b.type == REACT_TOOL_CALL for n in call_names(b)}
    for item in items:
        if starts_turn(item) or not tl.current_turn_id:
            tl.begin_turn()
        blocks = item_blocks(item, calls)
        try:
            stored = tl.extend(blocks)
        except InvalidBlockError:  # an item the timeline cannot hold: kept as it is, opaque
            stored = tl.extend(item_blocks(item, calls, opaque=True))
        calls.update(n for b in stored if b.type == REACT_TOOL_CALL for n in call_names(b))


def _last_item(blocks: list[Block]) -> tuple[int, Block] | None:
    """Where the newest item (or summary) starts in ``blocks``, and its head block."""
    for i in range(len(blocks) - 1, -1, -1):
        b = blocks[i]
        if b.type == TURN_HEADER or b.meta.get(PART):
            continue
        return i, b
    return None


def _pop(tl: Timeline) -> Item | None:
    """Remove the newest item (or the summary, when nothing follows it) from the live
    history of ``tl``; the item as stored, or as rendered for a summary."""
    blocks = list(tl.blocks)
    found = _last_item(blocks)
    if found is None:
        return None
    at, head = found
    removed = blocks[at:]
    del blocks[at:]
    while blocks and blocks[-1].type == TURN_HEADER:
        blocks.pop()
    tl.restore(msgspec.structs.replace(tl.snapshot(), blocks=blocks))
    item = head.meta.get(ITEM)
    if isinstance(item, dict) and head.type != CONV_RANGE_SUMMARY:
        return item
    given = [b for b in removed if b.type != TURN_HEADER]
    popped = rendered_items(given)
    if head.type == REACT_TOOL_CALL:  # not the synthetic output the payload adds
        popped = [i for i in popped if i.get("type") == "function_call"]
    return popped[-1] if popped else None


def _drop_leading(tl: Timeline, expired: Callable[[Item], bool]) -> None:
    """Remove the oldest stored items while ``expired`` says so (the first one it keeps,
    or a summary, stops it)."""
    blocks = list(tl.blocks)
    cut = 0
    for i, block in enumerate(blocks):
        if block.type == TURN_HEADER or block.meta.get(PART):
            continue
        item = block.meta.get(ITEM)
        if block.type == CONV_RANGE_SUMMARY or not isinstance(item, dict) or not expired(item):
            cut = i
            break
    else:
        cut = len(blocks)
    while 0 < cut < len(blocks) and blocks[cut - 1].type == TURN_HEADER:
        cut -= 1  # the kept item's turn header stays with it
    if cut:
        tl.restore(msgspec.structs.replace(tl.snapshot(), blocks=blocks[cut:]))


class TimelineSession:
    """A ``Session`` backed by a persisted timeline (see the module doc).

    ``store`` is an index store or its URL; ``policy`` the compaction policy;
    ``session_settings`` as for ``SQLiteSession`` (``limit``); other keywords go to
    :class:`Timeline`. ``system`` is counted against the budget in ``get_items`` (the
    filter uses the agent's instructions).
    """

    def __init__(
        self,
        session_id: str,
        store: IndexStore | str,
        policy: CompactionPolicy | None = None,
        *,
        system: str = "",
        session_settings: SessionSettings | dict[str, Any] | None = None,
        **timeline_kwargs: Any,
    ) -> None:
        self.session_id = session_id
        self._owns_store = isinstance(store, str)
        self.store = open_store(store)
        self.policy = policy if policy is not None else CompactionPolicy()
        self.system = system
        self.session_settings: SessionSettings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.timelines = TimelineCache(
            self.store, self.policy, timeline_kwargs, key=store_key(store)
        )
        self._lock = self.timelines.lock(session_id)

    @property
    def timeline(self) -> Timeline:
        """The session's timeline as this object holds it (loaded on first use)."""
        return self.timelines.get(self.session_id)

    async def _items(
        self,
        tl: Timeline,
        system: str,
        tail: Sequence[Block] = (),
        tools: tuple[ToolSpec, ...] = (),
        *,
        exact: bool = True,
    ) -> list[Item]:
        """The history of ``tl`` as items, rendered (compacted when due) with ``system``,
        ``tail`` and ``tools``: each item as it was added (``exact``), or as the render
        fits it into the budget (for a model call). A compaction is persisted at once;
        when another writer committed first, theirs wins and the next call starts from
        it."""
        view = await tl.arender(system, tools=tools, tail=tail)
        if view.compaction is not None:
            try:
                await tl.apersist(self.store)
            except ConflictError:
                self.timelines.forget(self.session_id)
        return stored_items(view, {b.id: b for b in tl.blocks}, exact=exact)

    # -- the Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Item]:
        """The history, oldest first: items as they were added, a summary in place of
        those compaction replaced. ``limit`` (else ``session_settings.limit``): the
        latest that many items; 0 gives none."""
        session_limit = resolve_session_limit(limit, self.session_settings)
        async with self._lock.ahold():
            tl = await self.timelines.afresh(self.session_id)
            items = await self._items(tl, self.system)
        if session_limit is None or session_limit < 0:
            return items
        return items[-session_limit:] if session_limit > 0 else []

    async def add_items(self, items: list[Any]) -> None:
        """Append the items (each one, duplicates too) and persist. An item the session
        cannot store raises :class:`~timeline.integrations.InvalidItemError` (also a
        ``TypeError``) and none of them is written."""
        new = as_items(items)
        if not new:
            return

        async def change(tl: Timeline) -> None:
            _mirror(tl, new)

        async with self._lock.ahold():
            await self.timelines.acommit(self.session_id, change)

    async def pop_item(self) -> Item | None:
        """Remove the most recent item (a summary when nothing follows it) from the live
        history and return it; None when the history is empty. The store's turn log
        keeps it: nothing is lost."""

        async def change(tl: Timeline) -> Item | None:
            return _pop(tl)

        async with self._lock.ahold():
            return await self.timelines.acommit(self.session_id, change)

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[Item], bool] | None = None
    ) -> _CompactionSnapshot:
        """The SDK's compaction-snapshot protocol, as ``SQLiteSession`` offers it to
        ``OpenAIResponsesCompactionSession``: the newest ``limit`` items as ``get_items``
        gives them, whether they are all of them, and an atomic replacement of a suffix
        of them (the older history stays; ``prune_prefix`` drops expired leading items)."""
        async with self._lock.ahold():
            tl = await self.timelines.afresh(self.session_id)
            every = await self._items(tl, self.system)
        items = every[-limit:] if limit > 0 else []

        async def replace_suffix(start: int, output: list[Any]) -> bool:
            expected = items[start:]
            new = as_items(output, "compacted output")
            if not expected:
                return False

            async def change(tl: Timeline) -> bool:
                current = await self._items(tl, self.system)
                if current[-len(expected) :] != expected:
                    return False  # another writer moved the history: nothing replaced
                for _ in expected:
                    _pop(tl)
                if prune_prefix is not None:
                    _drop_leading(tl, prune_prefix)
                _mirror(tl, new)
                return True

            async with self._lock.ahold():
                return await self.timelines.acommit(self.session_id, change)

        return _CompactionSnapshot(items, len(every) <= limit, replace_suffix)  # type: ignore[arg-type]

    async def clear_session(self) -> None:
        """Forget the live history (the store keeps the turn log, still searchable)."""

        async def change(tl: Timeline) -> None:
            tl.clear()

        async with self._lock.ahold():
            await self.timelines.acommit(self.session_id, change)

    def close(self) -> None:
        """Close the store when this session opened it from a URL."""
        close = getattr(self.store, "close", None)
        if self._owns_store and callable(close):
            close()

    # -- bounding the model calls inside one run -----------------------------------------

    async def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig(call_model_input_filter=session.input_filter)``: the model gets the
        session's history as ``get_items`` gives it (compacted when the run's items push
        it over the trigger) plus the run's items the SDK has not stored yet, counted
        against the budget with the agent's instructions and function tools."""
        items = as_items(data.model_data.input, "model input")
        instructions = data.model_data.instructions or ""
        tools = agent_tools(data.agent)
        async with self._lock.ahold():
            tl = await self.timelines.afresh(self.session_id)
            held = {b.id: b for b in tl.blocks}
            stored = stored_items(_plain_view(tl), held)
            tail = unsaved_tail(items, stored)
            history = await self._items(tl, instructions, counting_blocks(tail), tools, exact=False)
        return ModelInputData(
            input=model_input([*history, *tail]),  # type: ignore[arg-type]
            instructions=instructions or None,
        )


def agent_tools(agent: Any) -> tuple[ToolSpec, ...]:
    """The definitions of the agent's function tools (hosted tools have none to count)."""
    return host_tool_specs(
        {
            "name": t.name,
            "description": getattr(t, "description", "") or "",
            "parameters": t.params_json_schema,
        }
        for t in getattr(agent, "tools", None) or ()
        if isinstance(getattr(t, "params_json_schema", None), dict)
    )


def _plain_view(tl: Timeline) -> RenderedContext:
    """The live history without rendering it (what is stored, in order)."""
    blocks = tuple(tl.blocks)
    return RenderedContext("", blocks, (), lambda: 0, None, len(blocks))


name_home(__name__, __all__, globals())
