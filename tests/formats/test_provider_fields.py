"""What goes back to a provider is what its request schema takes, and no content is lost
on the way to another: reasoning items without an id, output-only fields, media whose
bytes disagree with their declared type, documents each provider reads, audio counted by
its duration."""

from __future__ import annotations

import base64
import struct
import warnings
from typing import Any

from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from tests.helpers.samples import PNG_1x1
from timeline import Block, CompactionPolicy, HeuristicCounter, Timeline, blocks
from timeline._compaction.policy import NoBudgetWarning
from timeline._driver import ModelReply
from timeline._io.importers import import_conversation
from timeline._render.context import RenderedContext

GIF_1x1 = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///ywAAAAAAQABAAACAUwAOw==")
PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
REASONING = {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB-opaque"}


def _view(data: Any, fmt: str) -> RenderedContext:
    imported = import_conversation(data, fmt, "c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)
        return imported.timeline.render(imported.system)


def _valid(view: RenderedContext) -> None:
    assert anthropic_errors(view.to_anthropic()) == []
    assert chat_errors(view.to_openai()) == []
    assert responses_errors(view.to_openai_responses()) == []


class TestReasoningWithoutId:
    def test_imports_and_goes_back_exactly(self) -> None:
        """A reasoning item a ``store: false`` client sent (no ``id``) imports and goes
        back to Responses exactly, in its place; the others never see it."""
        data = [
            {"role": "user", "content": "hi"},
            REASONING,
            {"type": "message", "role": "assistant", "content": "hello"},
            {"role": "user", "content": "and?"},
        ]
        view = _view(data, "responses")
        items = view.to_openai_responses()
        assert items[1] == REASONING
        assert "gAAAAB" not in str(view.to_openai()) + str(view.to_anthropic())

    def test_a_reply_carrying_one_is_converted(self) -> None:
        """``ModelReply.from_openai_responses`` keeps such an item as reasoning."""
        reply = ModelReply.from_openai_responses(
            {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "output": [
                    REASONING,
                    {"type": "message", "role": "assistant", "id": "msg_1", "content": []},
                ],
            }
        )
        assert [b.type for b in reply.reasoning] == ["assistant.reasoning"]

    def test_one_with_neither_id_nor_content_is_refused(self) -> None:
        """A reasoning item with nothing to resume from is no item a provider produced."""
        import pytest

        from timeline import InvalidBlockError

        with pytest.raises(InvalidBlockError, match=r"input\[1\]"):
            import_conversation(
                [{"role": "user", "content": "hi"}, {"type": "reasoning"}], "responses", "c"
            )


class TestOutputOnlyFields:
    def test_a_custom_tool_call_goes_back_without_its_status(self) -> None:
        """A ``custom_tool_call`` recorded with ``status`` (the input schema has none)
        goes back without it, everything else as received; the payload validates."""
        call = {
            "call_id": "call_1",
            "input": "print(3**3)",
            "name": "execute_code",
            "type": "custom_tool_call",
            "id": "ctc_1",
            "status": "completed",
        }
        output = {"type": "custom_tool_call_output", "call_id": "call_1", "output": "27"}
        data = [{"role": "user", "content": "run it"}, call, output]
        items = _view(data, "responses").to_openai_responses()
        sent = [i for i in items if i.get("type") == "custom_tool_call"]
        assert sent == [{k: v for k, v in call.items() if k != "status"}]
        assert responses_errors(items) == []

    def test_a_function_call_with_a_null_status_goes_back_without_it(self) -> None:
        """A ``function_call`` recorded with ``"status": null`` goes back without the
        status (null is refused), its other fields as received."""
        call = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get",
            "arguments": '{"a": 1}',
            "status": None,
        }
        data = [
            {"role": "user", "content": "go"},
            call,
            {"type": "function_call_output", "call_id": "call_1", "output": "1"},
        ]
        items = _view(data, "responses").to_openai_responses()
        sent = [i for i in items if i.get("type") == "function_call"]
        assert sent == [{k: v for k, v in call.items() if k != "status"}]
        assert responses_errors(items) == []

    def test_an_output_only_creator_is_left_out(self) -> None:
        """``created_by`` (an output item's field) is left out of the item sent back."""
        item = {
            "type": "shell_call",
            "id": "sh_1",
            "call_id": "call_1",
            "action": {"commands": ["ls"]},
            "status": "completed",
            "created_by": "model",
        }
        answer = {"type": "shell_call_output", "call_id": "call_1", "output": []}
        data = [{"role": "user", "content": "list"}, item, answer]
        items = _view(data, "responses").to_openai_responses()
        assert [i for i in items if i.get("type") == "shell_call"] == [
            {k: v for k, v in item.items() if k != "created_by"}
        ]


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _chat_image(mime: str, data: bytes) -> list[dict[str, Any]]:
    url = _data_url(mime, data)
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
    ]


class TestMediaBytes:
    def test_an_image_declared_with_another_type_goes_as_its_real_type(self) -> None:
        """GIF bytes in a data URL declaring ``image/png``: every provider gets them as
        ``image/gif``."""
        view = _view(_chat_image("image/png", GIF_1x1), "openai")
        source = view.to_anthropic()["messages"][0]["content"][1]["source"]
        assert source["media_type"] == "image/gif"
        chat = view.to_openai()[0]["content"][1]["image_url"]["url"]
        responses = view.to_openai_responses()[0]["content"][1]["image_url"]
        assert chat.startswith("data:image/gif;") and responses.startswith("data:image/gif;")
        _valid(view)

    def test_bytes_of_no_image_are_a_note(self) -> None:
        """Text bytes declared as ``image/png`` are sent to no provider as an image: a
        note names them, and every payload is valid."""
        view = _view(_chat_image("image/png", b"not an image at all"), "openai")
        _valid(view)
        for text in (str(view.to_anthropic()), str(view.to_openai()), view.to_text()):
            assert "its bytes are not image/png" in text or "not sent" in text
        assert "'image'" not in str(view.to_anthropic())

    def test_an_untyped_png_goes_as_a_png(self) -> None:
        """PNG bytes declared as ``application/octet-stream`` go as a PNG image."""
        tl = Timeline(
            "m", token_counter=HeuristicCounter(), policy=CompactionPolicy(max_tokens=9000)
        )
        tl.begin_turn()
        tl.append(blocks.user_attachment(name="x", mime="application/octet-stream", data=PNG_1x1))
        tl.append(blocks.user_prompt("what is it?"))
        source = tl.render("").to_anthropic()["messages"][0]["content"][0]["source"]
        assert source["media_type"] == "image/png"

    def test_untyped_bytes_that_only_start_like_audio_stay_a_note(self) -> None:
        """Bytes declared as nothing that merely begin with an MPEG frame header (two
        bytes any file may start with) are not sent as audio."""
        tl = Timeline(
            "m", token_counter=HeuristicCounter(), policy=CompactionPolicy(max_tokens=9000)
        )
        tl.begin_turn()
        data = b"\xff\xfb\x90\x00" + b"not audio" * 10
        tl.append(blocks.user_attachment(name="x.bin", mime="application/octet-stream", data=data))
        tl.append(blocks.user_prompt("what is it?"))
        chat = tl.render("").to_openai()
        assert "input_audio" not in str(chat) and "x.bin" in str(chat)


class TestDocuments:
    def test_an_anthropic_pdf_with_citations_converts(self) -> None:
        """An Anthropic base64 PDF with citations on: Anthropic gets the part exactly,
        Chat a ``file`` and Responses an ``input_file``, both holding the PDF."""
        part = {
            "type": "document",
            "source": {
                "type": "base64",
                "media_type": "application/pdf",
                "data": base64.b64encode(PDF).decode(),
            },
            "title": "sample.pdf",
            "citations": {"enabled": True},
        }
        data = {
            "messages": [{"role": "user", "content": [part, {"type": "text", "text": "sum up"}]}]
        }
        view = _view(data, "anthropic")
        assert view.to_anthropic()["messages"][0]["content"][0] == part
        chat = view.to_openai()[0]["content"][0]
        assert chat["type"] == "file" and chat["file"]["file_data"].startswith(
            "data:application/pdf;"
        )
        responses = view.to_openai_responses()[0]["content"][0]
        assert responses["type"] == "input_file"
        assert responses["file_data"] == _data_url("application/pdf", PDF)
        _valid(view)

    def test_a_spreadsheet_goes_to_responses_as_a_file(self) -> None:
        """An xlsx ``input_file`` goes back to Responses as that file (name and bytes);
        Chat and Anthropic, which read PDFs only, get a note naming it."""
        part = {
            "type": "input_file",
            "filename": "sales.xlsx",
            "file_data": _data_url(XLSX, b"PK\x03\x04sheet"),
        }
        data = [{"role": "user", "content": [{"type": "input_text", "text": "total?"}, part]}]
        view = _view(data, "responses")
        assert part in view.to_openai_responses()[0]["content"]
        assert "sales.xlsx" in str(view.to_openai()) and "sales.xlsx" in str(view.to_anthropic())
        assert "input_file" not in str(view.to_anthropic())
        _valid(view)

    def test_an_unnamed_document_is_named_by_its_type(self) -> None:
        """A CSV attachment without a name goes to Responses as ``attachment.csv``."""
        tl = Timeline(
            "d", token_counter=HeuristicCounter(), policy=CompactionPolicy(max_tokens=9000)
        )
        tl.begin_turn()
        tl.append(Block(type="user.attachment", author="user", mime="text/csv", data=b"a,b\n1,2\n"))
        tl.append(blocks.user_prompt("sum b"))
        part = tl.render("").to_openai_responses()[0]["content"][0]
        assert part["type"] == "input_file" and part["filename"] == "attachment.csv"


def _wav(seconds: float, rate: int = 16_000) -> bytes:
    data = b"\x00" * int(seconds * rate * 2)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    body = b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def test_an_audio_clip_counts_its_duration_in_the_budget() -> None:
    """A conversation of four messages whose last turn holds a 30-second clip (960 kB)
    fits an 8,000-token budget, the clip still sent: it counts 10 tokens a second, not
    one per 3 bytes."""
    clip = base64.b64encode(_wav(30)).decode()
    audio = {"type": "input_audio", "input_audio": {"data": clip, "format": "wav"}}
    data = [
        {"role": "user", "content": "I will send a recording."},
        {"role": "assistant", "content": "Ready."},
        {"role": "user", "content": [{"type": "text", "text": "what is said?"}, audio]},
        {"role": "assistant", "content": "Nothing: it is silence."},
    ]
    imported = import_conversation(data, "openai", "a")
    tl = imported.timeline
    tl.policy = CompactionPolicy(max_tokens=8_000)
    view = tl.render("")
    assert view.compaction is None
    assert view.to_openai()[2]["content"][1] == audio
    assert 300 <= view.tokens < 1_000
