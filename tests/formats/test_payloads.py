"""What each payload format sends for one kind of block or one position in the prompt."""

from __future__ import annotations

import pytest

from timeline import (
    Block,
    CompactionPolicy,
    EmptyPromptError,
    Timeline,
    blocks,
)
from timeline._formats import part_text
from timeline._formats.text import to_text
from timeline.integrations.langchain import to_langchain


def test_an_empty_document_payload_says_nothing_to_send() -> None:
    view = Timeline("e", policy=CompactionPolicy(max_tokens=1_000)).render("sys")
    with pytest.raises(EmptyPromptError, match=r"^nothing to send: the rendered timeline holds"):
        view.to_document()


@pytest.mark.parametrize("detail", ["low", "high", "original"])
def test_an_image_keeps_the_detail_it_asks_for_in_responses(detail: str) -> None:
    tl = Timeline("i", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    png = b"\x89PNG\r\n\x1a\n0000"
    tl.append(blocks.user_attachment(name="a.png", mime="image/png", data=png, detail=detail))
    payload = tl.render("sys").to_openai_responses()
    parts = [p for m in payload for p in m["content"] if p["type"] == "input_image"]
    assert [p["detail"] for p in parts] == [detail]


def test_a_chat_tool_result_image_by_url_follows_in_a_user_message() -> None:
    """Chat takes an image by URL in a tool's output: it follows the ``tool`` message in
    a user message (Chat's tool messages hold text only)."""
    tl = Timeline("i", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("chart please"))
    call = tl.append(blocks.tool_call("plot", {}))
    url = "https://example.com/chart.png"
    tl.append(blocks.tool_result(call.call_id or "", "done", media="image", url=url))
    messages = tl.render("sys").to_openai()
    assert isinstance(messages, list)
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"][-1] == {"type": "image_url", "image_url": {"url": url}}


def test_the_document_payload_skips_thinking_and_keeps_what_follows() -> None:
    tl = Timeline("d", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("why?"))
    tl.append(blocks.anthropic_thinking({"type": "thinking", "thinking": "hmm", "signature": "s"}))
    tl.append(blocks.assistant_completion("Because the cache was cold."))
    payload = tl.render("sys").to_document()
    texts = [part.get("text", "") for part in payload["messages"][0]["content"]]
    assert any("Because the cache was cold." in t for t in texts)
    assert not any("hmm" in t for t in texts)


PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def test_an_orphaned_tool_result_is_shown_as_labelled_text() -> None:
    """A result whose call is gone renders as text naming its tool (nothing when it has
    none) and its call id."""
    assert part_text(blocks.tool_result("c1", "out")) == "[TOOL RESULT  call_id=c1]\nout"
    with_tool = blocks.tool_result("c1", "out", tool_id="bash")
    assert part_text(with_tool) == "[TOOL RESULT bash call_id=c1]\nout"


def test_an_attachment_as_a_text_part_says_its_bytes_are_not_sent() -> None:
    """An attachment of a type no provider takes (a zip) reaches LangChain as a text part
    that names it and says its bytes were not sent; a PDF goes as a file."""
    tl = Timeline("z", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("see the files"))
    tl.append(blocks.user_attachment(name="r.zip", mime="application/zip", data=b"PK\x03\x04"))
    tl.append(blocks.user_attachment(name="r.pdf", mime="application/pdf", data=PDF))
    parts = [
        part
        for message in to_langchain(tl.render("sys"))
        if isinstance(message.content, list)
        for part in message.content
    ]
    notes = [p["text"] for p in parts if p["type"] == "text" and "r.zip" in p["text"]]
    assert len(notes) == 1
    assert notes[0].endswith("not sent: the provider does not accept this type]")
    assert [p["mime_type"] for p in parts if p["type"] == "file"] == ["application/pdf"]


def test_a_pdf_attachment_in_the_text_format_is_not_called_unsent() -> None:
    """A PDF is a document every provider takes, so the text format names it without the
    "not sent" note it gives unsupported types."""
    pdf = blocks.user_attachment(name="r.pdf", mime="application/pdf", data=PDF)
    assert to_text("", [pdf]) == f"[USER ATTACHMENT r.pdf (application/pdf, {len(PDF)} bytes)]"


def _thinking() -> Block:
    return blocks.anthropic_thinking(
        {"type": "thinking", "thinking": "Let me see.", "signature": "s"}
    )


def test_thinking_at_the_very_end_of_the_prompt_is_not_sent() -> None:
    """Thinking travels only ahead of the assistant content it preceded: when the prompt
    ends on a thinking block after an assistant reply, the final assistant message holds
    the reply alone."""
    tl = Timeline("t", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Hi"))
    tl.append(blocks.assistant_completion("Hello."))
    tl.append(_thinking())
    messages = tl.render("sys").to_anthropic()["messages"]
    assert messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}
