"""Tool-call arguments that are not a JSON object (models write broken JSON, and the Chat
and Responses APIs send it back as written): an import keeps the call and its text, the
provider it came from gets the text back exactly, other providers see it whole under
``"_raw"``; the ReAct driver keeps it too and answers the call with an error result.
Before, an import refused the whole file and the driver stored ``{"_invalid": true}``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.adversarial.cli_files import ARGUMENTS_TEXTS
from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import Timeline
from timeline._cli import main
from timeline._driver import ModelReply, ReactDriver, ToolCallRequest
from timeline._io.importers import import_conversation

CASES = [pytest.param(text, id=name) for name, text in ARGUMENTS_TEXTS.items()]


def _chat(arguments: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": arguments}}
    return [
        {"role": "user", "content": "list it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "error: bad arguments"},
    ]


def _responses(arguments: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "list it"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": arguments},
        {"type": "function_call_output", "call_id": "c1", "output": "error: bad arguments"},
    ]


def _call(tl: Timeline) -> Any:
    (call,) = [b for b in tl.blocks if b.type == "react.tool.call"]
    return call


@pytest.mark.parametrize("text", CASES)
def test_chat_import_keeps_the_text_and_sends_it_back_exactly(text: str) -> None:
    imported = import_conversation(_chat(text), "openai", "c")
    assert json.loads(_call(imported.timeline).text) == {"_raw": text}
    view = imported.timeline.render("sys")
    chat = view.to_openai()
    (sent,) = [m for m in chat if m.get("tool_calls")]
    assert sent["tool_calls"][0]["function"]["arguments"] == text
    assert not chat_errors(chat)
    anthropic = view.to_anthropic()
    assert not anthropic_errors(anthropic)
    (use,) = [p for m in anthropic["messages"] for p in m["content"] if p["type"] == "tool_use"]
    assert use["input"] == {"_raw": text}  # nothing lost on the way to another provider


@pytest.mark.parametrize("text", CASES)
def test_responses_import_keeps_the_text_and_sends_it_back_exactly(text: str) -> None:
    imported = import_conversation(_responses(text), "responses", "r")
    assert json.loads(_call(imported.timeline).text) == {"_raw": text}
    items = imported.timeline.render("sys").to_openai_responses()
    (sent,) = [i for i in items if i.get("type") == "function_call"]
    assert sent["arguments"] == text
    assert not responses_errors(items)


def test_cli_import_stores_the_call(tmp_path: Path) -> None:
    """The file imports (it was refused) and the stored call holds the text."""
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(_chat("{oops")))
    db = tmp_path / "s.db"
    assert main(["import", str(src), "--db", str(db), "--conversation", "c"]) == 0
    store = index_store.open(f"sqlite:///{db}")
    try:
        tl = Timeline.load(store, "c")
    finally:
        store.close()
    assert json.loads(_call(tl).text) == {"_raw": "{oops"}
    sent = [m for m in tl.render("s").to_openai() if m.get("tool_calls")]
    assert sent[0]["tool_calls"][0]["function"]["arguments"] == "{oops"


def test_arguments_that_are_not_a_string_are_still_refused() -> None:
    """No provider sends an object there: that file is malformed, not a model's slip."""
    data = _chat("{}")
    data[1]["tool_calls"][0]["function"]["arguments"] = {"a": 1}
    with pytest.raises(Exception, match=r"function\.arguments: expected a JSON string"):
        import_conversation(data, "openai", "c")


def test_driver_keeps_the_text_and_answers_with_an_error() -> None:
    """A call whose arguments are not a JSON object is recorded with its text and gets an
    error result; the tool does not run."""
    replies = iter(
        [
            ModelReply(tool_calls=(ToolCallRequest("bash", "[1, 2]", "c1"),)),
            ModelReply(tool_calls=(ToolCallRequest("bash", '{"c": NaN}', "c2"),)),
            ModelReply(text="done"),
        ]
    )
    ran: list[Mapping[str, Any]] = []
    tl = Timeline("d")
    driver = ReactDriver(tl, lambda v: next(replies), {"bash": lambda p: ran.append(p) or "ok"})
    driver.run_turn("go")
    calls = [json.loads(b.text) for b in tl.blocks if b.type == "react.tool.call"]
    assert calls == [{"_raw": "[1, 2]"}, {"_raw": '{"c": NaN}'}]
    results = [b.text for b in tl.blocks if b.type == "react.tool.result"]
    assert results == ["error: the tool arguments were not a valid JSON object"] * 2
    assert ran == []
