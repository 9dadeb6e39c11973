"""Media a block sends: its bytes (``data``) or a reference (a URL, a provider's file id).

A referenced image or document is never fetched: the block keeps the reference in
``meta`` (``url``, or ``file_id`` with ``file_provider``, and ``media``: ``"image"`` or
``"document"``), and each format sends it where its provider accepts a reference in that
place, else a text note naming it (``docs/providers.md`` has the table).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

from timeline.model.block import USER_ATTACHMENT, Block
from timeline.model.errors import InvalidBlockError

__all__ = [
    "AUDIO_FORMATS",
    "DOCUMENT_TYPES",
    "IMAGE_TYPES",
    "MediaKind",
    "MediaRef",
    "media_file",
    "media_kind",
    "media_ref",
    "media_url",
    "reference_meta",
]

IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image media types Anthropic and OpenAI both accept; others render as a text note."""
DOCUMENT_TYPES: Final = frozenset({"application/pdf"})
"""Binary document types sent as document/file parts; others render as a text note."""
AUDIO_FORMATS: Final = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
"""Audio media types Chat Completions accepts as ``input_audio`` (by its ``format``)."""

MediaKind = Literal["image", "document", "audio"]
Reference = Literal["image", "document"]


@attrs.frozen
class MediaRef:
    """A referenced image or document: by ``url``, or by ``file_id`` on ``provider``'s
    file store (``"anthropic"`` or ``"openai"``)."""

    media: Reference
    url: str | None = None
    file_id: str | None = None
    provider: str | None = None

    @property
    def label(self) -> str:
        """What the reference names, for notes (``https://...`` or ``openai file file-1``)."""
        return self.url or f"{self.provider} file {self.file_id}"


def media_kind(block: Block) -> MediaKind | None:
    """How binary ``data`` can be sent: as an image, a document, audio, or not at all."""
    if block.data is None:
        return None
    if block.mime in IMAGE_TYPES:
        return "image"
    if block.mime in DOCUMENT_TYPES:
        return "document"
    if block.mime in AUDIO_FORMATS:
        return "audio"
    return None


def media_ref(block: Block) -> MediaRef | None:
    """The reference ``block`` sends in place of bytes (None: it holds none)."""
    if block.data is not None:
        return None
    meta = block.meta
    media = meta.get("media")
    if media not in ("image", "document"):
        return None
    url, file_id = meta.get("url"), meta.get("file_id")
    if isinstance(url, str) and url:
        return MediaRef(media, url=url)
    provider = meta.get("file_provider")
    if isinstance(file_id, str) and file_id and provider in ("anthropic", "openai"):
        return MediaRef(media, file_id=file_id, provider=provider)
    return None


def reference_meta(
    media: Any, *, url: str | None = None, file_id: str | None = None, provider: str | None = None
) -> dict[str, Any]:
    """The ``meta`` entries of a reference (checked): ``media`` and ``url``, or
    ``media``, ``file_id`` and ``file_provider``."""
    if media not in ("image", "document"):
        raise InvalidBlockError(f"media must be 'image' or 'document', not {media!r}")
    if url is not None:
        if not isinstance(url, str) or not url.strip():
            raise InvalidBlockError(f"a media URL must be a non-empty string, not {url!r}")
        return {"media": media, "url": url}
    if not isinstance(file_id, str) or not file_id.strip():
        raise InvalidBlockError(f"a file id must be a non-empty string, not {file_id!r}")
    if provider not in ("anthropic", "openai"):
        raise InvalidBlockError(f"file_provider must be 'anthropic' or 'openai', not {provider!r}")
    return {"media": media, "file_id": file_id, "file_provider": provider}


def _attachment(meta: dict[str, Any], name: str, mime: str, text: str) -> Block:
    return Block(
        type=USER_ATTACHMENT,
        text=text,
        author="user",
        mime=mime or ("image/*" if meta["media"] == "image" else "application/octet-stream"),
        meta={"name": name or meta.get("url") or meta.get("file_id"), **meta},
    )


def media_url(
    url: str, *, media: Reference = "image", name: str = "", mime: str = "", text: str = ""
) -> Block:
    """A user attachment referencing an image or document by URL (nothing is fetched)."""
    return _attachment(reference_meta(media, url=url), name, mime, text)


def media_file(
    file_id: str,
    *,
    provider: Literal["anthropic", "openai"],
    media: Reference = "document",
    name: str = "",
    mime: str = "",
    text: str = "",
) -> Block:
    """A user attachment referencing a file uploaded to ``provider``'s file store; only
    that provider gets the reference, the others a note naming it."""
    return _attachment(reference_meta(media, file_id=file_id, provider=provider), name, mime, text)
