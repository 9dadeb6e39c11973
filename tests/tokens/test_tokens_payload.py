"""payload_tokens, the rule every payload is held to, on payloads whose count is worked
out by hand (one token per character, so each figure below can be checked by reading)."""

from __future__ import annotations

from typing import Any

from tests.helpers.token_payloads import PNG_B64, Chars
from timeline._tokens.payload import payload_tokens

"""A PNG header of 300x250 pixels: 100 image tokens (24 bytes: 8 as bytes)."""


class PerCall:
    """One token per call, whatever the text: shows which strings are counted at all."""

    def count(self, text: str) -> int:
        return 1


def test_the_text_layout_is_one_string() -> None:
    """to_text() and to_document() text: the string's own count."""
    assert payload_tokens("hello world", Chars()) == 11


def test_an_anthropic_payload() -> None:
    """System parts 1 each, messages 3 each, content parts 1 each; texts, ids, names and
    tool input (as compact JSON) counted; type, role, cache_control, media_type not;
    signatures and redacted thinking at one token per 3 characters, plus one; images by
    their header."""
    payload: dict[str, Any] = {
        "system": [
            {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "rules"},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "abcdefghij"},
                    {"type": "tool_use", "id": "c1", "name": "ls", "input": {"b": 1, "a": "x"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "c1",
                        "content": "out",
                        "is_error": False,
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "redacted_thinking", "data": "QUJDREVG" * 2}],
            },
        ],
    }
    system = (1 + 3) + (1 + 5)
    messages = [
        3 + 1 + 2,
        3 + (1 + 3 + (10 // 3 + 1)) + (1 + 2 + 2 + len('{"b":1,"a":"x"}')),
        3 + 1 + 2 + 3,
        3 + 1 + 100,
        3 + 1 + (16 // 3 + 1),
    ]
    assert system + sum(messages) == payload_tokens(payload, Chars())
    assert system == payload_tokens({"system": payload["system"]}, Chars())


def test_an_openai_chat_payload() -> None:
    """A list of messages, 3 each; string content, tool-call ids, names and argument text
    counted, one per tool call; a data: URL image by its header."""
    payload = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "see ;base64,abc"},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
            ],
        },
    ]
    expected = (3 + 3) + (3 + 2) + (3 + 1 + 2 + 2 + 2) + (3 + 2 + 15) + (3 + 1 + 100)
    assert expected == payload_tokens(payload, Chars())


def test_nested_lists_charge_one_per_object_only() -> None:
    """An element of a nested list costs one when it is an object (a part), nothing when
    it is a bare string."""
    assert payload_tokens([{"role": "user", "content": ["a", "bc"]}], Chars()) == 3 + 1 + 2


def test_empty_strings_cost_nothing_with_any_counter() -> None:
    """Only the framing is charged for a part whose text is empty."""
    message = {"role": "user", "content": [{"type": "text", "text": ""}]}
    assert payload_tokens({"messages": [message]}, PerCall()) == 3 + 1


def test_undecodable_base64_counts_as_opaque_text() -> None:
    """Base64 that does not decode (a stray character) is charged like an opaque field,
    never decoded leniently."""
    source = {"type": "base64", "media_type": "application/octet-stream", "data": "!!!QUJD"}
    part = {"type": "document", "source": source}
    assert payload_tokens([{"role": "user", "content": [part]}], Chars()) == 3 + 1 + (8 // 3 + 1)


def test_other_data_strings_are_counted_as_text() -> None:
    """Only an image/document source, audio input or redacted thinking is charged by
    size; another object's ``data`` is a string like any other."""
    part = {"type": "custom_part", "payload": {"data": "QUJD", "format": "wav"}}
    assert payload_tokens([{"role": "user", "content": [part]}], Chars()) == 3 + 1 + 4 + 3


def test_audio_input_is_charged_by_duration() -> None:
    """Chat ``input_audio`` is binary like an image source: its decoded bytes by their
    duration (bytes that are no readable clip: as if at 16 kbit/s, never below one
    token), its format as text; not its base64 as text."""
    part = {"type": "input_audio", "input_audio": {"data": "QUJDREVG", "format": "wav"}}
    assert payload_tokens([{"role": "user", "content": [part]}], Chars()) == 3 + 1 + 1 + 3


def test_referenced_media_is_estimated_like_an_unreadable_image() -> None:
    """An image or document by URL or file id (never fetched): the reference as text plus
    the estimate of an image whose size cannot be read (1,600) or a one-page PDF (1,500)."""
    url = "https://x.io/a.png"
    parts = [
        {"type": "image", "source": {"type": "url", "url": url}},
        {"type": "document", "source": {"type": "file", "file_id": "file_1"}},
    ]
    expected = 3 + (1 + len(url) + 1600) + (1 + 6 + 1500)
    assert payload_tokens({"messages": [{"role": "user", "content": parts}]}, Chars()) == expected
    chat = [
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "file", "file": {"file_id": "f"}},
    ]
    assert payload_tokens([{"role": "user", "content": chat}], Chars()) == 3 + (
        1 + len(url) + 1600
    ) + (1 + 1 + 1500)
    responses = [
        {"type": "input_image", "image_url": url, "detail": "auto"},
        {"type": "input_image", "file_id": "f", "detail": "auto"},
        {"type": "input_file", "file_url": url},
    ]
    expected = 3 + (1 + len(url) + 1600) + (1 + 1 + 1600) + (1 + len(url) + 1500)
    assert payload_tokens([{"role": "user", "content": responses}], Chars()) == expected
