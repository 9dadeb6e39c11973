"""Importers read every shape the formats send: Responses input items, Chat assistant
content as text parts, Anthropic thinking and images inside tool results; the system
prompt comes back with the timeline."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from tests.helpers.samples import PNG_1x1
from timeline import HeuristicCounter, InvalidBlockError, Timeline, blocks
from timeline._io.importers import import_conversation
from timeline._model.reasoning import anthropic_thinking, openai_reasoning

PNG_URL = "data:image/png;base64," + base64.b64encode(PNG_1x1).decode()
THINKING = {"type": "thinking", "thinking": "Look first.", "signature": "c2ln"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}


def _source_timeline() -> Timeline:
    tl = Timeline("src", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("take a screenshot"))
    tl.append(anthropic_thinking(THINKING))
    tl.append(openai_reasoning(REASONING))
    call = tl.append(blocks.tool_call("screenshot", {"full": True}, call_id="call_1"))
    tl.append(blocks.tool_result(call.call_id or "", "here", mime="image/png", data=PNG_1x1))
    tl.append(blocks.assistant_completion("It shows a dot."))
    tl.begin_turn()
    tl.append(blocks.user_prompt("thanks"))
    return tl


@pytest.mark.parametrize(
    ("fmt", "build"),
    [
        ("anthropic", lambda v: v.to_anthropic()),
        ("openai", lambda v: v.to_openai()),
        ("responses", lambda v: v.to_openai_responses()),
    ],
)
def test_payload_import_round_trips(fmt: str, build: Any) -> None:
    """Importing a payload and rendering it again gives the same payload, system prompt,
    thinking/reasoning and tool-result images included."""
    payload = build(_source_timeline().render("Be brief."))
    imported = import_conversation(payload, fmt, "copy")  # type: ignore[arg-type]
    assert imported.system == "Be brief."
    assert build(imported.timeline.render(imported.system)) == payload


def test_responses_items_import() -> None:
    """Easy and typed messages, instructions, developer text, function calls, outputs
    with images and reasoning items all import; the payload is valid again."""
    data = {
        "instructions": "Be brief.",
        "input": [
            {"role": "developer", "content": "Use tools."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "assistant", "content": "hello"},
            {**REASONING, "status": "completed"},
            {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [
                    {"type": "input_text", "text": "ok"},
                    {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
                ],
            },
        ],
    }
    imported = import_conversation(data, "responses", "r")
    assert imported.system == "Be brief.\n\nUse tools."
    assert imported.system_messages == 2
    types = [b.type for b in imported.timeline.blocks if b.type != "turn.header"]
    assert types == [
        "user.prompt",
        "assistant.completion",
        "assistant.reasoning",
        "react.tool.call",
        "react.tool.result",
        "react.tool.result",
    ]
    items = imported.timeline.render(imported.system).to_openai_responses()
    assert not responses_errors(items)
    assert items[3] == REASONING


def test_chat_assistant_text_parts_and_system() -> None:
    """Chat assistant content given as a list of text parts imports as one completion;
    system messages become the returned system prompt."""
    data = [
        {"role": "system", "content": [{"type": "text", "text": "Sys."}]},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
    ]
    imported = import_conversation(data, "openai", "c")
    assert imported.system == "Sys."
    assert imported.timeline.blocks[-1].text == "a\nb"
    assert not chat_errors(imported.timeline.render(imported.system).to_openai())


def test_anthropic_thinking_and_tool_result_images() -> None:
    """Anthropic thinking blocks and images inside tool_result content import and render
    back to Anthropic unchanged."""
    image = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(PNG_1x1).decode(),
        },
    }
    data = {
        "system": "Sys.",
        "messages": [
            {"role": "user", "content": "look"},
            {
                "role": "assistant",
                "content": [
                    THINKING,
                    {"type": "tool_use", "id": "t1", "name": "shot", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [image]}],
            },
        ],
    }
    imported = import_conversation(data, "anthropic", "a")
    assert imported.system == "Sys."
    payload = imported.timeline.render(imported.system).to_anthropic()
    assert not anthropic_errors(payload)
    assert payload["messages"][1]["content"][0] == THINKING
    assert payload["messages"][2]["content"][0]["content"] == [image]


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ([{"type": 5, "id": "x"}], "input[0].type"),
        ([{"role": "user", "content": [{"type": "input_audio"}]}], "input[0].content[0]"),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], "input[0]"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": 5}], "arguments"),
        ([{"type": "reasoning"}], "input[0]"),
        (5, "input"),
    ],
)
def test_bad_responses_input_is_refused(data: Any, where: str) -> None:
    """Malformed Responses input raises InvalidBlockError naming the item."""
    with pytest.raises(InvalidBlockError, match=where.replace("[", r"\[").replace("]", r"\]")):
        import_conversation(data, "responses", "bad")


def test_chat_tool_call_id_of_the_wrong_type_is_named_once() -> None:
    """A non-string tool_call_id is refused with the field's location, said once (it was
    "messages[1]: messages[1].tool_call_id: ...")."""
    data = [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": 3, "content": "y"}]
    with pytest.raises(InvalidBlockError) as err:
        import_conversation(data, "openai", "bad")
    assert str(err.value) == "messages[1].tool_call_id: expected a string, got a number"


@pytest.mark.slow
def test_cli_imports_responses_input(tmp_path: Path) -> None:
    """``timeline import --format responses`` stores Responses input with its system
    prompt; it renders back."""
    payload = _source_timeline().render("Be brief.").to_openai_responses()
    src = tmp_path / "responses.json"
    src.write_text(json.dumps({"input": payload}))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    run = [sys.executable, "-m", "timeline"]
    out = subprocess.run(
        [*run, "import", str(src), "--format", "responses", "--db", db, "--conversation", "r"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "its system prompt (1 system message, 9 chars) is kept with it" in out.stdout
    out = subprocess.run(  # the conversation's own system prompt: no --system needed
        [*run, "render", "r", "--db", db, "--format", "responses"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == payload
