"""Behaviours the survivors of the seed-24 mutation draw
(docs/dev/mutation-testing.md, "A fresh draw with the new tests") showed untested; each
test was checked to fail with its mutant applied by hand to the library file."""

from __future__ import annotations

import asyncio
import enum
import re

import msgspec
import pydantic
import pytest

from timeline import (
    Block,
    BudgetError,
    CompactionPolicy,
    ConflictError,
    HeuristicCounter,
    InvalidBlockError,
    PinnedOverBudgetError,
    PolicyError,
    Timeline,
    blocks,
)
from timeline._compaction.digest import cap_request
from timeline._compaction.digest_records import classify_tool
from timeline._compaction.summarizers._sentences import _sentence_end
from timeline._compaction.summarizers.llm import _file_list
from timeline._compaction.truncation import truncate_to_fit
from timeline._formats._parts import part_text
from timeline._formats.reply import ModelReply
from timeline._formats.text import to_text
from timeline._model.names import provider_call_id
from timeline._model.native import anthropic_system_message
from timeline._model.native_text import describe
from timeline._model.reasoning import anthropic_thinking

PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def _tl(**policy: int) -> Timeline:
    return Timeline("c24", policy=CompactionPolicy(**policy), token_counter=HeuristicCounter())


# errors: messages and the fields they carry


def test_a_conflict_error_keeps_its_message() -> None:
    """ConflictError passed ``None`` to TimelineError would read "None"."""
    err = ConflictError("conversation c was saved by another writer", expected=3, actual=4)
    assert str(err) == "conversation c was saved by another writer"
    assert (err.expected, err.actual) == (3, 4)


def test_a_bad_failure_policy_names_the_field_and_the_value() -> None:
    """The validator raising ``PolicyError(None)`` would lose what was wrong."""
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy(on_summary_failure="retry")  # type: ignore[arg-type]
    assert str(caught.value) == ("on_summary_failure: must be 'fallback' or 'skip', got 'retry'")


def test_getting_a_non_str_id_names_the_type_it_got() -> None:
    """``Timeline.get(7)`` naming ``NoneType`` instead of ``int`` would mislead."""
    with pytest.raises(InvalidBlockError, match=r"^block_id must be a str, got int$"):
        _tl().get(7)  # type: ignore[arg-type]


def test_a_tool_result_without_call_id_says_what_it_needs() -> None:
    with pytest.raises(
        InvalidBlockError, match=r"^a tool result needs the call_id of its tool call$"
    ):
        blocks.tool_result("", "out")


def test_a_redacted_thinking_block_without_data_says_what_it_needs() -> None:
    with pytest.raises(
        InvalidBlockError, match=r"^a redacted_thinking block needs a 'data' string$"
    ):
        anthropic_thinking({"type": "redacted_thinking"})


def test_an_anthropic_system_message_of_bad_content_says_what_it_expects() -> None:
    with pytest.raises(
        InvalidBlockError, match=r"^content: expected a string or a list of blocks$"
    ):
        anthropic_system_message({"role": "system", "content": 7})


def test_pinned_over_budget_says_how_many_tokens_are_required() -> None:
    """``required`` is what the system prompt and the pinned blocks need together (a
    caller sizing a new budget reads it); dropping it would leave None."""
    tl = _tl(max_tokens=1_000)
    tl.begin_turn()
    tl.append(blocks.plan("plan " * 150))
    tl.pin(["ar:t1.react.plan"])
    with pytest.raises(PinnedOverBudgetError) as caught:
        tl.render("system " * 500)
    err = caught.value
    assert err.required is not None and err.budget == 1_000
    assert err.required > 1_000 and str(err.required) in str(err)


def test_a_system_prompt_over_the_compaction_budget_names_the_conversation() -> None:
    """Manual compaction with a system prompt larger than the budget raises a
    BudgetError that names the conversation (dropping ``conversation_id`` left None)."""
    tl = _tl(max_tokens=1_000)
    tl.begin_turn()
    tl.append(blocks.user_prompt("hello " * 50))
    with pytest.raises(
        BudgetError, match=r"system prompt \(\d+\) and the prompt.s framing"
    ) as caught:
        tl.compact("system " * 2_000)
    assert caught.value.conversation_id == "c24"


# ids and authors given on append


def test_a_one_character_id_from_the_id_factory_is_accepted() -> None:
    """Ids are non-empty strings: refusing length 1 (``1 < len``) would be wrong."""
    tl = Timeline("i", token_counter=HeuristicCounter(), id_factory=lambda k, n: "abcdefgh"[n])
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    assert all(len(b.id) == 1 for b in tl.blocks)


def test_a_block_without_author_gets_the_default_author_of_its_type() -> None:
    """An assistant completion appended without author is the assistant's, a user-side
    note the system's (``default_author and "system"`` would make both "system")."""
    tl = _tl()
    tl.begin_turn()
    done = tl.append(Block(type="assistant.completion", text="done"))
    note = tl.append(Block(type="note", text="fyi"))
    assert (done.author, note.author) == ("assistant", "system")


def test_a_call_id_with_a_lone_surrogate_gets_a_safe_form() -> None:
    """The hash encodes with ``surrogatepass``: without it a lone surrogate (which JSON
    decoders can produce) would raise UnicodeEncodeError."""
    safe = provider_call_id("call\ud800x")
    assert re.fullmatch(r"call_x_[0-9a-f]{12}", safe)


# compaction helpers


def test_a_request_over_a_one_character_cap_is_cut() -> None:
    """Only a cap of 0 means "no cap": a cap of 1 still cuts (``cap <= 1`` kept it)."""
    assert cap_request("hello world", 1) == " [... 11 more chars]"
    assert cap_request("hello world", 0) == "hello world"


def test_a_tool_nobody_classified_is_other() -> None:
    assert classify_tool("frobnicate") == "other"
    assert classify_tool("frobnicate", {"bash": "shell"}) == "other"


def test_a_file_list_has_one_path_a_line() -> None:
    """The read/modified file lists an LLM summary ends with: one path per line between
    the tags (joining with anything else would break the lines)."""
    assert _file_list("read-files", ["a.py", "b.py"]) == "<read-files>\na.py\nb.py\n</read-files>"


# formats: text parts and replies


def test_an_orphaned_tool_result_is_shown_as_labelled_text() -> None:
    """A result whose call is gone renders as text naming its tool (nothing when it has
    none) and its call id."""
    assert part_text(blocks.tool_result("c1", "out")) == "[TOOL RESULT  call_id=c1]\nout"
    with_tool = blocks.tool_result("c1", "out", tool_id="bash")
    assert part_text(with_tool) == "[TOOL RESULT bash call_id=c1]\nout"


def test_an_attachment_as_a_text_part_says_whether_its_bytes_are_sent() -> None:
    """A PDF is sent, so its text part only names it; a zip is not, and says so (the
    check calls ``sendable(block, None, "message")``: a dropped argument raises)."""
    pdf = blocks.user_attachment(name="r.pdf", mime="application/pdf", data=PDF)
    assert part_text(pdf) == f"[ATTACHMENT r.pdf (application/pdf, {len(PDF)} bytes)]"
    zipped = blocks.user_attachment(name="r.zip", mime="application/zip", data=b"PK\x03\x04")
    assert part_text(zipped).endswith("not sent: the provider does not accept this type]")


def test_a_pdf_attachment_in_the_text_format_is_not_called_unsent() -> None:
    """A PDF is a document every provider takes, so the text format names it without the
    "not sent" note it gives unsupported types."""
    pdf = blocks.user_attachment(name="r.pdf", mime="application/pdf", data=PDF)
    assert to_text("", [pdf]) == f"[USER ATTACHMENT r.pdf (application/pdf, {len(PDF)} bytes)]"


def test_an_anthropic_text_part_without_text_is_an_empty_completion() -> None:
    """A text part with no "text" key reads as "" (not "None" or a placeholder)."""
    reply = ModelReply.from_anthropic(
        {"content": [{"type": "text"}, {"type": "text", "text": "hi"}], "stop_reason": "x"}
    )
    assert [b.text for b in reply.content] == ["", "hi"]
    assert reply.text == "hi"


def test_a_code_execution_result_notes_its_exit_code() -> None:
    item = {"content": {"type": "bash_code_execution_result", "return_code": 2}}
    assert describe("anthropic", "bash_code_execution_tool_result", item) == (
        "[bash result (exit 2)]"
    )


def test_an_anthropic_mcp_call_names_its_server_by_server_name() -> None:
    item = {"server_name": "github", "name": "search"}
    assert describe("anthropic", "mcp_tool_use", item).startswith("[MCP call: github/search]")


# render: the HTML view


def test_the_html_live_window_counts_blocks_in_lower_case() -> None:
    tl = Timeline("h", policy=CompactionPolicy(max_tokens=10_000), token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    page = tl.render("sys").to_html()
    assert 'in order <span class="count">(2 blocks)</span>' in page


# state and compaction runs


def test_a_call_id_carried_by_a_non_call_block_stays_free_for_a_call() -> None:
    """Only tool calls take a call id: a note carrying one (kept as given) does not make a
    later call with that id a duplicate (``call_id or render == "tool_call"`` would)."""
    tl = _tl()
    tl.begin_turn()
    tl.append(Block(type="note", text="about c9", call_id="c9"))
    assert tl.append(blocks.tool_call("bash", {}, call_id="c9")).call_id == "c9"


class _Empty:
    def summarize(self, request: object) -> str:
        return "  "


def test_an_empty_summary_from_acompact_falls_back_like_compact() -> None:
    """Under the default ``on_summary_failure="fallback"``, an empty summary in the async
    path is replaced by the inventory, as in the sync path (passing no fallback flag
    would leave the compaction without a summary)."""
    stats = []
    for run_async in (False, True):
        tl = Timeline(
            "a",
            policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1),
            token_counter=HeuristicCounter(),
            summarizer=_Empty(),
        )
        for t in range(6):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"turn {t}: fix module {t} " + "detail " * 40))
            tl.append(blocks.assistant_completion(f"Fixed module {t}."))
        done = asyncio.run(tl.acompact("sys")) if run_async else tl.compact("sys")
        assert done is not None and "empty" in (done.summarizer_error or "")
        summary = next(b for b in tl.blocks if b.type == "conv.range.summary")
        assert summary.meta["summarizer"] == "inventory" and "## Goal" in summary.text
        stats.append(summary.text)
    assert stats[0] == stats[1]


def test_the_html_context_bar_without_a_trigger_has_no_trigger_mark() -> None:
    """Without a budget there is no compaction trigger: the context bar holds only its
    category slices (an unset mark must add nothing, not "None")."""
    tl = Timeline("h", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.warns(Warning):
        page = tl.render("sys").to_html()
    bar = re.search(r'<div class="ctx"[^>]*>(.*?)</div>', page)
    assert bar is not None and bar.group(1).startswith('<span class="seg"')
    assert bar.group(1).endswith("></span>") and "trigger" not in bar.group(1)


def test_a_first_sentence_is_looked_for_only_before_stop() -> None:
    """``_sentence_end(text, stop)`` finds the end in ``text[:stop]``: a line break after
    ``stop`` must not move the end past it (an unbounded find would return 7 here)."""
    assert _sentence_end("abc def\nmore", 3) == 3
    assert _sentence_end("abc def\nmore", 10) == 7


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


def _cost(block: Block) -> int:
    return (len(block.text) + len(block.data or b"")) // 4


def test_a_truncated_block_keeps_its_shortened_text_and_drops_its_bytes() -> None:
    """Truncation replaces a block by its shortened text: bytes it carried (an attached
    file, a native item) would otherwise still be sent whole beside the cut text."""
    log = msgspec.structs.replace(
        blocks.user_attachment(name="run.log", mime="text/plain", data=b"x" * 4_000),
        text="line of output\n" * 2_000,
        path="ar:t1.user.attachment",
    )
    shown = [log]
    removed, paths = truncate_to_fit(shown, [_cost(log)], 5_000, _cost)
    assert paths == ["ar:t1.user.attachment"] and removed >= 5_000
    assert shown[0].data is None and len(shown[0].text) < len(log.text)
