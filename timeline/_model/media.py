"""Media a block sends: its bytes (``data``) or a reference (a URL, a provider's file id).

A referenced image or document is never fetched: the block keeps the reference in
``meta`` (``url``, or ``file_id`` with ``file_provider``, and ``media``: ``"image"`` or
``"document"``), and each format sends it where its provider accepts a reference in that
place, else a text note naming it (``docs/providers.md`` has the table).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

from timeline._model.block import USER_ATTACHMENT, Block
from timeline._model.errors import InvalidBlockError

__all__ = [
    "ANTHROPIC_FIELDS",
    "AUDIO_FORMATS",
    "DOCUMENT_TYPES",
    "FILE_TYPES",
    "IMAGE_TYPES",
    "MediaKind",
    "MediaRef",
    "file_extension",
    "media_file",
    "media_kind",
    "media_ref",
    "media_url",
    "reference_meta",
    "sent_type",
    "sniffed_type",
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
FILE_TYPES: Final = {
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/csv": ".csv",
    "text/tab-separated-values": ".tsv",
    "application/json": ".json",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "application/vnd.ms-excel": ".xls",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
}
"""Other document types the Responses API reads from an ``input_file`` (text, spreadsheets,
Word and PowerPoint files), with the extension its ``filename`` needs; Anthropic and Chat
take PDFs only, so these go to them as a note."""

MediaKind = Literal["image", "document", "audio", "file"]
ANTHROPIC_FIELDS: Final = "anthropic_fields"
"""``meta`` key of what an Anthropic image or document part held beside its source
(``title``, ``citations``, ``context``): sent back to Anthropic with the media."""

_SIGNATURES: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"ID3", "audio/mpeg"),
)
_CHECKED: Final = IMAGE_TYPES | DOCUMENT_TYPES | AUDIO_FORMATS.keys()
"""Declared types whose bytes are checked before they are sent as that type."""
UNRECOGNISED: Final = "application/octet-stream"


def sniffed_type(data: bytes) -> str | None:
    """The media type ``data`` holds by its first bytes: png, jpeg, gif or webp image,
    PDF, wav or mp3 audio (None: none of those)."""
    for signature, mime in _SIGNATURES:
        if data.startswith(signature):
            return mime
    if data[:4] == b"RIFF" and data[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if data[8:12] == b"WEBP" else "audio/wav"
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0:  # an MPEG audio frame
        return "audio/mpeg"
    return None


def sent_type(block: Block) -> str:
    """The media type ``block``'s bytes go out as. A declared image, PDF or audio type
    is checked against the bytes: the type they really hold wins (a GIF declared as
    ``image/png`` goes as ``image/gif``), and bytes of no such type are not sent as media
    (``application/octet-stream``: a note names them). Bytes declared as something else
    keep the declared type; bytes declared as nothing (``application/octet-stream``) go
    as the type their signature shows (a PNG as the PNG; an MP3 only with its ID3 tag,
    since a frame header alone is two bytes any file may start with)."""
    declared = block.mime
    data = block.data
    if data is None:
        return declared
    if declared in _CHECKED:
        return sniffed_type(data) or UNRECOGNISED
    if declared == UNRECOGNISED:
        found = sniffed_type(data)
        weak = found == "audio/mpeg" and not data.startswith(b"ID3")  # two bytes of sync
        return found if found is not None and not weak else UNRECOGNISED
    return declared


def file_extension(mime: str) -> str:
    """The file name extension a provider reads ``mime`` by (``.pdf`` by default)."""
    return FILE_TYPES.get(mime, ".pdf")


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
    """How binary ``data`` can be sent (by :func:`sent_type`): as an image, a PDF
    document, audio, another document type the Responses API reads (``file``), or not
    at all."""
    if block.data is None:
        return None
    mime = sent_type(block)
    if mime in IMAGE_TYPES:
        return "image"
    if mime in DOCUMENT_TYPES:
        return "document"
    if mime in AUDIO_FORMATS:
        return "audio"
    if mime in FILE_TYPES:
        return "file"
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
