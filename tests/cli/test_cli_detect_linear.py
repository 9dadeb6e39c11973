"""``timeline import`` detects the format with reads sized as the import's (#28 item 5):
one long string costs a few reads of growing size, not one 4 KiB read per step of a
parser that lexes the string again from its start at every read (the time of a 200 MiB
string's import: docs/benchmarks.md, store section)."""

from __future__ import annotations

import io
import json
from typing import Any

from timeline._cli.importing import detect_format


class CountingReads(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads = 0

    def read(self, size: int | None = -1) -> bytes:
        self.reads += 1
        return super().read(size)

    def readinto(self, buffer: Any) -> int:
        self.reads += 1
        return super().readinto(buffer)


def _file(messages: Any) -> CountingReads:
    return CountingReads(json.dumps(messages).encode())


def test_a_long_string_costs_a_few_reads_and_the_format_after_it_is_found() -> None:
    long = "make the retry loop back off " * 300_000  # 8.7 MB in one string
    fh = _file(
        [
            {"role": "user", "content": long},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x"}]},
        ]
    )
    assert detect_format(fh) == "anthropic"
    assert fh.reads < 40  # 4 KiB reads would be over 2,000
    assert fh.tell() == 0  # rewound for the import


def test_a_bom_and_a_deep_document_do_not_stop_detection_with_an_error() -> None:
    bom = CountingReads(b"\xef\xbb\xbf" + json.dumps([{"role": "tool", "content": "x"}]).encode())
    assert detect_format(bom) == "openai"
    deep = CountingReads(b"[" * 500 + b"]" * 500)
    assert detect_format(deep) is None  # the import says what is wrong with it
