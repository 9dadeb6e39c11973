"""Token estimates of binary attachments (images, PDFs, other bytes), read from their
headers without decoding them."""

from __future__ import annotations

import math
import struct

__all__ = ["binary_token_estimate"]


def _image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF or JPEG header, without decoding the image."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    if data[:2] == b"\xff\xd8":
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


def binary_token_estimate(data: bytes, mime: str) -> int:
    """Estimated prompt tokens of a binary attachment (never zero).

    Images: Anthropic's ``w*h/750`` after downscaling to at most ~1.15 megapixels
    (1,600 tokens when the size cannot be read). PDFs: ~1,500 tokens a page. Other
    binaries: one token per 3 bytes, as if sent base64-encoded text.
    """
    if mime.startswith("image/"):
        size = _image_size(data)
        if size is None:
            return 1600
        w, h = size
        return max(1, min(1600, math.ceil(w * h / 750)))
    if mime == "application/pdf":
        pages = max(1, data.count(b"/Type /Page") - data.count(b"/Type /Pages"))
        return 1500 * pages
    return max(1, len(data) // 3)
