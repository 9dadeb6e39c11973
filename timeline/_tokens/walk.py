"""Tokens of one payload value by the payload rule (:mod:`timeline._tokens.payload`), for
the payload counter and for blocks that keep a provider's item (the memo charges such a
block what its item costs in a payload, so the estimate stays an upper bound).

Every string the model sees is counted with the counter; structural values are not;
media is estimated like the block it came from: bytes (base64 sources, ``data:`` URLs,
``input_audio``) by :func:`~timeline._tokens.binary_token_estimate`, a referenced image or
document (a URL or a file id, never fetched) like one whose size cannot be read; opaque
provider fields at one token per 3 characters.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from timeline._tokens.binary import binary_token_estimate

__all__ = ["PART_TOKENS", "REFERENCE_TOKENS", "walk"]

PART_TOKENS: Final = 1
REFERENCE_TOKENS: Final = {
    "image": binary_token_estimate(b"", "image/*"),
    "document": binary_token_estimate(b"", "application/pdf"),
}
"""A referenced image or document: what one whose size cannot be read is estimated at."""
_STRUCTURAL: Final = frozenset({"type", "role", "cache_control", "media_type", "detail"})
_AS_JSON: Final = frozenset({"input", "input_schema", "parameters"})
"""Objects the model reads as JSON text: an Anthropic ``tool_use`` input, a tool
definition's input schema (Anthropic's ``input_schema``, OpenAI's ``parameters``)."""
_OPAQUE: Final = frozenset(
    {"signature", "encrypted_content", "encrypted_index", "encrypted_stdout"}
)

Count = Callable[[str], int]


def _reference(value: Mapping[str, Any]) -> int:
    """The media estimate of a part that references an image or document (0: none)."""
    kind = value.get("type")
    if kind in ("image", "document"):  # Anthropic: a url or file source
        source = value.get("source")
        if isinstance(source, Mapping) and source.get("type") in ("url", "file"):
            return REFERENCE_TOKENS[str(kind)]
        return 0
    if kind == "image_url":  # Chat
        image = value.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else None
        return REFERENCE_TOKENS["image"] if isinstance(url, str) and _remote(url) else 0
    if kind == "file":  # Chat
        file = value.get("file")
        by_id = isinstance(file, Mapping) and "file_id" in file
        return REFERENCE_TOKENS["document"] if by_id else 0
    if kind == "input_image":  # Responses
        url = value.get("image_url")
        remote = isinstance(url, str) and _remote(url)
        return REFERENCE_TOKENS["image"] if remote or value.get("file_id") else 0
    if kind == "input_file" and "file_data" not in value:
        return REFERENCE_TOKENS["document"] if value.get("file_url") or value.get("file_id") else 0
    return 0


def _remote(url: str) -> bool:
    return not (url.startswith("data:") and ";base64," in url)


def walk(value: Any, count: Count) -> int:
    """Tokens of ``value`` (a payload, message, part or item) by the payload rule."""
    if isinstance(value, str):
        return _string(value, count)
    if isinstance(value, list):
        return sum((PART_TOKENS if isinstance(v, dict) else 0) + walk(v, count) for v in value)
    if not isinstance(value, dict):
        return 0
    if value.get("type") == "base64" and isinstance(value.get("data"), str):
        return _binary(value["data"], str(value.get("media_type", "")))
    if value.get("type") == "redacted_thinking" and isinstance(value.get("data"), str):
        return len(value["data"]) // 3 + 1
    audio = value.get("input_audio") if value.get("type") == "input_audio" else None
    if isinstance(audio, Mapping) and isinstance(audio.get("data"), str):
        return _binary(audio["data"], f"audio/{audio.get('format')}") + walk(
            audio.get("format"), count
        )
    total = _reference(value)
    for key, item in value.items():
        if key in _STRUCTURAL:
            continue
        if key in _OPAQUE and isinstance(item, str):
            total += len(item) // 3 + 1
        elif key in _AS_JSON and isinstance(item, dict):  # tool inputs, tool input schemas
            total += count(msgspec.json.encode(item).decode())
        else:
            total += walk(item, count)
    return total


def _string(text: str, count: Count) -> int:
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
