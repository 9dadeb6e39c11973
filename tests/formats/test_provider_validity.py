"""Every payload format is valid for its provider: strict SDK param types plus the rules
the types cannot express (tests/helpers/provider_rules.py), on thousands of generated timelines."""

from __future__ import annotations

import collections
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from tests.helpers.samples import PNG_1x1
from tests.helpers.timeline_gen import IMPORTS, SVG, payload_cases
from timeline import EmptyPromptError, HeuristicCounter, InvalidBlockError, Timeline, blocks
from timeline._model.names import provider_call_id, provider_tool_name
from timeline._tokens.payload import payload_tokens

CHECKS = {
    "anthropic": anthropic_errors,
    "document": anthropic_errors,
    "openai": chat_errors,
    "responses": responses_errors,
}
SEEDS = 300
FEATURES = (
    "'thinking'",
    "'redacted_thinking'",
    "'reasoning'",
    "'tool_result'",
    "'function_call_output'",
    "'input_image'",
    "'document'",
    "not sent: the provider",
    "[no result recorded",
    "[CONVERSATION SUMMARY]",
    "'is_error': True",
    "'server_tool_use'",
    "'web_search_call'",
    "'computer_call_output'",
    "'compaction'",
    "'mcp_tool_result'",
    "'file_id'",
    "https://example.com/",
)


@pytest.mark.slow
@pytest.mark.parametrize("tools", [False, True], ids=["without tools", "with tools"])
def test_generated_payloads_are_valid(tools: bool) -> None:
    """Thousands of payloads from the broad timeline generator pass the strict SDK
    validation and the provider rules, in all four formats, with and without tool
    definitions; ``view.tokens`` is never below a payload's own count."""
    counts: collections.Counter[str] = collections.Counter()
    imports_before = IMPORTS.copy()
    failures: list[str] = []
    for seed in range(SEEDS):
        for fmt, payload, tokens in payload_cases(seed, tools=tools):
            counts[fmt] += 1
            failures += [f"seed {seed} {fmt}: {e}" for e in CHECKS[fmt](payload)]
            if payload_tokens(payload, HeuristicCounter()) > tokens:
                failures.append(f"seed {seed} {fmt}: payload over view.tokens ({tokens})")
            counts["tools"] += isinstance(payload, dict) and "tools" in payload
            text = str(payload)
            for feature in FEATURES:
                counts[feature] += feature in text
    assert not failures, "\n".join(failures[:20])
    assert sum(counts[f] for f in CHECKS) >= 4_000
    assert min(counts[f] for f in CHECKS) >= 1_000
    assert all(counts[f] >= 20 for f in FEATURES), counts  # the generator covers them all
    assert (counts["tools"] >= 3_000) == tools
    imported = IMPORTS - imports_before
    assert all(imported[f] >= SEEDS // 2 for f in ("anthropic", "openai", "responses"))


def _tl(*items: Any) -> Timeline:
    tl = Timeline("v", token_counter=HeuristicCounter())
    tl.begin_turn()
    for item in items:
        tl.append(item)
    return tl


def _all(tl: Timeline, system: str = "sys") -> dict[str, Any]:
    view = tl.render(system)
    return {
        "anthropic": view.to_anthropic(),
        "document": view.to_document(),
        "openai": view.to_openai(),
        "responses": view.to_openai_responses(),
    }


BAD_CASES: list[tuple[str, Any, str]] = [
    ("anthropic", {"messages": []}, "no messages"),
    ("anthropic", {"messages": [{"role": "user", "content": "  "}]}, "empty text"),
    (
        "anthropic",
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "x", "zz": 1}]}]},
        "sdk",
    ),
    (
        "anthropic",
        {
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "a "},
            ]
        },
        "whitespace",
    ),
    (
        "anthropic",
        {
            "messages": [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "a:1", "name": "x", "input": {}}],
                },
            ]
        },
        "tool_use id",
    ),
    ("openai", [{"role": "user", "content": ""}], "empty content"),
    (
        "openai",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "a.b", "arguments": "{}"}}
                ],
            },
        ],
        "tool name",
    ),
    (
        "responses",
        [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "a"}],
            }
        ],
        "sdk",
    ),
    (
        "responses",
        [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA"}],
            }
        ],
        "sdk",
    ),
    (
        "responses",
        [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}],
        "no output",
    ),
]


@pytest.mark.parametrize(("fmt", "payload", "expected"), BAD_CASES)
def test_rules_catch_invalid_payloads(fmt: str, payload: Any, expected: str) -> None:
    """The validator rejects payloads the provider rejects (so a pass means something)."""
    errors = CHECKS[fmt](payload)
    assert any(expected in e for e in errors), errors


def test_nothing_to_send_raises_typed_error() -> None:
    """A timeline with no sendable message raises EmptyPromptError in every format."""
    tl = _tl(blocks.user_prompt("   "))
    view = tl.render("system")
    for build in (view.to_anthropic, view.to_openai, view.to_openai_responses):
        with pytest.raises(EmptyPromptError):
            build()


def test_blank_text_never_sent_and_final_assistant_stripped() -> None:
    """Blank prompts/completions are left out; the final assistant text loses its
    trailing whitespace; a blank tool output gets a placeholder."""
    tl = _tl(blocks.user_prompt("hi"), blocks.user_prompt(""))
    call = tl.append(blocks.tool_call("bash", {}))
    tl.append(blocks.tool_result(call.call_id or "", " ", is_error=True))
    tl.append(blocks.assistant_completion("answer \n"))
    tl.append(blocks.assistant_completion("\n"))
    payloads = _all(tl)
    for fmt, payload in payloads.items():
        assert not CHECKS[fmt](payload), fmt
    last = payloads["anthropic"]["messages"][-1]
    assert last["content"] == [{"type": "text", "text": "answer"}]
    assert payloads["openai"][-1]["content"] == "answer"
    result = payloads["anthropic"]["messages"][2]["content"][0]
    assert result["content"] == "[the tool returned no output]"
    assert result["is_error"] is True


def test_foreign_names_and_ids_map_consistently() -> None:
    """A foreign call id and an unsafe tool name map to the same safe form for the call
    and its result, in every format."""
    tl = _tl(blocks.user_prompt("go"))
    tl.append(blocks.tool_call("functions.fs_read", {"p": 1}, call_id="functions.fs_read:0"))
    tl.append(blocks.tool_result("functions.fs_read:0", "data"))
    safe_id = provider_call_id("functions.fs_read:0")
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", safe_id)
    payloads = _all(tl)
    a = payloads["anthropic"]["messages"]
    assert a[1]["content"][0]["id"] == a[2]["content"][0]["tool_use_id"] == safe_id
    assert a[1]["content"][0]["name"] == "functions_fs_read"
    chat = payloads["openai"]
    assert chat[2]["tool_calls"][0]["id"] == chat[3]["tool_call_id"] == safe_id
    resp = payloads["responses"]
    assert resp[2]["call_id"] == resp[3]["call_id"] == safe_id
    assert resp[2]["name"] == "functions_fs_read"


@given(st.text(min_size=1, max_size=120))
def test_provider_names_always_fit(value: str) -> None:
    """Any string maps to a valid tool name and call id; valid ones stay unchanged."""
    name, call_id = provider_tool_name(value), provider_call_id(value)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", call_id)
    assert provider_tool_name(name) == name
    assert provider_call_id(call_id) == call_id


def test_unaccepted_media_becomes_a_note_and_text_is_kept() -> None:
    """An svg or docx attachment becomes a text note; an image with text keeps both."""
    tl = _tl(
        blocks.user_prompt("look"),
        blocks.user_attachment(name="pic.svg", mime="image/svg+xml", data=SVG),
        blocks.user_attachment(name="cap.png", mime="image/png", data=PNG_1x1, text="caption"),
    )
    payloads = _all(tl)
    content = payloads["anthropic"]["messages"][0]["content"]
    assert [p["type"] for p in content] == ["text", "text", "text", "image"]
    assert "pic.svg (image/svg+xml, " in content[1]["text"] and "not sent" in content[1]["text"]
    assert content[2]["text"] == "[ATTACHMENT cap.png]\ncaption"
    user = payloads["responses"][-1]["content"]
    assert user[-1]["type"] == "input_image" and user[-1]["detail"] == "auto"


def test_tool_result_images_reach_every_format() -> None:
    """An image a tool returned is sent: inside the result (Anthropic, Responses) or in
    the user message right after the tool messages (Chat)."""
    tl = _tl(blocks.user_prompt("screenshot please"))
    call = tl.append(blocks.tool_call("screenshot", {}))
    tl.append(blocks.tool_result(call.call_id or "", "here", mime="image/png", data=PNG_1x1))
    payloads = _all(tl)
    for fmt, payload in payloads.items():
        assert not CHECKS[fmt](payload), fmt
    result = payloads["anthropic"]["messages"][2]["content"][0]["content"]
    assert [p["type"] for p in result] == ["text", "image"]
    chat = payloads["openai"]
    assert chat[3]["role"] == "tool" and chat[3]["content"] == "here"
    assert chat[4]["role"] == "user" and chat[4]["content"][1]["type"] == "image_url"
    output = payloads["responses"][3]["output"]
    assert [p["type"] for p in output] == ["input_text", "input_image"]
    doc = payloads["document"]["messages"][0]["content"]
    assert any(p["type"] == "image" for p in doc)


@pytest.mark.parametrize("bad", ["", "a b", "x\n", 7, "z" * 129])
def test_id_factory_cannot_produce_an_invalid_id(bad: Any) -> None:
    """An id_factory returning an empty, spaced, non-str or huge id is refused with a
    typed error and the timeline is unchanged."""
    tl = Timeline("i", token_counter=HeuristicCounter(), id_factory=lambda kind, seq: bad)
    with pytest.raises(InvalidBlockError, match="id_factory"):
        tl.begin_turn()
    assert tl.blocks == ()


def test_generated_call_ids_are_provider_safe() -> None:
    """A call id generated from an id_factory id with unsafe characters is provider-safe."""
    tl = Timeline("i", token_counter=HeuristicCounter(), id_factory=lambda k, n: f"{k}:{n}")
    tl.begin_turn()
    call = tl.append(blocks.tool_call("bash", {}))
    assert call.call_id == provider_call_id("call_block:2")
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", call.call_id or "")
