"""Media parts of imported messages: bytes (base64, ``data:`` URLs) become attachments,
URLs and file ids become references (nothing is fetched), anything else is kept as the
provider's own part."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from timeline._io._common import Builder, check_text, data_url, fail
from timeline._model import (
    ANTHROPIC_FIELDS,
    AUDIO_FORMATS,
    Block,
    Provider,
    provider_block,
    reference_meta,
    with_native,
)
from timeline._model import constructors as B

__all__ = [
    "anthropic_media",
    "attachment_from",
    "chat_audio",
    "native_result",
    "result_media",
    "user_file",
    "user_image",
]

_AUDIO_MIME = {fmt: mime for mime, fmt in reversed(AUDIO_FORMATS.items())}


def _decode(data: Any, where: str) -> bytes:
    try:
        return base64.b64decode(check_text(data, where), validate=True)
    except binascii.Error as exc:
        raise fail(where, f"invalid base64 data: {exc}") from exc


def _detail(part: Mapping[str, Any]) -> dict[str, Any]:
    detail = part.get("detail")
    return {"detail": detail} if isinstance(detail, str) else {}


def user_image(url: str, where: str, b: Builder, extra: Mapping[str, Any]) -> None:
    """An image in a user message: bytes from a ``data:`` URL, else a URL reference."""
    if url.startswith("data:"):
        b.attach(*data_url(url, where), **extra)
    else:
        b.refer(where, extra=extra, media="image", url=check_text(url, where))


def user_file(part: Mapping[str, Any], where: str, b: Builder, provider: Provider) -> None:
    """A file part (Chat ``file.*``, Responses ``input_file``): its bytes, a URL or a file
    id on the provider's store."""
    name = str(part.get("filename") or "")
    if part.get("file_data"):
        mime, data = data_url(str(part["file_data"]), where)
        b.attach(mime, data, name)
    elif part.get("file_url"):
        b.refer(where, name, media="document", url=str(part["file_url"]))
    elif part.get("file_id"):
        b.refer(where, name, media="document", file_id=str(part["file_id"]), provider="openai")
    else:
        raise fail(where, "a file part needs file_data, file_url or file_id")
    del provider  # every file part above is OpenAI's


def chat_audio(part: Mapping[str, Any], where: str, b: Builder) -> None:
    """Chat ``input_audio``: the audio bytes as an attachment (wav or mp3)."""
    audio = part.get("input_audio")
    if not isinstance(audio, Mapping) or audio.get("format") not in _AUDIO_MIME:
        raise fail(f"{where}.input_audio", "expected data and a format of 'wav' or 'mp3'")
    data = _decode(audio.get("data"), f"{where}.input_audio.data")
    b.attach(_AUDIO_MIME[str(audio["format"])], data)


_MEDIA_KEYS = frozenset({"type", "source", "cache_control"})


def anthropic_media(part: Mapping[str, Any], where: str) -> dict[str, Any] | None:
    """The attachment fields of an Anthropic image or document (``mime`` and ``data``,
    ``text`` for a plain-text document, or a reference in ``meta``); None when it is
    kept as Anthropic's own part only (a content source, a source type never seen).
    What the part holds beside its source (citations, context, a title) goes in
    ``meta`` (:data:`~timeline._model.media.ANTHROPIC_FIELDS`): Anthropic gets it back
    with the source, the other formats the media alone."""
    source = part.get("source")
    if not isinstance(source, Mapping):  # no provider takes that: refused, field named
        raise fail(f"{where}.source", "expected an object with a 'type'")
    kind = source.get("type")
    media = "image" if part.get("type") == "image" else "document"
    title = {"name": part["title"]} if isinstance(part.get("title"), str) else {}
    extras = {k: v for k, v in part.items() if k not in _MEDIA_KEYS}
    kept = {ANTHROPIC_FIELDS: extras} if extras else {}
    if kind == "base64":
        mime = check_text(source.get("media_type", ""), f"{where}.source.media_type")
        data = _decode(source.get("data", ""), f"{where}.source.data")
        return {"mime": mime, "data": data, "meta": kept, **title}
    if kind == "text":
        text = check_text(source.get("data", ""), f"{where}.source.data")
        return {"mime": str(source.get("media_type") or "text/plain"), "text": text, **title}
    if kind == "url":
        url = check_text(source.get("url"), f"{where}.source.url")
        return {"meta": {**reference_meta(media, url=url), **kept}, **title}
    if kind == "file":
        file_id = check_text(source.get("file_id"), f"{where}.source.file_id")
        ref = reference_meta(media, file_id=file_id, provider="anthropic")
        return {"meta": {**ref, **kept}, **title}
    return None


def _mime(fields: Mapping[str, Any]) -> str:
    media = fields.get("meta", {}).get("media")
    default = "image/*" if media == "image" else "application/octet-stream"
    return str(fields.get("mime") or default)


def attachment_from(fields: Mapping[str, Any], name: str) -> Block:
    """A user attachment from :func:`anthropic_media`'s fields."""
    return Block(
        type="user.attachment",
        text=fields.get("text", ""),
        author="user",
        mime=_mime(fields),
        data=fields.get("data"),
        meta={"name": fields.get("name") or name, **fields.get("meta", {})},
    )


def result_media(call_id: str, fields: Mapping[str, Any], is_error: bool) -> Block:
    """A further result block of ``call_id`` holding media (bytes or a reference)."""
    return B.tool_result(
        call_id,
        fields.get("text", ""),
        is_error=is_error,
        mime=_mime(fields),
        data=fields.get("data"),
        **fields.get("meta", {}),
    )


def native_result(call_id: str, provider: Provider, part: Any, is_error: bool) -> Block:
    """A further result block of ``call_id`` keeping a result part of a kind the library
    has no block for (a search result, a document with citations): the provider gets it
    back exactly, the others its text form."""
    text = provider_block(provider, part, kind=str(part.get("type") or "part")).text
    return with_native(B.tool_result(call_id, text, is_error=is_error), provider, part)
