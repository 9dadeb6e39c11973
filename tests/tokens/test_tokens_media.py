"""Edges of the payload rule for media (``timeline._tokens.walk``): which parts are charged
as a referenced image or document, and how malformed ones are charged. One token per
character, so each figure can be checked by reading. Written against mutants that the
broader tests let through."""

from __future__ import annotations

import base64
from typing import Any

from tests.helpers.token_payloads import PNG_B64, Chars
from timeline import (
    CompactionPolicy,
    Timeline,
    blocks,
)
from timeline._tokens.walk import REFERENCE_TOKENS, walk

COUNT = Chars().count
PDF = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4 /Type /Page").decode()


def test_a_file_by_id_is_a_referenced_document() -> None:
    """Responses ``input_file`` by ``file_id``: the id as text plus a one-page PDF."""
    part = {"type": "input_file", "file_id": "file-abc"}
    assert walk(part, COUNT) == REFERENCE_TOKENS["document"] + len("file-abc") == 1500 + 8


def test_a_file_with_neither_url_nor_id_is_not_a_reference() -> None:
    """An ``input_file`` naming only a file name is charged as its text, nothing more."""
    assert walk({"type": "input_file", "filename": "a.pdf"}, COUNT) == len("a.pdf")


def test_a_file_with_its_bytes_is_charged_by_the_bytes_only() -> None:
    """An ``input_file`` carrying ``file_data`` is estimated from the data, never also as
    a referenced document (whatever else it names)."""
    part = {"type": "input_file", "file_data": PDF, "file_id": "file-abc"}
    assert walk(part, COUNT) == walk(PDF, COUNT) + len("file-abc") == 1500 + 8


def test_an_inline_image_is_not_a_reference() -> None:
    """A Responses ``input_image`` with a base64 ``data:`` URL and no file id: the image
    as decoded (a 300x250 PNG: 100 tokens), no reference estimate on top."""
    url = f"data:image/png;base64,{PNG_B64}"
    assert walk({"type": "input_image", "image_url": url}, COUNT) == walk(url, COUNT) == 100


def test_a_url_containing_base64_is_still_remote() -> None:
    """Only a ``data:`` URL with ``;base64,`` is inline: an https URL that happens to
    contain ``;base64,`` is a reference (its text plus an unreadable image)."""
    url = "https://x.io/a;base64,b.png"
    assert walk({"type": "input_image", "image_url": url}, COUNT) == len(url) + 1600
    chat = {"type": "image_url", "image_url": {"url": url}}
    assert walk(chat, COUNT) == len(url) + 1600


def test_a_chat_image_url_that_is_not_an_object_is_only_text() -> None:
    """A malformed Chat ``image_url`` (a bare string instead of ``{"url": ...}``) is
    charged as text, never as a reference, and never raises."""
    url = "https://x.io/a.png"
    assert walk({"type": "image_url", "image_url": url}, COUNT) == len(url)


def test_input_audio_is_binary_only_in_an_input_audio_part() -> None:
    """An ``input_audio`` mapping under another part type is ordinary text."""
    audio = {"data": "QUJDREVG", "format": "wav"}
    assert walk({"type": "input_audio", "input_audio": audio}, COUNT) == 1 + 3
    assert walk({"type": "custom", "input_audio": audio}, COUNT) == 8 + 3


def test_a_data_url_is_split_at_its_first_base64_marker() -> None:
    """Everything after the first ``;base64,`` is the data: when it does not decode (it
    holds a second marker) it is charged like opaque text, one token per 3 characters."""
    data = "QUJD;base64,QUJD"
    assert walk(f"data:image/png;base64,{data}", COUNT) == len(data) // 3 + 1


def test_a_tool_result_referencing_an_image_costs_the_image() -> None:
    """A result holding an image by URL costs its text plus the image's fixed estimate."""
    costs = []
    refs: list[dict[str, Any]] = [{}, {"media": "image", "url": "https://example.com/c.png"}]
    for meta in refs:
        tl = Timeline("m", policy=CompactionPolicy(max_tokens=50_000))
        tl.begin_turn()
        call = tl.append(blocks.tool_call("plot", {}))
        tl.append(blocks.tool_result(call.call_id or "", "done", **meta))
        view = tl.render("")
        costs.append(view.block_tokens[-1])
    assert costs[1] >= costs[0] + REFERENCE_TOKENS["image"]
