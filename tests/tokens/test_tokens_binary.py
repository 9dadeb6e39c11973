"""Token estimates of binary attachments, read from the image headers: exact figures for
PNG, GIF and JPEG headers of known sizes, the shortest header each format can be read
from, and what is not an image header."""

from __future__ import annotations

import struct

import pytest

from timeline._tokens import binary_token_estimate

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


def wav(seconds: float, rate: int = 16_000, width: int = 2, extra: bytes = b"") -> bytes:
    """A mono PCM WAV of ``seconds`` of silence (``extra``: chunks before the data)."""
    data = b"\x00" * int(seconds * rate * width)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * width, width, 8 * width)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + extra
    body += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def mp3(frames: int, bitrate_index: int = 9, id3: bytes = b"") -> bytes:
    """``frames`` MPEG-1 layer III frames at 44.1 kHz (index 9: 128 kbit/s), each 1,152
    samples, zero-filled; ``id3``: a tag before them."""
    kbps = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)[bitrate_index]
    length = 144 * kbps * 1000 // 44_100
    header = bytes([0xFF, 0xFB, bitrate_index << 4, 0x00])
    return id3 + (header + b"\x00" * (length - 4)) * frames


def id3_tag(size: int) -> bytes:
    """An ID3v2 tag holding ``size`` bytes (its size as four 7-bit bytes)."""
    syncsafe = bytes((size >> shift) & 0x7F for shift in (21, 14, 7, 0))
    return b"ID3\x04\x00\x00" + syncsafe + b"\xff\xfb\x90\x00" * (size // 4)


class TestAudioByDuration:
    """Audio costs what OpenAI bills it: 10 tokens a second of its duration."""

    def test_a_wav_by_its_data_chunk(self) -> None:
        """A minute of 16 kHz mono WAV (1.9 MB) is 600 tokens, not one per 3 bytes; a
        chunk before the data is skipped by its size."""
        assert binary_token_estimate(wav(60), "audio/wav") == 600
        assert (
            binary_token_estimate(wav(2.5, extra=b"LIST\x03\x00\x00\x00abc\x00"), "audio/wav") == 25
        )

    def test_a_streamed_wav_counts_the_bytes_it_holds(self) -> None:
        """A WAV whose data chunk declares more than the file holds (a stream) counts
        what is there."""
        clip = bytearray(wav(3))
        at = clip.index(b"data") + 4
        clip[at : at + 4] = b"\xff\xff\xff\xff"
        assert binary_token_estimate(bytes(clip), "audio/wav") == 30

    def test_an_mp3_by_its_frames(self) -> None:
        """An MP3's frames add up to its duration, an ID3 tag before them skipped; a
        frame length read wrong would stop the walk early."""
        assert binary_token_estimate(mp3(383), "audio/mpeg") == 101  # 10.005 s
        assert binary_token_estimate(mp3(383, id3=id3_tag(400)), "audio/mpeg") == 101
        assert binary_token_estimate(mp3(100, bitrate_index=1), "audio/mpeg") == 27

    def test_unreadable_audio_counts_as_16_kbit_per_second(self) -> None:
        """Audio whose duration cannot be read counts as if it ran at 16 kbit/s."""
        assert binary_token_estimate(b"\x00" * 20_000, "audio/ogg") == 100
        assert binary_token_estimate(wav(1)[:30], "audio/wav") == 1


def webp(kind: bytes, width: int, height: int) -> bytes:
    """The header a WebP's size is read from, for each of its three encodings."""
    if kind == b"VP8 ":
        payload = b"\x00" * 3 + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    elif kind == b"VP8L":
        bits = (width - 1) | (height - 1) << 14
        payload = b"\x2f" + bits.to_bytes(4, "little")
    else:
        payload = (
            b"\x00" * 4 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
        )
    body = b"WEBP" + kind + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize("kind", [b"VP8 ", b"VP8L", b"VP8X"])
def test_webp_tokens_from_the_header(kind: bytes) -> None:
    """A WebP's size is read from each of its encodings (300x250: 100 tokens)."""
    assert binary_token_estimate(webp(kind, 300, 250), "image/webp") == 100


def test_pdf_pages_however_they_are_written() -> None:
    """Page objects written without a space count; a PDF whose pages sit in compressed
    object streams counts its page tree's /Count; with neither, a page per 50 kB."""
    assert (
        binary_token_estimate(b"%PDF-1.7 /Type/Pages /Type/Page /Type/Page", "application/pdf")
        == 3000
    )
    compressed = b"%PDF-1.7 << /Type /Pages /Kids [4 0 R] /Count 12 >> stream..."
    assert binary_token_estimate(compressed, "application/pdf") == 18_000
    assert binary_token_estimate(b"%PDF-1.7" + b"\x00" * 120_000, "application/pdf") == 4500
