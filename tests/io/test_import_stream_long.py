"""Streaming import of long strings (#28 item 5): linear in the length of one string.

ijson's C parser lexes a token split over reads again from its start on every read, so a
long string fed 4 KiB at a time cost quadratic time (20 MB took 22 s, 200 MB did not end
within 12 minutes). The reader now doubles its reads while the parser yields nothing, up
to the string's end: a few reads per long string, and every string, escapes included,
comes back exactly."""

from __future__ import annotations

import io
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from timeline._io.importers import import_messages
from timeline._io.stream import _Counting
from timeline._io.stream import import_file as stream_file


class _Reads(io.BytesIO):
    """Counts the reads the parser's reader makes of the file."""

    reads = 0

    def read(self, size: int | None = -1) -> bytes:
        self.reads += 1
        return super().read(size)


def test_a_long_string_is_read_in_a_few_reads() -> None:
    text = 'make the retry loop back off \\ " ✓ ' * 600_000  # ~20 MB of JSON
    raw = json.dumps([{"role": "user", "content": text}]).encode()
    file = _Reads(raw)
    tl, _ = stream_file(file, "openai", "c")
    assert [b.text for b in tl.blocks if b.type == "user.prompt"] == [text]
    assert file.reads < 64, file.reads  # 4 KiB reads took over 5,000


def test_a_reader_gives_back_every_byte_in_order() -> None:
    rng = random.Random(7)
    raw = bytes(rng.choice(b'ab"\\ ') for _ in range(300_000))
    reader = _Counting(io.BytesIO(raw), lambda n: None)
    out = []
    for i in range(10_000):
        reader.events += i % 3 == 0  # the parser yields events now and then
        chunk = reader.read(4096)
        if not chunk:
            break
        out.append(chunk)
    assert b"".join(out) == raw


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(['"', "\\", "a", " ", "\n", "é"]), max_size=30_000),
        min_size=1,
        max_size=4,
    )
)
def test_strings_with_quotes_and_backslashes_come_back_exactly(texts: list[str]) -> None:
    """Against the whole-document importer (``json.loads``), reads split anywhere."""
    messages = [{"role": "user", "content": t} for t in texts]
    raw = json.dumps(messages, ensure_ascii=False).encode()
    streamed, _ = stream_file(io.BytesIO(raw), "openai", "c")
    whole, _ = import_messages(messages, "openai", "c")
    assert [(b.type, b.text) for b in streamed.blocks] == [(b.type, b.text) for b in whole.blocks]
