"""Constructors for the known block types (public path; they live in
:mod:`timeline.model.constructors`)."""

from timeline.model.constructors import (
    assistant_completion,
    canonical_json,
    custom,
    note,
    plan,
    plan_history,
    summary,
    tool_call,
    tool_result,
    turn_header,
    user_attachment,
    user_prompt,
)

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
