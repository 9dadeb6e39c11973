"""Tokens of a provider payload, counted on the text the provider will see.

The rule every format is held to (``view.tokens`` is never below it, and a render with a
budget keeps it within the budget):

* the text layout (a string) is counted as one string;
* in structured payloads every string the model sees is counted: texts, tool names,
  call ids, tool inputs (as JSON) and outputs, file names; structural values (``type``,
  ``role``, ``cache_control``, media types) are not;
* binary data (base64 sources, ``data:`` URLs) is estimated like the block it came from
  (:func:`~timeline.tokens.binary_token_estimate`), and opaque provider fields
  (thinking signatures, encrypted reasoning) at one token per 3 characters;
* framing: 3 tokens per message (or Responses input item) and 1 per element of a nested
  list (content parts, tool calls) — together the 4 a block is charged
  (:data:`~timeline.tokens.BLOCK_OVERHEAD_TOKENS`).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

import msgspec

from timeline.tokens import TiktokenCounter, TokenCounter, binary_token_estimate

__all__ = ["MESSAGE_TOKENS", "PART_TOKENS", "payload_tokens"]

MESSAGE_TOKENS: Final = 3
PART_TOKENS: Final = 1
_STRUCTURAL: Final = frozenset({"type", "role", "cache_control", "media_type", "detail"})
_OPAQUE: Final = frozenset({"signature", "encrypted_content"})


def payload_tokens(
    payload: str | dict[str, Any] | list[Any], counter: TokenCounter | None = None
) -> int:
    """Tokens of ``payload`` (any of ``RenderedContext``'s five formats) by the rule above,
    with ``counter`` (default: the library's cl100k counter)."""
    count = (counter or TiktokenCounter()).count
    if isinstance(payload, str):
        return count(payload)
    if isinstance(payload, list):
        return sum(MESSAGE_TOKENS + _walk(item, count) for item in payload)
    total = 0
    for part in payload.get("system", ()):
        total += PART_TOKENS + _walk(part, count)
    for message in payload.get("messages", ()):
        total += MESSAGE_TOKENS + _walk(message, count)
    return total


def _walk(value: Any, count: Any) -> int:
    if isinstance(value, str):
        return _string(value, count)
    if isinstance(value, list):
        return sum((PART_TOKENS if isinstance(v, dict) else 0) + _walk(v, count) for v in value)
    if not isinstance(value, dict):
        return 0
    if value.get("type") == "base64" and isinstance(value.get("data"), str):
        return _binary(value["data"], str(value.get("media_type", "")))
    if value.get("type") == "redacted_thinking" and isinstance(value.get("data"), str):
        return len(value["data"]) // 3 + 1
    total = 0
    for key, item in value.items():
        if key in _STRUCTURAL:
            continue
        if key in _OPAQUE and isinstance(item, str):
            total += len(item) // 3 + 1
        elif key == "input" and isinstance(item, dict):  # Anthropic tool_use input
            total += count(msgspec.json.encode(item).decode())
        else:
            total += _walk(item, count)
    return total


def _string(text: str, count: Any) -> int:
    if text.startswith("data:") and ";base64," in text:
        head, _, data = text.partition(";base64,")
        return _binary(data, head[5:])
    return int(count(text)) if text else 0


def _binary(data: str, mime: str) -> int:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return len(data) // 3 + 1
    return binary_token_estimate(raw, mime)
