"""The ``Block``: one typed, immutable piece of a conversation.

A block holds data only. Rendering, token counting and storage live elsewhere, so the
same Struct is what is stored, sent across processes and snapshot.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

__all__ = [
    "ASSISTANT_COMPLETION",
    "Block",
    "CONV_RANGE_SUMMARY",
    "CONV_RECALLED",
    "PLAN_LATEST",
    "REACT_NOTE",
    "REACT_PLAN",
    "REACT_PLAN_HISTORY",
    "REACT_TOOL_CALL",
    "REACT_TOOL_RESULT",
    "TURN_HEADER",
    "USER_ATTACHMENT",
    "USER_PROMPT",
]

TURN_HEADER: Final = "turn.header"
USER_PROMPT: Final = "user.prompt"
USER_ATTACHMENT: Final = "user.attachment"
ASSISTANT_COMPLETION: Final = "assistant.completion"
REACT_TOOL_CALL: Final = "react.tool.call"
REACT_TOOL_RESULT: Final = "react.tool.result"
REACT_NOTE: Final = "react.note"
REACT_PLAN: Final = "react.plan"
REACT_PLAN_HISTORY: Final = "react.plan.history"
PLAN_LATEST: Final = "plan.latest"
"""Path alias of the newest ``react.plan`` block (``hide``, ``pin``, ``store.read``)."""
CONV_RANGE_SUMMARY: Final = "conv.range.summary"
CONV_RECALLED: Final = "conv.recalled"
"""The block a render adds after the stable stream with the archived blocks it recalls
(never stored: it is rebuilt at every render)."""


class Block(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One block of the timeline.

    ``id``, ``ts``, ``turn_id`` and ``path`` are filled by the timeline on append when
    left empty. Fields are only ever added with defaults (schema evolution rule).
    """

    type: str
    text: str = ""
    id: str = ""
    author: str = ""
    turn_id: str = ""
    ts: str = ""
    mime: str = "text/markdown"
    path: str = ""
    call_id: str | None = None
    tool_id: str | None = None
    data: bytes | None = None
    hidden: bool = False
    replacement_text: str | None = None
    meta: dict[str, Any] = {}
