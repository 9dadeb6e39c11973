"""A counter that counts characters and an image in base64, for the payload counting tests."""

from __future__ import annotations

import base64
import struct

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + struct.pack(">II", 300, 250)


PNG_B64 = base64.b64encode(PNG).decode()


class Chars:
    """One token per character."""

    def count(self, text: str) -> int:
        return len(text)
