"""Tokens of a provider payload, counted on the text the provider will see.

The rule every format is held to (``view.tokens`` is never below it, and a render with a
budget keeps it within the budget):

* the text layout (a string) is counted as one string;
* in structured payloads every string the model sees is counted: texts, tool names,
  call ids, tool inputs (as JSON) and outputs, file names, the tool definitions (names,
  descriptions, input schemas as JSON); structural values (``type``, ``role``,
  ``cache_control``, media types) are not;
* binary data (base64 sources, ``data:`` URLs, ``input_audio``) is estimated like the
  block it came from (:func:`~timeline._tokens.binary_token_estimate`), a referenced image
  or document (a URL or file id) like one whose size cannot be read, and opaque provider
  fields (signatures, encrypted content) at one token per 3 characters
  (:mod:`timeline._tokens.walk`);
* framing: 3 tokens per message (or Responses input item) and 1 per element of a nested
  list (content parts, tool calls, tool definitions) — together the 4 a block is charged
  (:data:`~timeline._tokens.BLOCK_OVERHEAD_TOKENS`).

A request's keyword arguments (``{"messages": [...], "tools": [...]}``, ``{"input": ...}``)
are counted as the payload they hold.
"""

from __future__ import annotations

from typing import Any, Final

from timeline._tokens.counters import TiktokenCounter, TokenCounter
from timeline._tokens.walk import PART_TOKENS, walk

__all__ = ["MESSAGE_TOKENS", "PART_TOKENS", "payload_tokens"]

MESSAGE_TOKENS: Final = 3


def payload_tokens(
    payload: str | dict[str, Any] | list[Any], counter: TokenCounter | None = None
) -> int:
    """Tokens of ``payload`` (any of ``RenderedContext``'s five formats) by the rule above,
    with ``counter`` (default: the library's cl100k counter)."""
    count = (counter or TiktokenCounter()).count
    if isinstance(payload, str):
        return count(payload)
    if isinstance(payload, list):
        return sum(MESSAGE_TOKENS + walk(item, count) for item in payload)
    total = 0
    for part in payload.get("system", ()):
        total += PART_TOKENS + walk(part, count)
    for message in [*payload.get("messages", ()), *payload.get("input", ())]:
        total += MESSAGE_TOKENS + walk(message, count)
    for tool in payload.get("tools", ()):
        total += PART_TOKENS + walk(tool, count)
    return total
