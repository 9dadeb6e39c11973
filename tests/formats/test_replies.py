"""SDK responses in: converters from the anthropic/openai SDK objects to ModelReply and
blocks, and thinking/reasoning blocks sent back to their provider exactly."""

from __future__ import annotations

import enum
from typing import Any

import pydantic
import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from tests.helpers.replies import CHAT, REASONING, RESPONSE
from timeline import (
    HeuristicCounter,
    InvalidBlockError,
    InventorySummarizer,
    SlidingWindowSummarizer,
    SummaryRequest,
    Timeline,
    blocks,
)
from timeline._compaction import valid_cuts
from timeline._driver import ModelReply, ReactDriver
from timeline._formats.reply import reply_blocks
from timeline._model.reasoning import anthropic_thinking

THINKING = {"type": "thinking", "thinking": "Check the file first.", "signature": "sig+/=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
ANTHROPIC_MESSAGE = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        THINKING,
        REDACTED,
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_01A", "name": "read_file", "input": {"path": "a.py"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 50,
    },
}


def _timeline_with(reply: ModelReply) -> Timeline:
    tl = Timeline("r", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("read a.py"))
    stored = tl.extend(reply_blocks(reply))
    for b in stored:
        if b.type == "react.tool.call":
            tl.append(blocks.tool_result(b.call_id or "", "print(1)"))
    return tl


def test_anthropic_message_round_trips_exactly() -> None:
    """A Message with thinking, redacted thinking, text and tool_use converts to a reply
    whose blocks render back as the same assistant content, byte for byte."""
    reply = ModelReply.from_anthropic(Message.model_validate(ANTHROPIC_MESSAGE))
    assert reply.finish_reason == "tool_use"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (1150, 20)  # type: ignore[union-attr]
    assert reply.text == "Reading it."
    assert [c.call_id for c in reply.tool_calls] == ["toolu_01A"]
    payload = _timeline_with(reply).render("sys").to_anthropic()
    assert not anthropic_errors(payload)
    assert payload["messages"][1] == {"role": "assistant", "content": ANTHROPIC_MESSAGE["content"]}


def test_responses_reasoning_round_trips() -> None:
    """A Response's reasoning item goes back in the next Responses input unchanged
    (less the output-only status), right before its function call."""
    reply = ModelReply.from_openai_responses(Response.model_validate(RESPONSE))
    assert reply.finish_reason == "tool_calls"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (300, 40)  # type: ignore[union-attr]
    items = _timeline_with(reply).render("sys").to_openai_responses()
    assert not responses_errors(items)
    assert items[2] == REASONING
    assert items[3]["type"] == "function_call" and items[3]["call_id"] == "call_01"


def test_chat_completion_converts() -> None:
    """A ChatCompletion's tool calls, usage and finish reason convert; the Chat payload
    built from the blocks is valid."""
    reply = ModelReply.from_openai_chat(ChatCompletion.model_validate(CHAT))
    assert reply.finish_reason == "tool_calls"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 7)  # type: ignore[union-attr]
    messages = _timeline_with(reply).render("sys").to_openai()
    assert not chat_errors(messages)
    assert messages[2]["tool_calls"][0]["id"] == "call_9"


def test_reasoning_only_reaches_its_own_provider() -> None:
    """Thinking is absent from Chat, Document, text and other-provider payloads, from
    summaries and from the text a store indexes, yet counts in the budget."""
    anthropic_reply = ModelReply.from_anthropic(ANTHROPIC_MESSAGE)
    responses_reply = ModelReply.from_openai_responses(RESPONSE)
    tl = _timeline_with(anthropic_reply)
    tl.extend(reply_blocks(responses_reply))
    tl.append(blocks.tool_result("call_01", "print(2)"))
    tl.append(blocks.assistant_completion("Done."))
    view = tl.render("sys")
    secret = ("signature", "sig+/==", "EmwKAhgB", "gAAAAAB", "Check the file", "rs_01")
    for built in (view.to_openai(), view.to_document(), view.to_text()):
        assert not any(s in str(built) for s in secret)
    assert "rs_01" not in str(view.to_anthropic()) and "gAAAAAB" in str(view.to_openai_responses())
    assert "EmwKAhgB" not in str(view.to_openai_responses())
    thinking = [b for b in tl.blocks if b.type.startswith("assistant.") and b.data]
    assert len(thinking) == 3 and all(b.text == "" for b in thinking)
    assert all(tl.block_tokens(b) > 5 for b in thinking)
    for summarizer in (InventorySummarizer(), SlidingWindowSummarizer()):
        summary = summarizer.summarize(SummaryRequest("history", tl.blocks))
        assert not any(s in summary for s in secret)


def test_thinking_without_following_content_is_not_sent() -> None:
    """Thinking is sent only ahead of the assistant content it came with: a trailing
    thinking block alone never forms a message."""
    tl = Timeline("t", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    tl.append(anthropic_thinking(THINKING))
    payload = tl.render("").to_anthropic()
    assert payload == {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "thinking", "thinking": "x"},
        {"type": "redacted_thinking"},
        {"type": "text", "text": "x"},
        "thinking",
    ],
)
def test_bad_thinking_items_are_refused(bad: Any) -> None:
    """A thinking item without its signature/data, or not a thinking item, is refused."""
    with pytest.raises(InvalidBlockError):
        anthropic_thinking(bad)


def test_unknown_content_is_kept_not_refused_nor_dropped() -> None:
    """A reply holding content the timeline does not model keeps it exactly, as an
    opaque block that goes back to Anthropic in its place (issue #24: it was refused)."""
    part = {"type": "server_tool_use", "id": "s", "name": "x", "input": {}}
    message = {**ANTHROPIC_MESSAGE, "content": [{"type": "text", "text": "a"}, part]}
    reply = ModelReply.from_anthropic(message)
    assert [b.type for b in reply_blocks(reply)] == ["assistant.completion", "provider.item"]
    payload = _timeline_with(reply).render("").to_anthropic()
    sent = payload["messages"][1]["content"][1]
    assert {k: v for k, v in sent.items() if k != "cache_control"} == part


def test_driver_runs_a_tool_called_by_its_provider_name() -> None:
    """A tool whose name the payloads map (``functions.read``) runs when the model calls
    it by the mapped name, and its thinking lands before the call."""
    replies = iter(
        [
            ModelReply.from_anthropic(
                {
                    **ANTHROPIC_MESSAGE,
                    "content": [
                        THINKING,
                        {"type": "tool_use", "id": "t1", "name": "functions_read", "input": {}},
                    ],
                }
            ),
            ModelReply(text="done"),
        ]
    )
    tl = Timeline("d", model="claude-sonnet-4", token_counter=HeuristicCounter())
    driver = ReactDriver(tl, lambda view: next(replies), tools={"functions.read": lambda p: "ok"})
    assert driver.run_turn("go").text == "done"
    types = [b.type for b in tl.blocks]
    assert types[2:5] == ["assistant.thinking", "react.tool.call", "react.tool.result"]
    assert tl.blocks[4].text == "ok" and not tl.blocks[4].meta.get("is_error")


def test_no_cut_between_thinking_and_its_call() -> None:
    """Compaction never cuts right after a thinking block (it stays with its call)."""
    tl = Timeline("c", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("go"))
    tl.append(anthropic_thinking(THINKING))
    call = tl.append(blocks.tool_call("bash", {}))
    tl.append(blocks.tool_result(call.call_id or "", "ok"))
    tl.append(blocks.assistant_completion("done"))
    valid = valid_cuts(tl.blocks, 0)
    assert valid[2] and not valid[3] and valid[5]


@pytest.mark.parametrize("url", ["memory://", "sqlite:///:memory:"])
def test_thinking_survives_persist_and_load_and_is_not_searchable(url: str) -> None:
    """Thinking/reasoning blocks persist and load byte-exact (the payload after load is
    the same) and their content is not found by search."""
    import index_store

    reply = ModelReply.from_anthropic(ANTHROPIC_MESSAGE)
    tl = _timeline_with(reply)
    tl.extend(reply_blocks(ModelReply.from_openai_responses(RESPONSE)))
    tl.append(blocks.tool_result("call_01", "print(2)"))
    before = (tl.render("s").to_anthropic(), tl.render("s").to_openai_responses())
    store = index_store.open(url)
    try:
        tl.persist(store)
        loaded = Timeline.load(store, "r", token_counter=HeuristicCounter())
        after = (loaded.render("s").to_anthropic(), loaded.render("s").to_openai_responses())
        assert after == before
        assert not store.search("r", "signature")
        assert not store.search("r", "encrypted")
        assert not store.search("r", "Check")
        assert store.search("r", "print")  # results are searchable: search works here
    finally:
        store.close()


def test_an_anthropic_reply_that_is_no_message_says_so() -> None:
    with pytest.raises(InvalidBlockError, match=r"^expected an SDK Message or its dict form"):
        ModelReply.from_anthropic(42)


def test_an_anthropic_text_part_without_text_is_an_empty_completion() -> None:
    """A text part with no "text" key reads as "" (not "None" or a placeholder)."""
    reply = ModelReply.from_anthropic(
        {"content": [{"type": "text"}, {"type": "text", "text": "hi"}], "stop_reason": "x"}
    )
    assert [b.text for b in reply.content] == ["", "hi"]
    assert reply.text == "hi"


class _Kind(enum.Enum):
    TEXT = "text"


class _TextPart(pydantic.BaseModel):
    type: _Kind
    text: str


class _Message(pydantic.BaseModel):
    content: list[_TextPart]
    stop_reason: str


def test_an_sdk_reply_is_read_in_its_json_form() -> None:
    """An SDK object is dumped with ``mode="json"``, so a field held as an enum reads as
    its value ("text"); any other mode keeps the enum and the part is not recognized."""
    reply = ModelReply.from_anthropic(
        _Message(content=[_TextPart(type=_Kind.TEXT, text="hi")], stop_reason="end_turn")
    )
    assert reply.text == "hi"
    assert [b.type for b in reply.content] == ["assistant.completion"]
