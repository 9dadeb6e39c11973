"""Constructors for the known block types (public path; they live in
:mod:`timeline.model.constructors`, :mod:`timeline.model.media` and
:mod:`timeline.model.native`)."""

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
from timeline.model.media import media_file, media_url
from timeline.model.native import (
    anthropic_compaction,
    anthropic_system_message,
    openai_compaction,
    provider_block,
)

__all__ = [
    "anthropic_compaction",
    "anthropic_system_message",
    "assistant_completion",
    "canonical_json",
    "custom",
    "media_file",
    "media_url",
    "note",
    "openai_compaction",
    "plan",
    "plan_history",
    "provider_block",
    "summary",
    "tool_call",
    "tool_result",
    "turn_header",
    "user_attachment",
    "user_prompt",
]
