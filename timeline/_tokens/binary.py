"""Token estimates of binary attachments, the way providers bill them: images by their
pixel size, PDFs by their pages, audio by its duration. Each is read from the file's
headers without decoding it; when it cannot be read, a stated fallback applies (see
:func:`binary_token_estimate`)."""

from __future__ import annotations

import math
import re
import struct
from typing import Final

__all__ = ["AUDIO_TOKENS_PER_SECOND", "binary_token_estimate"]

IMAGE_FALLBACK: Final = 1600
"""An image whose size cannot be read: the most Anthropic charges for one."""
PDF_PAGE_TOKENS: Final = 1500
PDF_BYTES_PER_PAGE: Final = 50_000
"""A PDF whose pages cannot be counted: one page per 50 kB (at least one)."""
AUDIO_TOKENS_PER_SECOND: Final = 10
"""OpenAI bills input audio at one token per 100 ms."""
AUDIO_FALLBACK_BYTES_PER_SECOND: Final = 2_000
"""Audio whose duration cannot be read: counted as if it ran at 16 kbit/s, below any
usual speech recording, so the estimate errs high."""

_PAGE: Final = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_PAGE_COUNT: Final = re.compile(
    rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b"
)


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        i += 2 + int(length)
    return None


def _image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF, JPEG or WebP header, without decoding it."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def _pdf_pages(data: bytes) -> int:
    """Page objects, else the page tree's ``/Count`` (page objects inside compressed
    object streams cannot be seen), else one page per 50 kB."""
    pages = len(_PAGE.findall(data))
    if pages:
        return pages
    counts = [int(a or b) for a, b in _PAGE_COUNT.findall(data)]
    if counts:
        return max(1, max(counts))
    return max(1, math.ceil(len(data) / PDF_BYTES_PER_PAGE))


def _wav_seconds(data: bytes) -> float | None:
    """A RIFF/WAVE file's duration: its data chunk over the format's bytes a second."""
    i, rate = 12, 0
    while i + 8 <= len(data):
        tag, size = data[i : i + 4], int.from_bytes(data[i + 4 : i + 8], "little")
        if tag == b"fmt " and i + 20 <= len(data):
            rate = int.from_bytes(data[i + 16 : i + 20], "little")
        elif tag == b"data":
            available = len(data) - i - 8  # a streamed file may declare more than it holds
            return min(size, available) / rate if rate else None
        i += 8 + size + (size & 1)
    return None


_MPEG_RATES: Final = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
_MPEG1_L3: Final = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_MPEG2_L3: Final = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)


def _mp3_frame(header: bytes) -> tuple[int, float] | None:
    """Length in bytes and duration in seconds of the MPEG layer III frame ``header``
    opens (None: not such a frame)."""
    if len(header) < 4 or header[0] != 0xFF or header[1] & 0xE0 != 0xE0:
        return None
    version, layer = (header[1] >> 3) & 3, (header[1] >> 1) & 3
    bitrate_index, rate_index = header[2] >> 4, (header[2] >> 2) & 3
    if version == 1 or layer != 1 or not 0 < bitrate_index < 15 or rate_index == 3:
        return None
    rate = _MPEG_RATES[version][rate_index]
    table, samples = (_MPEG1_L3, 1152) if version == 3 else (_MPEG2_L3, 576)
    bitrate = table[bitrate_index] * 1000
    length = samples // 8 * bitrate // rate + ((header[2] >> 1) & 1)
    return length, samples / rate


def _mp3_seconds(data: bytes) -> float | None:
    """An MP3's duration: the sum of its frames (an ID3 tag at the start skipped)."""
    i = 0
    if data[:3] == b"ID3" and len(data) >= 10:
        size = 0
        for byte in data[6:10]:
            size = size << 7 | (byte & 0x7F)
        i = 10 + size + (10 if data[5] & 0x10 else 0)
    seconds, frames = 0.0, 0
    while True:
        frame = _mp3_frame(data[i : i + 4])
        if frame is None or frame[0] <= 0:
            break
        seconds += frame[1]
        frames += 1
        i += frame[0]
    return seconds if frames else None


def _audio_seconds(data: bytes) -> float | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return _wav_seconds(data)
    return _mp3_seconds(data)


def binary_token_estimate(data: bytes, mime: str) -> int:
    """Estimated prompt tokens of a binary attachment (never zero).

    Images: Anthropic's ``w*h/750`` after downscaling to at most ~1.15 megapixels
    (1,600 tokens when the size cannot be read). PDFs: ~1,500 tokens a page (pages
    counted as :func:`_pdf_pages` says). Audio: 10 tokens a second of its duration (a
    WAV's data chunk, an MP3's frames), or, when that cannot be read, as if it ran at
    16 kbit/s. Other binaries: one token per 3 bytes, as if sent base64-encoded text.
    """
    if mime.startswith("image/"):
        size = _image_size(data)
        if size is None:
            return IMAGE_FALLBACK
        w, h = size
        return max(1, min(IMAGE_FALLBACK, math.ceil(w * h / 750)))
    if mime == "application/pdf":
        return PDF_PAGE_TOKENS * _pdf_pages(data)
    if mime.startswith("audio/"):
        seconds = _audio_seconds(data)
        if seconds is None:
            seconds = len(data) / AUDIO_FALLBACK_BYTES_PER_SECOND
        return max(1, math.ceil(seconds * AUDIO_TOKENS_PER_SECOND))
    return max(1, len(data) // 3)
