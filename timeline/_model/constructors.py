"""Constructors for the known block types.

Each returns an unstored :class:`~timeline.Block`; the timeline fills ``id``, ``ts``,
``turn_id`` and ``path`` on append.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from timeline._model.block import (
    ASSISTANT_COMPLETION,
    CONV_RANGE_SUMMARY,
    REACT_NOTE,
    REACT_PLAN,
    REACT_PLAN_HISTORY,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)
from timeline._model.errors import InvalidBlockError
from timeline._model.json_text import check_json

__all__ = [
    "assistant_completion",
    "canonical_json",
    "custom",
    "note",
    "plan",
    "plan_history",
    "summary",
    "tool_call",
    "tool_result",
    "turn_header",
    "user_attachment",
    "user_prompt",
]


def canonical_json(params: Any) -> str:
    """Tool parameters as canonical JSON (sorted keys, no spaces) so renders are byte-stable."""
    if not isinstance(params, Mapping):
        raise InvalidBlockError(
            f"tool-call params must be a JSON object (mapping), not {type(params).__name__}"
        )
    value = dict(params)
    check_json(value, "params")
    return msgspec.json.encode(value, order="sorted").decode()


def turn_header(text: str = "", **meta: Any) -> Block:
    """A ``turn.header``; normally appended by :meth:`Timeline.begin_turn`."""
    return Block(type=TURN_HEADER, text=text, author="system", meta=meta)


def user_prompt(text: str, **meta: Any) -> Block:
    """What the user asked."""
    return Block(type=USER_PROMPT, text=text, author="user", meta=meta)


def user_attachment(
    *,
    name: str,
    mime: str,
    data: bytes | None = None,
    text: str = "",
    **meta: Any,
) -> Block:
    """A file the user attached: binary ``data`` (image, PDF) or textual ``text``."""
    if data is None and not text:
        raise InvalidBlockError("an attachment needs either data (bytes) or text")
    return Block(
        type=USER_ATTACHMENT,
        text=text,
        author="user",
        mime=mime,
        data=data,
        meta={"name": name, **meta},
    )


def assistant_completion(text: str, **meta: Any) -> Block:
    """The model's text answer."""
    return Block(type=ASSISTANT_COMPLETION, text=text, author="assistant", meta=meta)


def tool_call(
    tool_id: str, params: Mapping[str, Any], *, call_id: str | None = None, **meta: Any
) -> Block:
    """A tool invocation; params are stored as canonical JSON. ``call_id`` is generated on
    append when omitted."""
    if not tool_id:
        raise InvalidBlockError("a tool call needs a tool name (tool_id)")
    return Block(
        type=REACT_TOOL_CALL,
        text=canonical_json(params),
        author="assistant",
        mime="application/json",
        call_id=call_id,
        tool_id=tool_id,
        meta=meta,
    )


def tool_result(
    call_id: str,
    text: str,
    *,
    tool_id: str | None = None,
    is_error: bool = False,
    mime: str = "text/plain",
    data: bytes | None = None,
    **meta: Any,
) -> Block:
    """The output of the tool call named by ``call_id``."""
    if not call_id:
        raise InvalidBlockError("a tool result needs the call_id of its tool call")
    if is_error:
        meta = {**meta, "is_error": True}
    return Block(
        type=REACT_TOOL_RESULT,
        text=text,
        author="tool",
        mime=mime,
        call_id=call_id,
        tool_id=tool_id,
        data=data,
        meta=meta,
    )


def note(text: str, **meta: Any) -> Block:
    """An agent-side note (observation, status) rendered user-side as ``[NOTE]``."""
    return Block(type=REACT_NOTE, text=text, author="system", meta=meta)


def plan(text: str, **meta: Any) -> Block:
    """The agent's current plan (``react.plan``). The newest plan stays visible right after
    every summary; earlier ones are folded into one ``react.plan.history`` block. The path
    alias ``plan.latest`` names the newest."""
    return Block(type=REACT_PLAN, text=text, author="assistant", meta=meta)


def plan_history(text: str, **meta: Any) -> Block:
    """Earlier plans folded by compaction (``react.plan.history``); normally inserted by it."""
    return Block(type=REACT_PLAN_HISTORY, text=text, author="system", meta=meta)


def summary(text: str, **meta: Any) -> Block:
    """A ``conv.range.summary``; normally inserted by compaction."""
    return Block(type=CONV_RANGE_SUMMARY, text=text, author="system", meta=meta)


def custom(
    type: str, text: str, *, author: str = "", mime: str = "text/markdown", **meta: Any
) -> Block:
    """A block of a framework-defined type (``react.plan``, ``stage.gate``...)."""
    if not type:
        raise InvalidBlockError("a custom block needs a type name")
    return Block(type=type, text=text, author=author, mime=mime, meta=meta)
