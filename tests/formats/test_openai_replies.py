"""Edges of ``ModelReply.from_openai_chat`` / ``from_openai_responses``
(``timeline._formats.openai_reply``): the text (content or refusal), the calls, the
finish reason when the response leaves it out or stops early, and the
errors. Every response is validated by the SDK's own model first, so the shapes are the
ones the client returns. Written against mutants that the broader tests let through."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from tests.helpers.replies import CHAT, RESPONSE
from timeline import InvalidBlockError
from timeline._driver import ModelReply
from timeline._formats.reply import ToolCallRequest


def chat(message: dict[str, Any], **choice: Any) -> ModelReply:
    data = {
        **CHAT,
        "choices": [{"index": 0, "finish_reason": "stop", **choice, "message": message}],
    }
    return ModelReply.from_openai_chat(ChatCompletion.model_validate(data))


def responses(output: list[dict[str, Any]], **fields: Any) -> ModelReply:
    data = {**RESPONSE, "output": output, **fields}
    return ModelReply.from_openai_responses(Response.model_validate(data))


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class TestChat:
    def test_the_content_is_the_text(self) -> None:
        reply = chat({"role": "assistant", "content": "Hello.", "refusal": None})
        assert (reply.text, reply.tool_calls, reply.finish_reason) == ("Hello.", (), "stop")

    def test_a_refusal_is_the_text(self) -> None:
        reply = chat({"role": "assistant", "content": None, "refusal": "I can't help."})
        assert reply.text == "I can't help."

    def test_only_calls_means_no_text(self) -> None:
        message = {"role": "assistant", "content": None, "tool_calls": [call("c1", "ls", "{}")]}
        assert chat(message, finish_reason="tool_calls").text == ""

    def test_calls_keep_name_arguments_and_id_in_order(self) -> None:
        """Each function call: its name, its raw arguments (empty when none), its id."""
        calls = [call("c1", "read_file", '{"path":"a.py"}'), call("c2", "ls", "")]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        assert chat(message, finish_reason="tool_calls").tool_calls == (
            ToolCallRequest("read_file", '{"path":"a.py"}', "c1"),
            ToolCallRequest("ls", "", "c2"),
        )

    def test_untyped_and_custom_calls(self) -> None:
        """A call without a type is a function call; a custom tool call keeps its tool's
        name and its input as the params."""
        untyped = {"id": "c1", "function": {"name": "ls", "arguments": "{}"}}
        custom = {"id": "c2", "type": "custom", "custom": {"name": "grammar", "input": "x"}}
        completion = {
            **CHAT,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "tool_calls": [untyped, custom]},
                }
            ],
        }
        reply = ModelReply.from_openai_chat(completion)
        assert reply.tool_calls == (
            ToolCallRequest("ls", "{}", "c1"),
            ToolCallRequest("grammar", {"input": "x"}, "c2"),
        )

    def test_a_missing_finish_reason_is_stop(self) -> None:
        completion = {
            **CHAT,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
        }
        assert ModelReply.from_openai_chat(completion).finish_reason == "stop"

    def test_errors(self) -> None:
        with pytest.raises(InvalidBlockError) as err:
            ModelReply.from_openai_chat(42)
        assert str(err.value) == "expected an SDK ChatCompletion or its dict form, not int"
        with pytest.raises(InvalidBlockError) as err:
            ModelReply.from_openai_chat({**CHAT, "choices": []})
        assert str(err.value) == "the ChatCompletion has no choices"


def message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": list(parts),
    }


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


FUNCTION_CALL: dict[str, Any] = RESPONSE["output"][1]  # type: ignore[index]


class TestResponses:
    def test_text_parts_and_refusals_join_in_order(self) -> None:
        """Every message part adds its text, or its refusal, with no separator (an empty
        part adds nothing)."""
        reply = responses(
            [
                message(output_text("Hello, "), output_text("world.")),
                message({"type": "refusal", "refusal": " No."}, output_text("")),
            ]
        )
        assert (reply.text, reply.tool_calls, reply.finish_reason) == (
            "Hello, world. No.",
            (),
            "stop",
        )

    def test_calls_keep_name_arguments_and_id(self) -> None:
        no_args = {**FUNCTION_CALL, "id": "fc_2", "call_id": "call_2", "arguments": ""}
        reply = responses([FUNCTION_CALL, no_args])
        assert reply.tool_calls == (
            ToolCallRequest("read_file", '{"path":"a.py"}', "call_01"),
            ToolCallRequest("read_file", "", "call_2"),
        )
        assert (reply.text, reply.finish_reason) == ("", "tool_calls")

    def test_an_incomplete_response_says_why(self) -> None:
        """The finish reason of an incomplete response is its reason, else "incomplete",
        even when it holds calls."""
        cut = responses(
            [message(output_text("Part"))],
            status="incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        )
        assert (cut.text, cut.finish_reason) == ("Part", "max_output_tokens")
        bare = responses([FUNCTION_CALL], status="incomplete")
        assert bare.finish_reason == "incomplete" and bare.tool_calls

    def test_errors(self) -> None:
        with pytest.raises(InvalidBlockError) as err:
            ModelReply.from_openai_responses([])
        assert str(err.value) == "expected an SDK Response or its dict form, not list"
        broken = {**RESPONSE, "output": [message(output_text("ok")), "oops"]}
        with pytest.raises(InvalidBlockError) as err:
            ModelReply.from_openai_responses(broken)
        assert str(err.value) == "output[1]: expected an object"
