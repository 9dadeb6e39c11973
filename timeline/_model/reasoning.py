"""Thinking and reasoning blocks: kept exactly as the provider sent them.

Extended thinking with tools fails unless the assistant's ``thinking`` (with its
``signature``) and ``redacted_thinking`` blocks go back unchanged with its ``tool_use``;
OpenAI Responses wants its ``reasoning`` items (with ``encrypted_content``) back the same
way. These blocks hold the provider's item as JSON in ``data`` (``text`` stays empty), so:

* they render only to the provider they came from, byte-for-byte as received
  (Anthropic payloads for ``assistant.thinking``/``assistant.redacted_thinking``,
  Responses input for ``assistant.reasoning``), and nowhere else;
* they never reach summaries or search text (both read ``text``);
* they count in the budget (``data`` is estimated at one token per 3 bytes) and are
  never truncated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from timeline._model.block import Block
from timeline._model.errors import InvalidBlockError

__all__ = [
    "ASSISTANT_REASONING",
    "ASSISTANT_REDACTED_THINKING",
    "ASSISTANT_THINKING",
    "REASONING_MIME",
    "anthropic_thinking",
    "openai_reasoning",
    "reasoning_item",
    "reasoning_provider",
]

ASSISTANT_THINKING: Final = "assistant.thinking"
ASSISTANT_REDACTED_THINKING: Final = "assistant.redacted_thinking"
ASSISTANT_REASONING: Final = "assistant.reasoning"
REASONING_MIME: Final = "application/json"

_PROVIDER: Final[Mapping[str, Literal["anthropic", "responses"]]] = {
    ASSISTANT_THINKING: "anthropic",
    ASSISTANT_REDACTED_THINKING: "anthropic",
    ASSISTANT_REASONING: "responses",
}


def _as_dict(item: Any, where: str) -> dict[str, Any]:
    dump = getattr(item, "model_dump", None)
    if callable(dump):  # an SDK object: its wire form
        item = dump(mode="json", exclude_none=True, by_alias=True)
    if not isinstance(item, Mapping):
        raise InvalidBlockError(f"{where}: expected a mapping or an SDK object")
    return dict(item)


def _block(type: str, item: dict[str, Any], **meta: Any) -> Block:
    try:
        data = msgspec.json.encode(item)
    except (TypeError, msgspec.EncodeError) as exc:
        raise InvalidBlockError(f"{type}: the item is not JSON-encodable: {exc}") from exc
    return Block(type=type, author="assistant", mime=REASONING_MIME, data=data, meta=meta)


def anthropic_thinking(item: Any) -> Block:
    """A block for an Anthropic ``thinking`` (needs ``signature``) or ``redacted_thinking``
    (needs ``data``) content block, given as a dict or the SDK object."""
    raw = _as_dict(item, "anthropic thinking")
    kind = raw.get("type")
    if kind == "thinking":
        if not isinstance(raw.get("thinking"), str) or not isinstance(raw.get("signature"), str):
            raise InvalidBlockError("a thinking block needs 'thinking' and 'signature' strings")
        return _block(ASSISTANT_THINKING, raw)
    if kind == "redacted_thinking":
        if not isinstance(raw.get("data"), str):
            raise InvalidBlockError("a redacted_thinking block needs a 'data' string")
        return _block(ASSISTANT_REDACTED_THINKING, raw)
    raise InvalidBlockError(f"expected a thinking or redacted_thinking block, got {kind!r}")


def openai_reasoning(item: Any) -> Block:
    """A block for an OpenAI Responses ``reasoning`` item (``id``, ``summary``, optional
    ``encrypted_content``), given as a dict or the SDK object. A client that does not
    store responses (``store: false``) sends it back without ``id``, by its
    ``encrypted_content``: kept so too; one with neither is refused.
    Output-only fields (``status``) are dropped so the item is valid as input."""
    raw = _as_dict(item, "openai reasoning")
    if raw.get("type") != "reasoning":
        raise InvalidBlockError(f"expected a reasoning item, got type {raw.get('type')!r}")
    if not isinstance(raw.get("id"), str) and not isinstance(raw.get("encrypted_content"), str):
        raise InvalidBlockError(
            "a reasoning item needs its 'id' or its 'encrypted_content' (a string)"
        )
    raw.pop("status", None)
    raw.setdefault("summary", [])
    return _block(ASSISTANT_REASONING, raw)


def reasoning_provider(block: Block) -> Literal["anthropic", "responses"] | None:
    """The payload format a thinking/reasoning block belongs to (None: another type)."""
    return _PROVIDER.get(block.type)


def reasoning_item(block: Block) -> dict[str, Any] | None:
    """The provider item a thinking/reasoning block holds, as received (None when the
    block is hidden or holds none)."""
    if block.data is None or block.mime != REASONING_MIME:
        return None
    item = msgspec.json.decode(block.data)
    return item if isinstance(item, dict) else None
