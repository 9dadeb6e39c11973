"""pydantic-ai: ``TimelineHistory``, a history processor backed by a persisted timeline.

::

    history = TimelineHistory("conv-1", store="sqlite:///agent.db", policy=policy)
    agent = Agent(model, capabilities=[ProcessHistory(history)])

Before every model request pydantic-ai hands the processor the run's messages; the new
ones are mirrored into the timeline and the request gets the timeline's history:
**the messages themselves** (the very objects it was given, or as they were stored,
with ``run_id``, timestamps, usage and every other field), except where compaction
replaced older ones with a summary. So under the budget the processor changes nothing,
and ``result.new_messages()`` is the whole run. pydantic-ai writes the output back into
the run; what the processor made itself (a summary) carries ``metadata["timeline"]`` and
is recognised when it comes back, so summaries never nest. The timeline is persisted
after each processing; ``await history.aflush(messages)`` also records a run's final
answer (which no later request of that run sees).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import msgspec

from timeline._compaction import CompactionPolicy
from timeline._core import Timeline
from timeline._model import (
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    TURN_HEADER,
    Block,
    IndexStore,
    TimelineSnapshot,
    ToolSpec,
    name_home,
)
from timeline._model import constructors as B
from timeline._render import RenderedContext
from timeline.integrations import IntegrationError, missing_extra
from timeline.integrations._pydantic_ai_messages import (
    FP,
    MARK,
    PART,
    fingerprint,
    from_pydantic_ai,
    message_blocks,
    render_messages,
    stored_message,
    to_pydantic_ai,
    with_system,
)
from timeline.integrations._threads import TimelineCache, open_store, store_key
from timeline.integrations._tools import host_tool_specs

try:
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        SystemPromptPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import RunContext
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc

__all__ = ["MARK", "TimelineHistory", "from_pydantic_ai", "to_pydantic_ai"]


class _CountingTools(ProcessHistory[Any]):
    """``ProcessHistory`` of a :class:`TimelineHistory` that also hands it the request's
    tool definitions (function and output tools)."""

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = request_context.model_request_parameters
        tools = host_tool_specs(
            {
                "name": d.name,
                "description": d.description or "",
                "parameters": d.parameters_json_schema,
            }
            for d in [*params.function_tools, *params.output_tools]
        )
        history = cast("TimelineHistory", self.processor)
        messages = await history.arun(list(request_context.messages), tools)
        request_context.messages = messages.copy()
        ctx.messages[:] = messages
        return request_context


def _new_messages(tl: Timeline, messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The messages after the last one the timeline holds (by fingerprint), skipping the
    processor's own (marked) ones: what happened since the last processing. Equal
    messages after that point are all new."""
    known = {b.meta.get(FP) for b in tl.blocks}
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if not (m.metadata and MARK in m.metadata) and fingerprint(m) in known:
            start = i + 1
            break
    return [m for m in messages[start:] if not (m.metadata and MARK in m.metadata)]


def _starts_turn(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(
        isinstance(p, UserPromptPart) for p in message.parts
    )


class TimelineHistory:
    """A pydantic-ai history processor over one persisted conversation (module doc).

    ``store`` is an index store or its URL; ``policy`` the compaction policy; other
    keywords go to :class:`Timeline`. Use it as ``ProcessHistory(history)``.
    """

    def __init__(
        self,
        conversation_id: str,
        store: IndexStore | str,
        policy: CompactionPolicy | None = None,
        **timeline_kwargs: Any,
    ) -> None:
        self.conversation_id = conversation_id
        self.store = open_store(store)
        self.policy = policy if policy is not None else CompactionPolicy()
        self.timelines = TimelineCache(
            self.store, self.policy, timeline_kwargs, key=store_key(store)
        )
        self._lock = self.timelines.lock(conversation_id)
        self.system = ""

    @property
    def timeline(self) -> Timeline:
        """The conversation's timeline (loaded from the store on first use)."""
        return self.timelines.get(self.conversation_id)

    def seed_summary(self, text: str) -> None:
        """Start a new conversation from an existing summary: it renders first, as this
        library's own summaries do, and the next compaction extends it."""
        tl = self.timeline
        if tl.blocks or tl.version:
            raise IntegrationError(
                f"conversation {self.conversation_id!r} already has history; "
                "seed a summary only into a new one"
            )
        summary = msgspec.structs.replace(
            B.summary(text, seeded=True, covered_turn_ids=[], compacted_block_count=0),
            id="seed-summary",
            turn_id="t0",
            path="su:t0.conv.range.summary",
            ts="1970-01-01T00:00:00.000Z",
        )
        tl.restore(TimelineSnapshot(self.conversation_id, [summary], tl.snapshot().state))

    def _mirror(self, tl: Timeline, messages: Sequence[ModelMessage]) -> int:
        new = _new_messages(tl, messages)
        for message in new:
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if isinstance(part, SystemPromptPart):
                        self.system = part.content
            if _starts_turn(message) or not tl.current_turn_id:
                tl.begin_turn()
            tl.extend(message_blocks(message))
        return len(new)

    def mirror(self, messages: Sequence[ModelMessage]) -> int:
        """Append the messages the timeline does not hold yet (not persisted: the
        processor and :meth:`flush` persist); returns how many."""
        return self._mirror(self.timeline, messages)

    def _output(
        self, view: RenderedContext, incoming: Sequence[ModelMessage]
    ) -> list[ModelMessage]:
        """The view as messages: each mirrored message as given (the incoming object, or
        as stored), the rest (a summary, a truncated block) rendered."""
        held = {b.id: b for b in self.timeline.blocks}
        given = {fingerprint(m): m for m in incoming}
        groups: list[list[Block] | ModelMessage] = []  # rendered runs of blocks, messages
        whole = False  # the current message is given whole (its parts go with it)
        kept: list[Block] = []  # the blocks of the messages given whole
        for block in view.blocks[: view.stable_count]:
            if block.type == TURN_HEADER or (block.meta.get(PART) and whole):
                kept += [block] if whole else []
                continue
            stored = None
            if not block.meta.get(PART) and held.get(block.id) == block:
                stored = stored_message(block)
            whole = stored is not None
            if stored is not None:
                kept.append(block)
                groups.append(given.get(block.meta.get(FP, ""), stored))
            elif groups and isinstance(groups[-1], list):
                groups[-1].append(block)
            else:
                groups.append([block])
        calls = frozenset(b.call_id or "" for b in kept if b.type == REACT_TOOL_CALL)
        answered = frozenset(b.call_id or "" for b in kept if b.type == REACT_TOOL_RESULT)
        out: list[ModelMessage] = []
        for group in groups:
            if isinstance(group, list):
                out += render_messages(
                    group, self.conversation_id, calls=calls, answered=answered, lead=not out
                )
            else:
                out.append(group)
        with_system(out, view.system, self.conversation_id)
        return self._ending(out, incoming)

    @staticmethod
    def _ending(out: list[ModelMessage], incoming: Sequence[ModelMessage]) -> list[ModelMessage]:
        """The history must end with a request; a rendered last request gets the
        instructions of the last incoming one."""
        if not out or not isinstance(out[-1], ModelRequest):
            raise IntegrationError("the rendered history must end with a request (user side)")
        last_in = next((m for m in reversed(incoming) if isinstance(m, ModelRequest)), None)
        last = out[-1]
        if last_in is not None and last is not last_in and not last.instructions:
            out[-1] = ModelRequest(
                last.parts, instructions=last_in.instructions, metadata=last.metadata
            )
        return out

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The processor: mirror, render (compacting when needed), persist, return."""
        return await self.arun(messages)

    async def arun(
        self, messages: list[ModelMessage], tools: tuple[ToolSpec, ...] = ()
    ) -> list[ModelMessage]:
        """:meth:`__call__` with the request's ``tools`` counted against the budget."""

        async def change(tl: Timeline) -> RenderedContext:
            self._mirror(tl, messages)
            return await tl.arender(self.system, tools=tools)

        async with self._lock.ahold():
            view = await self.timelines.acommit(self.conversation_id, change)
            return self._output(view, messages)

    def capability(self) -> ProcessHistory[Any]:
        """``Agent(model, capabilities=[history.capability()])``: this processor, with the
        agent's tool definitions of each request counted against the budget (which
        ``ProcessHistory(history)`` does not show it)."""
        return _CountingTools(self)

    def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The sync processor, for ``ProcessHistory(history.process)``."""

        def change(tl: Timeline) -> RenderedContext:
            self._mirror(tl, messages)
            return tl.render(self.system)

        with self._lock.hold():
            view = self.timelines.commit(self.conversation_id, change)
            return self._output(view, messages)

    async def aflush(self, messages: Sequence[ModelMessage]) -> int:
        """Mirror and persist ``messages`` (a run's ``all_messages()``) without rendering,
        so the final answer is stored too; returns the store version."""

        async def change(tl: Timeline) -> int:
            self._mirror(tl, messages)
            return 0

        async with self._lock.ahold():
            await self.timelines.acommit(self.conversation_id, change)
            return self.timeline.version

    def flush(self, messages: Sequence[ModelMessage]) -> int:
        """:meth:`aflush` for sync code."""
        with self._lock.hold():
            self.timelines.commit(self.conversation_id, lambda tl: self._mirror(tl, messages))
            return self.timeline.version


name_home(__name__, __all__, globals())
