"""The agent's messages and the timeline, for :mod:`timeline.integrations.langchain`.

* :func:`mirror`: the state's new messages into the timeline (an orphan ``ToolMessage``
  by policy: dropped with a warning, or kept as text);
* :func:`compaction_update`: the state update that puts a new summary in place of the
  messages it covers (``SummarizationMiddleware``'s shape: remove all, the summary, the
  kept messages); :func:`state_update` adds the rewrite that gives a restarted
  process's state the stored conversation back;
* :func:`compose`: the model request's messages: the request's own messages, except the
  ones compaction replaced (the summary takes their place), those the render truncated
  (rendered), and cache checkpoints for ``ChatAnthropic``;
* :func:`internal_calls`: a context in which every LangChain call (a summarizer's model)
  is internal, kept off the agent's streams as ``SummarizationMiddleware`` keeps its own.
"""

from __future__ import annotations

import contextlib
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from timeline._core import Timeline
from timeline._model import CONV_RANGE_SUMMARY, REACT_TOOL_CALL, Block, call_names
from timeline._model import constructors as B
from timeline._render import RenderedContext
from timeline.integrations import IntegrationError, missing_extra
from timeline.integrations._langchain_messages import (
    ID_PREFIX,
    block_id,
    is_own_summary,
    message_blocks,
    message_head,
    own_summaries,
    summary_message,
    to_langchain,
    with_cache_control,
)

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        RemoveMessage,
        ToolMessage,
    )
    from langchain_core.runnables.config import var_child_runnable_config
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

try:  # langchain >= 1.4: the marker its stream transformer hides
    from langchain.agents.middleware.internal_call_transformer import internal_call_metadata
except ImportError:  # pragma: no cover - older langchain

    def internal_call_metadata() -> dict[str, Any]:
        return {}


__all__ = [
    "OrphanPolicy",
    "OrphanToolMessageWarning",
    "compaction_update",
    "compose",
    "ensure_ids",
    "internal_calls",
    "mirror",
    "state_update",
    "thread_id",
]

OrphanPolicy = Literal["drop", "text"]
TAG_NOSTREAM = "nostream"
"""langgraph's tag for a model call whose tokens stay off the messages stream."""


class OrphanToolMessageWarning(UserWarning):
    """The agent's state holds a ``ToolMessage`` whose tool call is not in the history;
    the timeline does not record it (``orphan_tool_messages="text"`` keeps it as text)."""


def thread_id(runtime: Any, default: str | None) -> str:
    """The run's ``thread_id`` (its runtime, else its config), else ``default``."""
    info = getattr(runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    if not thread:
        try:
            from langgraph.config import get_config

            thread = get_config().get("configurable", {}).get("thread_id")
        except RuntimeError:  # not inside a runnable context
            thread = None
    if not thread:
        thread = default
    if not thread:
        raise IntegrationError(
            "TimelineMiddleware needs a thread id: invoke the agent with "
            'config={"configurable": {"thread_id": ...}} or pass default_thread_id='
        )
    return str(thread)


def ensure_ids(messages: Sequence[BaseMessage]) -> None:
    """Give id-less messages an id (as ``SummarizationMiddleware`` does), so a message
    keeps its blocks when the state is rewritten and positions move."""
    for message in messages:
        if message.id is None:
            message.id = str(uuid.uuid4())


def _head(message: BaseMessage, position: int) -> str:
    return block_id(message, position)


def mirror(tl: Timeline, messages: Sequence[BaseMessage], orphans: OrphanPolicy = "drop") -> int:
    """Append the messages the timeline does not hold yet: those after the last one it
    knows (by message id). A human message starts a turn; this module's own summary
    message is skipped (the timeline holds the summary). All of them or none: a message
    the timeline refuses raises and leaves the timeline as it was (no turn opened for
    it). Returns how many were new."""
    held = tl.blocks
    known = {b.id for b in held}
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if _head(messages[i], i) in known:
            start = i + 1
            break
    summaries = own_summaries(held)
    calls = {n for b in held if b.type == REACT_TOOL_CALL for n in call_names(b)}
    pending: list[Block] = []
    in_turn = bool(tl.current_turn_id)
    added = 0
    for i in range(start, len(messages)):
        message = messages[i]
        if is_own_summary(message, summaries):
            continue
        blocks = message_blocks(message, i)
        if isinstance(message, ToolMessage) and message.tool_call_id not in calls:
            if orphans == "drop":
                warnings.warn(
                    OrphanToolMessageWarning(
                        f"ToolMessage {message.id!r} answers tool call "
                        f"{message.tool_call_id!r}, which is not in the history: not recorded"
                    ),
                    stacklevel=2,
                )
                continue
            text = f"[TOOL RESULT {message.name or ''} call_id={message.tool_call_id}]\n"
            blocks = [Block(**{**_fields(B.note(text + blocks[0].text)), "id": blocks[0].id})]
        if isinstance(message, HumanMessage) or not in_turn:
            pending.append(B.turn_header())
            in_turn = True
        pending += blocks  # not appended yet: a call still has the id it was given
        calls.update(b.call_id or "" for b in blocks if b.type == REACT_TOOL_CALL)
        added += 1
    tl.extend(pending)
    return added


def _fields(block: Block) -> dict[str, Any]:
    return {f: getattr(block, f) for f in block.__struct_fields__}


def _summary(view: RenderedContext) -> Block | None:
    first = view.blocks[0] if view.blocks else None
    return first if first is not None and first.type == CONV_RANGE_SUMMARY else None


def compaction_update(
    messages: Sequence[BaseMessage], view: RenderedContext, tl: Timeline
) -> dict[str, Any] | None:
    """The state update for a summary the state does not show yet: remove every
    message, then the summary message, then the messages from the first one with a
    block still visible onward (None when there is nothing to change). A message the
    cut went through (an AI message whose text the summary covers and whose tool calls
    stay) is kept whole, so its tool messages never lose their call."""
    summary = _summary(view)
    if summary is None:
        return None
    summaries = own_summaries(tl.blocks)
    own = summary_message(tl.get(summary.id))  # as held: the render may show it truncated
    if messages and messages[0].id == own.id and is_own_summary(messages[0], summaries):
        return None
    visible = {message_head(b) for b in view.blocks}
    kept: list[BaseMessage] = []
    for i, message in enumerate(messages):
        if is_own_summary(message, summaries):
            continue
        if kept or _head(message, i) in visible:
            kept.append(message)
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), own, *kept]}


def state_update(
    messages: Sequence[BaseMessage], restored: int, tl: Timeline, view: RenderedContext
) -> dict[str, Any] | None:
    """What ``before_model`` returns: a new summary in place of what it covers (see
    :func:`compaction_update`); else, when the first ``restored`` of ``messages`` are the
    timeline's history put back in front of a state that had lost it (a restarted
    process), the state rewritten to hold them all; else None."""
    update = compaction_update(messages, view, tl)
    if update is None and restored:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}
    return update


def _checkpoint_ids(view: RenderedContext) -> set[str]:
    """Message ids whose message carries a cache checkpoint (a checkpoint on a tool call
    moves to the end of its results: ChatAnthropic drops it on a tool_use block)."""
    return {message_head(view.blocks[at]) for at in view.cache_points}


def _as_rendered(
    message: BaseMessage, blocks: Sequence[Block], provider: str | None
) -> list[BaseMessage]:
    """``message`` as the render shows it: ``blocks``, the part of it still visible,
    truncated or hidden where the render did so. A tool message stays the answer to its
    call; an AI message keeps only its own content (its results are their own
    messages, never invented here)."""
    if isinstance(message, ToolMessage):
        return [message.model_copy(update={"content": "\n".join(b.text for b in blocks)})]
    part = RenderedContext("", tuple(blocks), (), lambda: 0, None, len(blocks))
    rendered = to_langchain(part, system=False, provider=provider)
    if isinstance(message, AIMessage):
        return [m for m in rendered if isinstance(m, AIMessage)]
    return rendered


def compose(
    request_messages: Sequence[BaseMessage],
    tl: Timeline,
    view: RenderedContext,
    *,
    cache_control: bool,
    provider: str | None,
) -> list[BaseMessage]:
    """The model's messages: the request's own, with a new summary in place of the
    messages it covers, rendered copies of the ones the render truncated, hid or cut
    through (only their visible part), and cache checkpoints when ``cache_control``.
    Messages the timeline never held (another middleware's) pass through in their
    place."""
    mine = tl.blocks
    held = {b.id: b for b in mine}
    heads = {message_head(b) for b in mine}
    summaries = own_summaries(mine)
    shown: dict[str, list[Block]] = {}
    for block in view.blocks[: view.stable_count]:
        shown.setdefault(message_head(block), []).append(block)
    summary = _summary(view)
    own = summary_message(summary) if summary is not None else None
    out: list[BaseMessage] = []
    placed = False
    for i, message in enumerate(request_messages):
        if is_own_summary(message, summaries):
            if own is not None and message.id == own.id and not placed:
                out.append(message if message.content == own.content else own)
                placed = True
            continue
        head = _head(message, i)
        if head not in heads:
            out.append(message)  # not the timeline's: another middleware's, or unrecorded
            continue
        if own is not None and not placed:
            out.append(own)
            placed = True
        blocks = shown.get(head)
        if blocks is None:
            continue  # compacted: the summary took its place
        whole = blocks[0].id == head  # else the cut went through it: its start is summarized
        if whole and all(held.get(b.id) == b for b in blocks):
            out.append(message)
        else:
            out += _as_rendered(message, blocks, provider)
    if own is not None and not placed:
        out.insert(0, own)
    return _with_checkpoints(out, view, summaries) if cache_control else out


def _with_checkpoints(
    messages: list[BaseMessage], view: RenderedContext, summaries: Mapping[str, Block]
) -> list[BaseMessage]:
    marked = _checkpoint_ids(view)
    summary = _summary(view)
    out: list[BaseMessage] = []
    carry = False  # a checkpoint on a tool call, moving to the last of its results
    for i, message in enumerate(messages):
        own = is_own_summary(message, summaries)
        key = (
            summary.id
            if own and summary is not None
            else f"{ID_PREFIX}{message.id}"
            if message.id
            else _head(message, i)
        )
        hit = key in marked
        if hit and isinstance(message, AIMessage) and message.tool_calls:
            carry = True
            out.append(message)
            continue
        if carry and isinstance(message, ToolMessage):
            follower = messages[i + 1] if i + 1 < len(messages) else None
            if isinstance(follower, ToolMessage):
                out.append(message)
                continue
            hit, carry = True, False
        out.append(with_cache_control(message) if hit else message)
    return out


@contextlib.contextmanager
def internal_calls() -> Iterator[None]:
    """Every LangChain runnable called inside (a summarizer's model) runs as an internal
    call: tagged ``nostream`` and marked ``lc_source="summarization"`` plus LangChain's
    internal-call marker, so neither ``stream_mode="messages"`` nor ``astream_events``
    shows it as the agent's output, as with ``SummarizationMiddleware``."""
    parent = var_child_runnable_config.get() or {}
    config: dict[str, Any] = dict(parent)
    config["tags"] = [*parent.get("tags", []), TAG_NOSTREAM]
    config["metadata"] = {
        **parent.get("metadata", {}),
        "lc_source": "summarization",
        **internal_call_metadata(),
    }
    token = var_child_runnable_config.set(config)  # type: ignore[arg-type]
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
