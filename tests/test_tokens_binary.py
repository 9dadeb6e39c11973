"""Token estimates of binary attachments, read from the image headers: exact figures for
PNG, GIF and JPEG headers of known sizes, the shortest header each format can be read
from, and what is not an image header."""

from __future__ import annotations

import struct

import pytest

from timeline.tokens import binary_token_estimate

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png(width: int, height: int) -> bytes:
    """The 24 bytes a PNG's size is read from: signature, IHDR length and type, w, h."""
    return PNG_SIGNATURE + b"\x00\x00\x00\x0dIHDR" + struct.pack(">II", width, height)


def gif(version: bytes, width: int, height: int) -> bytes:
    """The 10 bytes a GIF's size is read from."""
    return version + struct.pack("<HH", width, height)


FAKE_FRAME = b"\x08\x00\x01\x00\x01"
"""Frame-header data of a 1x1 image: read from a marker that is not a frame header, it
would give 1 token."""


FAKE_SOF = b"\xff\xc0\x00\x11" + FAKE_FRAME
"""A whole 1x1 frame header, hidden inside another segment's data."""


def segment(marker: int, payload: bytes) -> bytes:
    """A JPEG segment: FF, marker, big-endian length (itself included), payload."""
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg(width: int, height: int, sof: int = 0xC0, before: bytes = b"") -> bytes:
    """SOI, an APP0 segment, ``before``, the frame header giving the size, one more byte
    (the least after a frame header the reader needs). The APP0 data holds what looks
    like a 1x1 frame header: a reader must skip segments by their length, not scan them."""
    fake = FAKE_SOF
    frame = segment(sof, b"\x08" + struct.pack(">HH", height, width) + b"\x03")[:9]
    return b"\xff\xd8" + segment(0xE0, b"JFIF\x00" + fake) + before + frame + b"\x00"


@pytest.mark.parametrize(
    ("data", "tokens"),
    [
        (png(300, 250), 100),
        (png(30, 25), 1),
        (png(3_000_000_000, 1), 1600),
        (png(1, 1)[:23], 1600),
        (gif(b"GIF87a", 300, 250), 100),
        (gif(b"GIF89a", 40_000, 15), 800),
        (gif(b"GIF89a", 300, 250) + b"\x2c" + b"\x00" * 20, 100),
        (gif(b"GIF89a", 300, 250)[:9], 1600),
        (jpeg(300, 250), 100),
        (jpeg(40_000, 15, sof=0xC2), 800),
        (jpeg(300, 250, before=segment(0xC4, b"\x00" * 20) + b"\x00"), 100),
        (jpeg(300, 250, before=segment(0xC8, b"") + segment(0xCC, b"\x00\x00")), 100),
        (jpeg(300, 250, sof=0xCF), 100),
        (
            jpeg(
                300,
                250,
                before=segment(0xDB, b"\x00" * 65) + segment(0xD0, b"\x08\x00\x01\x00\x01"),
            ),
            100,
        ),
        (jpeg(300, 250, before=segment(0xE1, b"Exif" + b"\x00" * 40_000 + FAKE_SOF)), 100),
        (jpeg(300, 250)[:-1], 1600),
        (b"\x00" * 30, 1600),
        (b"GIF90a" + b"\x00" * 30, 1600),
    ],
    ids=[
        "png",
        "png-tiny",
        "png-width-over-2**31",
        "png-cut-short",
        "gif87a",
        "gif89a-width-over-2**15",
        "gif-with-its-image-data",
        "gif-cut-short",
        "jpeg",
        "jpeg-progressive-width-over-2**15",
        "jpeg-after-a-huffman-table-and-a-fill-byte",
        "jpeg-after-arithmetic-coding-segments",
        "jpeg-last-frame-header-marker",
        "jpeg-after-a-quantization-table-and-a-marker-past-the-frame-range",
        "jpeg-after-a-40-KB-exif-segment",
        "jpeg-cut-short",
        "zeros",
        "unknown-gif-version",
    ],
)
def test_image_tokens_from_the_header(data: bytes, tokens: int) -> None:
    """w*h/750 rounded up, between 1 and 1,600; 1,600 when no size can be read."""
    assert tokens == binary_token_estimate(data, "image/png")


def test_other_binaries() -> None:
    """A PDF counts 1,500 a page (the /Pages catalogue is not a page); anything else one
    token per 3 bytes, and never zero."""
    pdf = b"%PDF-1.4 /Type /Pages /Type /Page x /Type /Page y"
    assert binary_token_estimate(pdf, "application/pdf") == 3000
    assert binary_token_estimate(b"%PDF-1.4", "application/pdf") == 1500
    assert binary_token_estimate(b"\x00" * 14, "application/octet-stream") == 4
    assert binary_token_estimate(b"", "application/octet-stream") == 1
    assert binary_token_estimate(png(300, 250), "application/octet-stream") == 8
