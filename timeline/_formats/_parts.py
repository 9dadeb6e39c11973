"""The content parts a message plan is made of, and what each provider accepts where.

A block becomes parts for one target format (``"anthropic"``, ``"chat"``,
``"responses"``; None: no provider, the neutral parts the integrations read):

* media (bytes or a reference) becomes an image, document or audio part only where that
  provider accepts it in that place (:func:`sendable`), else a text note naming it;
* an opaque provider block becomes a ``provider`` part for its own provider and a text
  part holding its text form for every other;
* everything else is text (labels for the non-conversational types).
"""

from __future__ import annotations

import base64
from collections.abc import Set
from typing import Final, Literal

import attrs

from timeline._model import (
    UNRECOGNISED,
    Block,
    MediaKind,
    block_type,
    given_call_id,
    media_kind,
    media_ref,
    native_provider,
    sent_type,
)

__all__ = [
    "EMPTY_RESULT_TEXT",
    "MISSING_RESULT_TEXT",
    "Message",
    "Part",
    "b64",
    "content_parts",
    "part_text",
    "result_items",
    "sendable",
]

MISSING_RESULT_TEXT: Final = "[no result recorded for this tool call]"
EMPTY_RESULT_TEXT: Final = "[the tool returned no output]"

PartKind = Literal[
    "text",
    "image",
    "document",
    "audio",
    "file",
    "tool_call",
    "tool_result",
    "reasoning",
    "provider",
]
Place = Literal["message", "result"]

_ACCEPTS: Final[dict[str | None, dict[Place, frozenset[str]]]] = {
    "anthropic": {
        "message": frozenset(
            {"image", "document", "image:url", "document:url"}
            | {"image:anthropic", "document:anthropic"}
        ),
        "result": frozenset(
            {"image", "image:url", "document:url", "image:anthropic", "document:anthropic"}
        ),
    },
    "chat": {
        "message": frozenset({"image", "document", "audio", "image:url", "document:openai"}),
        "result": frozenset({"image", "image:url"}),
    },
    "responses": {
        "message": frozenset(
            {"image", "document", "file", "image:url", "document:url"}
            | {"image:openai", "document:openai"}
        ),
        "result": frozenset(
            {"image", "file", "image:url", "document:url", "image:openai", "document:openai"}
        ),
    },
    None: {"message": frozenset({"image", "document"}), "result": frozenset({"image"})},
}
"""What each format sends as media, by place: ``kind`` for bytes (``file``: a document
other than a PDF, :data:`~timeline._model.media.FILE_TYPES`), ``kind:url`` for a URL,
``kind:<provider>`` for a file id on that provider's store (``docs/providers.md``)."""


@attrs.frozen
class Part:
    """One content part; ``index`` is the block's index in the view (-1: synthetic).

    ``text`` is what a text part sends (never blank; the final assistant text has its
    trailing whitespace removed)."""

    kind: PartKind
    block: Block
    index: int
    results: tuple[Block, ...] = ()
    indices: tuple[int, ...] = ()
    text: str = ""

    def at(self, points: Set[int]) -> bool:
        """Whether a cache checkpoint falls on this part (any of its blocks)."""
        return self.index in points or any(i in points for i in self.indices)


@attrs.frozen
class Message:
    role: Literal["user", "assistant"]
    parts: tuple[Part, ...]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def sendable(block: Block, provider: str | None, place: Place) -> MediaKind | None:
    """The media part ``block`` is sent as to ``provider`` in ``place`` (a user message or
    a tool result), or None when it holds no media that provider takes there."""
    accepts = _ACCEPTS.get(provider, _ACCEPTS[None])[place]
    kind = media_kind(block)
    if kind is not None:
        return kind if kind in accepts else None
    ref = media_ref(block)
    if ref is None:
        return None
    where = "url" if ref.url else ref.provider
    return ref.media if f"{ref.media}:{where}" in accepts else None


def _media_note(block: Block, name: object) -> str | None:
    """The note for media not sent (None: the block holds none)."""
    if block.data is not None and native_provider(block) is None:
        size = len(block.data)
        if sent_type(block) == UNRECOGNISED and block.mime != UNRECOGNISED:
            why = f"its bytes are not {block.mime}"
        else:
            why = "the provider does not accept this type"
        return f"[{name} ({block.mime}, {size} bytes) not sent: {why}]"
    ref = media_ref(block)
    if ref is not None:
        return f"[{name} ({ref.media} at {ref.label}) not sent: the provider does not take it here]"
    return None


def _attachment_text(block: Block, sent: bool) -> str:
    name = block.meta.get("name", block.path)
    note = None if sent else _media_note(block, f"ATTACHMENT {name}")
    if note is not None:
        return f"{note}\n{block.text}" if block.text.strip() else note
    if block.data is not None and native_provider(block) is None and not block.text.strip():
        return f"[ATTACHMENT {name} ({block.mime}, {len(block.data)} bytes)]"
    return f"[ATTACHMENT {name}]\n{block.text}"


def part_text(block: Block) -> str:
    """The text a block contributes as a text part (labels for non-conversational types);
    media is taken as sent when its bytes are an image or a PDF (what every format takes),
    else named in a note."""
    spec = block_type(block.type)
    if spec.render == "summary":
        return f"{spec.label}\n{block.text}"
    if spec.render == "attachment":
        return _attachment_text(block, sendable(block, None, "message") is not None)
    if spec.render == "tool_result":  # orphaned result shown as text
        return f"[TOOL RESULT {block.tool_id or ''} call_id={given_call_id(block)}]\n{block.text}"
    if block.type in ("user.prompt", "assistant.completion"):
        return block.text
    return f"{spec.label}\n{block.text}" if spec.label else block.text


def content_parts(block: Block, index: int, provider: str | None) -> list[Part]:
    """The parts of a content block (not a tool call, result or reasoning) for
    ``provider``: media with its caption where accepted, an opaque block's own item for
    its provider, else text (never blank)."""
    render = block_type(block.type).render
    own = provider is not None and native_provider(block) == provider
    if render in ("attachment", "provider") and own:
        return [Part("provider", block, index)]  # its own provider's item, exactly
    if render == "attachment":
        kind = sendable(block, provider, "message")
        if kind is not None:
            caption = _attachment_text(block, True) if block.text.strip() else ""
            head = [Part("text", block, index, text=caption)] if caption else []
            return [*head, Part(kind, block, index)]
        text = _attachment_text(block, False)
    else:
        text = part_text(block)
    return [Part("text", block, index, text=text)] if text.strip() else []


def result_items(part: Part, provider: str | None = None) -> list[str | Block]:
    """A tool-result part's content in order: texts (never blank), and the blocks sent as
    media or as ``provider``'s own item (:func:`sendable`, ``native_provider``); media a
    provider does not take there becomes a text note."""
    if part.index < 0:
        return [MISSING_RESULT_TEXT]
    items: list[str | Block] = []
    for b in part.results:
        if provider is not None and native_provider(b) == provider:
            items.append(b)  # the provider's own result part, kept exactly
            continue
        if b.text.strip():
            items.append(b.text)
        if sendable(b, provider, "result") is not None:
            items.append(b)
        else:
            note = _media_note(b, "tool output")
            if note is not None:
                items.append(note)
    return items or [EMPTY_RESULT_TEXT]
