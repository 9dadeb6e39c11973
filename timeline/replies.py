"""Model replies as blocks: what a reply adds to a timeline, for loops of your own.

``ModelReply.from_anthropic`` / ``from_openai_chat`` / ``from_openai_responses`` build
the reply from an SDK response (see ``docs/providers.md``).
"""

from __future__ import annotations

import json
from typing import Any

from timeline import blocks as B
from timeline.block import Block
from timeline.driver import ModelReply

__all__ = ["reply_blocks"]


def reply_blocks(reply: ModelReply) -> list[Block]:
    """The blocks a reply adds to a timeline, in order: thinking/reasoning, the text,
    the tool calls (params that are not a JSON object are kept as ``{"_raw": text}``)."""
    out = list(reply.reasoning)
    if reply.text.strip():
        out.append(B.assistant_completion(reply.text))
    for call in reply.tool_calls:
        params: Any = call.params
        if isinstance(params, str):
            try:
                params = json.loads(params or "{}")
            except ValueError:
                params = {"_raw": call.params}
        if not isinstance(params, dict):
            params = {"_raw": call.params}
        out.append(B.tool_call(call.name, params, call_id=call.call_id))
    return out
