"""Provider payload formatters over a shared, always-valid message plan."""

from __future__ import annotations

from timeline._formats._plan import (
    CONVERSATION_START_TEXT,
    MISSING_RESULT_TEXT,
    Part,
    part_text,
    plan_messages,
)
from timeline._formats.anthropic import (
    CacheTTLs,
    cache_control,
    to_anthropic,
    tools_ttl,
)
from timeline._formats.openai import (
    prompt_cache_key_for,
    to_openai,
    to_openai_responses,
)
from timeline._formats.reply import (
    ModelReply,
    ToolCallRequest,
    Usage,
    call_params,
    content_blocks,
    read_usage,
    reply_blocks,
)
from timeline._formats.text import (
    block_text,
    to_document,
    to_text,
)
from timeline._formats.tools import (
    anthropic_tools,
    chat_tools,
    responses_tools,
)

__all__ = [
    "CONVERSATION_START_TEXT",
    "CacheTTLs",
    "MISSING_RESULT_TEXT",
    "ModelReply",
    "Part",
    "ToolCallRequest",
    "Usage",
    "anthropic_tools",
    "block_text",
    "cache_control",
    "call_params",
    "chat_tools",
    "content_blocks",
    "part_text",
    "plan_messages",
    "prompt_cache_key_for",
    "read_usage",
    "reply_blocks",
    "responses_tools",
    "to_anthropic",
    "to_document",
    "to_openai",
    "to_openai_responses",
    "to_text",
    "tools_ttl",
]
