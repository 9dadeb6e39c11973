"""pydantic-ai: ``TimelineHistory``, a history processor backed by a persisted timeline.

::

    history = TimelineHistory("conv-1", store="sqlite:///agent.db", policy=policy)
    agent = Agent(model, capabilities=[ProcessHistory(history)])

Before every model request pydantic-ai hands the processor the run's messages; the new
ones are mirrored into the timeline and the request gets the rendered, compacted context.
pydantic-ai writes that output back into the run, so every message it returns carries
``metadata["timeline"]`` and is recognised when it comes back: the timeline stays the
source of truth and a summary is never taken for a user prompt (summaries never nest).
The timeline is persisted after each processing; ``await history.aflush(messages)``
also records a run's final answer (which no later request of that run sees).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from timeline.compaction.policy import CompactionPolicy
from timeline.core.timeline import Timeline
from timeline.formats._plan import MISSING_RESULT_TEXT, Part, part_text, plan_messages
from timeline.integrations import IntegrationError, missing_extra
from timeline.integrations._threads import TimelineCache, open_store
from timeline.model import constructors as B
from timeline.model.block import Block
from timeline.model.errors import ConflictError
from timeline.model.persistence import IndexStore, TimelineSnapshot
from timeline.render.context import RenderedContext

try:
    from pydantic_ai.messages import (
        BinaryContent,
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        ModelResponsePart,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc

__all__ = ["MARK", "TimelineHistory", "from_pydantic_ai", "to_pydantic_ai"]

MARK = "timeline"
"""The ``metadata`` key on every message this module returns."""


def _fingerprint(message: ModelMessage) -> str:
    parts = [
        (type(p).__name__, repr(getattr(p, "content", getattr(p, "args", ""))))
        for p in message.parts
    ]
    raw = f"{message.kind}|{message.timestamp}|{parts}".encode()
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:16]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(content)


def _request_blocks(message: ModelRequest) -> list[Block]:
    out: list[Block] = []
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            if isinstance(part.content, str):
                out.append(B.user_prompt(part.content))
                continue
            texts = [c for c in part.content if isinstance(c, str)]
            out.append(B.user_prompt("\n".join(texts)))
            for k, item in enumerate(c for c in part.content if isinstance(c, BinaryContent)):
                out.append(
                    B.user_attachment(name=f"file-{k + 1}", mime=item.media_type, data=item.data)
                )
        elif isinstance(part, ToolReturnPart):
            error = getattr(part, "outcome", "success") not in ("success",)
            out.append(
                B.tool_result(
                    part.tool_call_id, _text(part.content), tool_id=part.tool_name, is_error=error
                )
            )
        elif isinstance(part, RetryPromptPart):
            if part.tool_name:
                out.append(
                    B.tool_result(
                        part.tool_call_id,
                        part.model_response(),
                        tool_id=part.tool_name,
                        is_error=True,
                    )
                )
            else:
                out.append(B.user_prompt(part.model_response()))
        # SystemPromptPart: the system prompt is rendered as the system, not a block
    return out


def _response_blocks(message: ModelResponse) -> list[Block]:
    out: list[Block] = []
    thinking: list[dict[str, Any]] = []
    texts: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ThinkingPart):
            thinking.append(
                {
                    "content": part.content,
                    "signature": part.signature,
                    "id": part.id,
                    "provider_name": part.provider_name,
                }
            )
        elif isinstance(part, ToolCallPart):
            if texts:
                out.append(B.assistant_completion("\n".join(texts)))
                texts = []
            out.append(B.tool_call(part.tool_name, part.args_as_dict(), call_id=part.tool_call_id))
    if texts or not out:
        out.append(B.assistant_completion("\n".join(texts)))
    if thinking:  # kept with the message so signed thinking goes back to the model
        out[0] = msgspec.structs.replace(out[0], meta={**out[0].meta, "pai_thinking": thinking})
    return out


def from_pydantic_ai(messages: Sequence[ModelMessage]) -> list[Block]:
    """Blocks for pydantic-ai messages (user prompts and files, tool calls and returns,
    retries as error results, text, thinking in ``meta["pai_thinking"]``). System prompt
    parts are left out: render them as the system."""
    out: list[Block] = []
    for m in messages:
        out += _request_blocks(m) if isinstance(m, ModelRequest) else _response_blocks(m)
    return out


def _tool_return(part: Part) -> ToolReturnPart:
    b = part.block
    text = MISSING_RESULT_TEXT if part.index < 0 else "\n".join(r.text for r in part.results)
    return ToolReturnPart(tool_name=b.tool_id or "", content=text, tool_call_id=b.call_id or "")


def to_pydantic_ai(view: RenderedContext, conversation_id: str = "") -> list[ModelMessage]:
    """pydantic-ai messages for a rendered view, ending with a ``ModelRequest``; each
    carries ``metadata["timeline"]`` naming its blocks. The system prompt opens the first
    request."""
    out: list[ModelMessage] = []
    for message in plan_messages(view.blocks):
        ids = [p.block.id for p in message.parts if p.index >= 0]
        meta = {MARK: {"conversation": conversation_id, "blocks": ids}}
        if message.role == "assistant":
            rparts: list[ModelResponsePart] = []
            for part in message.parts:
                b = part.block
                for t in b.meta.get("pai_thinking", ()):
                    rparts.append(ThinkingPart(**t))
                if part.kind == "tool_call":
                    args = json.loads(b.text) if b.text else {}
                    rparts.append(ToolCallPart(b.tool_id or "", args, tool_call_id=b.call_id or ""))
                else:
                    rparts.append(TextPart(part_text(b)))
            out.append(ModelResponse(rparts, metadata=meta))
            continue
        qparts: list[ModelRequestPart] = []
        for part in message.parts:
            if part.kind == "tool_result":
                qparts.append(_tool_return(part))
            elif part.kind in ("image", "document"):
                qparts.append(
                    UserPromptPart(
                        [BinaryContent(part.block.data or b"", media_type=part.block.mime)]
                    )
                )
            else:
                qparts.append(UserPromptPart(part_text(part.block)))
        out.append(ModelRequest(qparts, metadata=meta))
    if view.system:
        system = SystemPromptPart(view.system)
        if out and isinstance(out[0], ModelRequest):
            out[0] = ModelRequest([system, *out[0].parts], metadata=out[0].metadata)
        else:
            out.insert(
                0,
                ModelRequest(
                    [system], metadata={MARK: {"conversation": conversation_id, "blocks": []}}
                ),
            )
    if not out or not isinstance(out[-1], ModelRequest):
        raise IntegrationError("the rendered history must end with a request (user side)")
    return out


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
        self.timelines = TimelineCache(self.store, self.policy, timeline_kwargs)
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

    def mirror(self, messages: Sequence[ModelMessage]) -> int:
        """Append the messages the timeline does not hold yet; returns how many."""
        tl = self.timeline
        known = {b.meta.get("pai_fp") for b in tl.blocks}
        added = 0
        for message in messages:
            if message.metadata and MARK in message.metadata:
                continue  # ours, coming back: already in the timeline
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if isinstance(part, SystemPromptPart):
                        self.system = part.content
            fp = _fingerprint(message)
            if fp in known:
                continue
            new = from_pydantic_ai([message])
            if not new:
                continue
            starts_turn = isinstance(message, ModelRequest) and any(
                isinstance(p, UserPromptPart) for p in message.parts
            )
            if starts_turn or not tl.current_turn_id:
                tl.begin_turn()
            new[0] = msgspec.structs.replace(new[0], meta={**new[0].meta, "pai_fp": fp})
            tl.extend(new)
            known.add(fp)
            added += 1
        return added

    def _output(
        self, view: RenderedContext, incoming: Sequence[ModelMessage]
    ) -> list[ModelMessage]:
        out = to_pydantic_ai(view, self.conversation_id)
        last_in = next((m for m in reversed(incoming) if isinstance(m, ModelRequest)), None)
        if last_in is not None and last_in.instructions:
            last = out[-1]
            if not isinstance(last, ModelRequest):  # pragma: no cover - to_pydantic_ai ensures
                raise IntegrationError("the rendered history must end with a request")
            out[-1] = ModelRequest(
                last.parts, instructions=last_in.instructions, metadata=last.metadata
            )
        return out

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The processor: mirror, render (compacting when needed), persist, return."""
        tl = await self.timelines.aget(self.conversation_id)
        self.mirror(messages)
        view = await tl.arender(self.system)
        await self._apersist(messages)
        return self._output(view, messages)

    def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The sync processor, for ``ProcessHistory(history.process)``."""
        tl = self.timeline
        self.mirror(messages)
        view = tl.render(self.system)
        try:
            tl.persist(self.store)
        except ConflictError:
            self.timelines.forget(self.conversation_id)
            self.mirror(messages)
            self.timeline.persist(self.store)
        return self._output(view, messages)

    async def _apersist(self, messages: Sequence[ModelMessage]) -> None:
        tl = self.timeline
        try:
            await tl.apersist(self.store)
        except ConflictError:  # another worker wrote this conversation: take theirs, add ours
            self.timelines.forget(self.conversation_id)
            tl = await self.timelines.aget(self.conversation_id)
            self.mirror(messages)
            await tl.apersist(self.store)

    async def aflush(self, messages: Sequence[ModelMessage]) -> int:
        """Mirror and persist ``messages`` (a run's ``all_messages()``) without rendering,
        so the final answer is stored too; returns the store version."""
        await self.timelines.aget(self.conversation_id)
        self.mirror(messages)
        await self._apersist(messages)
        return self.timeline.version

    def flush(self, messages: Sequence[ModelMessage]) -> int:
        """:meth:`aflush` for sync code."""
        self.mirror(messages)
        self.timeline.persist(self.store)
        return self.timeline.version
