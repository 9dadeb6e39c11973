"""A conversation the agent's state has lost, given back to it, for
:mod:`timeline.integrations.langchain`.

A restarted process (a new ``TimelineMiddleware`` and a fresh checkpointer on the same
store and thread) starts from a state that holds only the new input, while the thread's
timeline holds the conversation so far. :func:`restored` gives the messages to put back
in front of that input: the summary message, then every message of the live history as
the agent's state had it (each mirrored message's first block holds it), or its visible
part as rendered where a compaction cut through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from timeline._core import Timeline
from timeline._model import CONV_RANGE_SUMMARY, REACT_TOOL_RESULT, TURN_HEADER, Block, NotFoundError
from timeline._render import RenderedContext
from timeline.integrations import missing_extra
from timeline.integrations._langchain_messages import (
    ID_PREFIX,
    block_id,
    held_message,
    is_own_summary,
    message_head,
    own_summaries,
    summary_message,
    to_langchain,
)

try:
    from langchain_core.messages import BaseMessage, ToolMessage
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("langchain", "langchain") from exc

__all__ = ["history_messages", "restored"]


def restored(tl: Timeline, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The timeline's live history as messages when the state (``messages``) holds none
    of it; ``[]`` when the state already continues the timeline (its newest message the
    timeline holds is found first, usually the last one) or the timeline is empty."""
    for i in range(len(messages) - 1, -1, -1):
        if _holds(tl, block_id(messages[i], i)):
            return []
    blocks = tl.blocks
    if not blocks:
        return []
    summaries = own_summaries(blocks)
    if any(is_own_summary(m, summaries) for m in messages):
        return []
    return history_messages(blocks)


def _holds(tl: Timeline, block: str) -> bool:
    try:
        tl.get(block)
    except NotFoundError:
        return False
    return True


def history_messages(blocks: Sequence[Block]) -> list[BaseMessage]:
    """The live history in ``blocks`` (a timeline's) as LangChain messages: the latest
    summary first (as the summary message), then each message from the blocks it left."""
    start = 0
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].type == CONV_RANGE_SUMMARY:
            start = i
            break
    groups: dict[str, list[Block]] = {}
    for block in blocks[start:]:
        if block.type != TURN_HEADER:
            groups.setdefault(message_head(block), []).append(block)
    out: list[BaseMessage] = []
    for head, group in groups.items():
        first = group[0]
        if first.type == CONV_RANGE_SUMMARY:
            out.append(summary_message(first))
            continue
        message = held_message(first) if first.id == head else None
        out += [message] if message is not None else _rendered(head, group)
    return out


def _rendered(head: str, blocks: list[Block]) -> list[BaseMessage]:
    """The message whose first block is gone (a compaction cut through it), or that
    holds no message (a note), rendered from the blocks it left, under its own id; no
    tool message is invented for its calls (their results are messages of their own)."""
    answered = {b.call_id for b in blocks if b.type == REACT_TOOL_RESULT}
    view = RenderedContext("", tuple(blocks), (), lambda: 0, None, len(blocks))
    out = [
        m
        for m in to_langchain(view, system=False)
        if not isinstance(m, ToolMessage) or m.tool_call_id in answered
    ]
    if out:
        out[0].id = head[len(ID_PREFIX) :] if head.startswith(ID_PREFIX) else head
    return out
