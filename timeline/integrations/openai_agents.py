"""OpenAI Agents SDK: ``TimelineSession`` (the ``Session`` protocol) and its
``call_model_input_filter``.

::

    session = TimelineSession("user-42", store="sqlite:///agent.db", policy=policy)
    result = await Runner.run(agent, "hi", session=session,
                              run_config=RunConfig(call_model_input_filter=session.input_filter))

``get_items()`` returns the rendered, compacted Responses input items; ``add_items``
mirrors what the run produced into the timeline and persists it. ``Runner.run`` reads
the session once per run, so a long tool loop inside one run would grow past the budget:
``session.input_filter`` bounds every model call of the run too (it mirrors the run's
new items into the timeline and hands the model the rendered context instead).
Hosted-tool items (web search, file search...) are not kept in the timeline.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from timeline.compaction.policy import CompactionPolicy
from timeline.core.timeline import Timeline
from timeline.integrations import missing_extra
from timeline.integrations._threads import TimelineCache, open_store
from timeline.model import constructors as B
from timeline.model.block import CONV_RANGE_SUMMARY, TURN_HEADER, Block
from timeline.model.errors import ConflictError, EmptyPromptError
from timeline.model.persistence import IndexStore
from timeline.model.reasoning import openai_reasoning
from timeline.render.context import RenderedContext

try:
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("openai-agents", "openai-agents") from exc

__all__ = ["TimelineSession", "from_responses_items", "to_responses_items"]

Item = dict[str, Any]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content or ():
        if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"):
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "refusal":
            texts.append(str(part.get("refusal", "")))
    return "\n".join(texts)


def _images(content: Any) -> list[tuple[str, bytes]]:
    out = []
    for part in content if isinstance(content, list) else ():
        url = part.get("image_url") if isinstance(part, dict) else None
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            head, data = url[5:].split(";base64,", 1)
            out.append((head, base64.b64decode(data)))
    return out


def _item_blocks(item: Item) -> list[Block]:
    kind = item.get("type", "message")
    if kind == "function_call":
        args = json.loads(item.get("arguments") or "{}")
        return [B.tool_call(str(item["name"]), args, call_id=str(item["call_id"]))]
    if kind == "function_call_output":
        output = item.get("output", "")
        text = output if isinstance(output, str) else _content_text(output)
        return [B.tool_result(str(item["call_id"]), text)]
    if kind == "message":
        role = item.get("role")
        text = _content_text(item.get("content"))
        if role == "assistant":
            return [B.assistant_completion(text)]
        if role == "user":
            out = [B.user_prompt(text)]
            for k, (mime, data) in enumerate(_images(item.get("content"))):
                out.append(B.user_attachment(name=f"image-{k + 1}", mime=mime, data=data))
            return out
        return [B.note(text)]  # system / developer items inside the history
    if kind == "reasoning":  # sent back unchanged, counted in the budget
        return [openai_reasoning(item)]
    return []  # hosted-tool items are not kept (see the module doc)


def from_responses_items(items: Sequence[Item]) -> list[Block]:
    """Blocks for Responses input items: messages (user images too), function calls and
    their outputs, reasoning items (``assistant.reasoning``). Hosted-tool items have no
    block and are dropped."""
    return [b for item in items for b in _item_blocks(item)]


def to_responses_items(view: RenderedContext) -> list[Item]:
    """Responses input items for a rendered view (system prompt excluded: the Agents
    SDK sends the agent's instructions itself). The SDK may change them freely: a
    payload is its caller's own (every dict and list in it new)."""
    try:
        items = view.to_openai_responses()
    except EmptyPromptError:  # a new or cleared session: no history yet
        return []
    if view.system and items and items[0].get("role") in ("system", "developer"):
        items = items[1:]
    # an assistant message without a response id is valid input in the easy form only
    return [
        {"type": "message", "role": "assistant", "content": _content_text(i["content"])}
        if i.get("role") == "assistant" and "id" not in i
        else i
        for i in items
    ]


def _key(item: Item) -> tuple[str, ...]:
    """What identifies an item across the SDK's copies of it."""
    kind = str(item.get("type", "message"))
    if kind in ("function_call", "function_call_output"):
        return (kind, str(item.get("call_id")))
    if kind == "message":
        return (
            kind,
            str(item.get("role")),
            _content_text(item.get("content")),
            str(item.get("id", "")),
        )
    return (kind, str(item.get("id", "")), json.dumps(item, sort_keys=True, default=str))


class TimelineSession:
    """A ``Session`` backed by a persisted timeline (see the module doc).

    ``store`` is an index store or its URL; ``policy`` the compaction policy; other
    keywords go to :class:`Timeline`. ``system`` is counted against the budget in
    ``get_items`` (the filter uses the agent's instructions).
    """

    session_settings: Any = None

    def __init__(
        self,
        session_id: str,
        store: IndexStore | str,
        policy: CompactionPolicy | None = None,
        *,
        system: str = "",
        **timeline_kwargs: Any,
    ) -> None:
        self.session_id = session_id
        self.store = open_store(store)
        self.policy = policy if policy is not None else CompactionPolicy()
        self.system = system
        self.timelines = TimelineCache(self.store, self.policy, timeline_kwargs)
        self._served: list[Item] = []
        self._run_keys: set[tuple[str, ...]] = set()

    @property
    def timeline(self) -> Timeline:
        return self.timelines.get(self.session_id)

    async def _timeline(self) -> Timeline:
        return await self.timelines.aget(self.session_id)

    def _mirror(self, tl: Timeline, items: Sequence[Item]) -> int:
        added = 0
        for item in items:
            key = _key(item)
            if key in self._run_keys:
                continue
            new = _item_blocks(item)
            if not new:
                continue
            is_user = item.get("type", "message") == "message" and item.get("role") == "user"
            if is_user or not tl.current_turn_id:
                tl.begin_turn()
            tl.extend(new)
            self._run_keys.add(key)
            added += 1
        return added

    async def _persist(self, items: Sequence[Item]) -> None:
        tl = await self._timeline()
        try:
            await tl.apersist(self.store)
        except ConflictError:  # another worker wrote this session: take theirs, add ours
            self.timelines.forget(self.session_id)
            tl = await self._timeline()
            self._run_keys.clear()
            self._mirror(tl, items)
            await tl.apersist(self.store)

    async def _render(self, system: str) -> RenderedContext:
        tl = await self._timeline()
        return await tl.arender(system)

    # -- the Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Item]:
        """The rendered, compacted history as Responses input items (the latest
        ``limit`` of them when given, never starting with an orphan call output)."""
        items = to_responses_items(await self._render(self.system))
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
            while items and items[0].get("type") == "function_call_output":
                items = items[1:]
        self._served = [dict(i) for i in items]
        self._run_keys = set()
        return items

    async def add_items(self, items: list[Item]) -> None:
        """Mirror the run's items into the timeline (each once) and persist."""
        tl = await self._timeline()
        self._mirror(tl, [dict(i) for i in items])
        await self._persist(items)

    async def pop_item(self) -> Item | None:
        """Remove the most recent item from the live history (the store's turn log keeps
        it: nothing is lost) and return it."""
        tl = await self._timeline()
        blocks = list(tl.blocks)
        while blocks and blocks[-1].type == TURN_HEADER:
            blocks.pop()
        if not blocks or blocks[-1].type == CONV_RANGE_SUMMARY:
            return None
        last = blocks.pop()
        while blocks and blocks[-1].type == TURN_HEADER:
            blocks.pop()
        snapshot = tl.snapshot()
        tl.restore(msgspec.structs.replace(snapshot, blocks=blocks))
        await self._persist([])
        popped = to_responses_items(_one_block_view(last))
        if last.type == "react.tool.call":  # not the synthetic output the view adds
            popped = [i for i in popped if i.get("type") == "function_call"]
        return popped[-1] if popped else None

    async def clear_session(self) -> None:
        """Forget the live history (the store keeps the turn log, still searchable)."""
        tl = await self._timeline()
        tl.clear()
        self._served = []
        self._run_keys = set()
        await self._persist([])

    # -- bounding the model calls inside one run -----------------------------------------

    async def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig(call_model_input_filter=session.input_filter)``: mirrors the run's
        new items into the timeline and sends the rendered, compacted context."""
        items = [dict(i) for i in data.model_data.input]
        served = self._served
        head = items[: len(served)]
        if len(items) >= len(served) and [_key(i) for i in head] == [_key(i) for i in served]:
            new = items[len(served) :]
        else:  # the SDK reshaped the history: skip what we served by identity
            known = {_key(i) for i in served}
            new = [i for i in items if _key(i) not in known]
        tl = await self._timeline()
        self._mirror(tl, new)
        instructions = data.model_data.instructions or ""
        view = await tl.arender(instructions)
        await self._persist(new)
        return ModelInputData(input=to_responses_items(view), instructions=instructions or None)  # type: ignore[arg-type]


def _one_block_view(block: Block) -> RenderedContext:
    """A view of one block, to give a popped block back in item form."""
    return RenderedContext("", (block,), (), lambda: 0, None, 1)
