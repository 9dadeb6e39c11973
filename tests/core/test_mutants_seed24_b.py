"""More behaviours the survivors of the seed-24 mutation draw
(docs/dev/mutation-testing.md, "A fresh draw with the new tests") showed untested: the
second part, for the survivors the first pass left unanalysed. Each test was checked to
fail with its mutant applied by hand to the library file."""

from __future__ import annotations

import msgspec
import pytest

from timeline import Block, CompactionPolicy, HeuristicCounter, TiktokenCounter, Timeline, blocks
from timeline._compaction.clearing import ClearingPolicy, clearing_candidates
from timeline._compaction.digest import CompactionDigest, _memory_hit
from timeline._compaction.digest_records import Artifact
from timeline._compaction.sections import SummarySections
from timeline._compaction.summarizers.base import SummaryRequest, SummaryResult
from timeline._compaction.summarizers.cache_warm import instruction
from timeline._compaction.summarizers.inventory import _critical, _listed_chars
from timeline._compaction.summary_state import (
    STATE_KEY,
    previous_summary,
    state_from_meta,
    summary_content,
)
from timeline._compaction.summary_text import SPLIT_TURN_HEADING
from timeline._compaction.textscan import first_line
from timeline._formats._plan import plan_messages
from timeline._model.reasoning import anthropic_thinking
from timeline._state.stream import VisibleStream
from timeline._tokens import BlockTokenMemo


def _numbered(*items: Block) -> list[Block]:
    return [msgspec.structs.replace(b, id=f"b{i}") for i, b in enumerate(items)]


def _thinking() -> Block:
    return anthropic_thinking({"type": "thinking", "thinking": "Let me see.", "signature": "s"})


def test_a_turn_prefix_instruction_quotes_the_first_message_it_covers() -> None:
    """The cache-warm instruction for a split turn's prefix names where the summary
    starts by quoting its first message; a mutant that always said "its first message"
    (or nothing) would leave the model to guess which turn is meant."""
    ask = Block(type="user_prompt", text="Rename the retry helper everywhere.", id="p1")
    step = Block(type="assistant_completion", text="Renaming it now.", id="a1")
    request = SummaryRequest(kind="turn_prefix", blocks=(ask,), context=(ask, step))
    text = instruction(request, request.context)
    assert 'from the message that starts "Rename the retry helper everywhere."' in text
    assert 'up to (not including) the message that starts "Renaming it now."' in text


def test_a_prefix_alone_is_carried_under_its_heading_without_a_leading_gap() -> None:
    """A summary whose main part is empty and whose split-turn prefix is kept hands the
    next compaction the prefix under its heading and nothing before it; a blank-line
    join with the empty main text would start the carried summary with two newlines."""
    text, meta = summary_content(
        "",
        SummaryResult(""),
        SummaryResult("The user asked for a rename."),
        CompactionDigest(),
        None,
    )
    block = Block(type="conv_range_summary", text=text, id="s1", meta={STATE_KEY: meta})
    assert previous_summary(block).text == f"{SPLIT_TURN_HEADING}\nThe user asked for a rename."


def test_a_summary_keeps_its_split_turn_prefix_sections_as_data() -> None:
    """The prefix summary's sections are stored in the summary block's state, so the next
    inventory summary merges them item by item; dropping them would leave only text."""
    sections = SummarySections(original_request=["Rename the retry helper."])
    _, meta = summary_content(
        "", SummaryResult("Main."), SummaryResult("Prefix.", sections), CompactionDigest(), 1
    )
    state = state_from_meta({STATE_KEY: meta})
    assert state is not None
    assert state.prefix_sections == sections


def test_a_memory_hit_without_a_path_records_an_empty_path() -> None:
    """A memory search hit that carries no path is recorded with an empty path (the
    summary then says "no hits" rather than naming a made-up file)."""
    result = Block(
        type="react_tool_result", text="1 hit", id="r1", meta={"hits": [{"turn_id": "t3"}]}
    )
    hit = _memory_hit({"query": "retry"}, [result])
    assert hit.paths == [""]
    assert hit.turn_ids == ["t3"]


def test_request_lines_cost_their_text_plus_a_marker_and_a_line_break_each() -> None:
    """The inventory's request budget counts ``- `` and a line break per request: two
    requests of 2 and 3 characters take 11 characters of the summary."""
    assert _listed_chars(["ab", "cde"]) == 11
    assert _listed_chars([]) == 0


def test_an_externally_streamed_artifact_is_called_streamed_in_critical_context() -> None:
    """An artifact whose bytes live outside the prompt is marked ``streamed`` in the
    summary's Critical Context, so the model knows it was not shown inline."""
    digest = CompactionDigest(
        artifacts=[
            Artifact("out/report.csv", "text/csv", "external"),
            Artifact("a.png", "image/png", "inline"),
        ]
    )
    lines = _critical(digest)
    assert "artifact out/report.csv (text/csv, streamed)" in lines
    assert "artifact a.png (image/png)" in lines


def test_thinking_at_the_very_end_of_the_prompt_is_not_sent() -> None:
    """Thinking travels only ahead of the assistant content it preceded: when a stream
    ends on a thinking block after an assistant reply, the final assistant message
    holds the reply alone; a mutant testing the role the wrong way round sent it."""
    stream = _numbered(blocks.user_prompt("Hi"), blocks.assistant_completion("Hello."), _thinking())
    last = plan_messages(stream, "anthropic")[-1]
    assert last.role == "assistant"
    assert [p.kind for p in last.parts] == ["text"]


def test_a_stream_resolves_its_largest_bounds_first() -> None:
    """With ``enough``, a stream replaces its upper bounds by exact costs largest first
    (each exact count then takes the most slack off the total); left in append order,
    it would tokenize the small last block and leave the largest bound standing."""
    big = "word " * 400
    stream = VisibleStream(memo=BlockTokenMemo(TiktokenCounter()))
    stream.rebuild(
        _numbered(
            blocks.user_prompt(big), blocks.assistant_completion("ok"), blocks.user_prompt("why")
        ),
        -1,
        frozenset(),
    )
    assert stream.pending == [0, 1, 2]
    stream.resolve(lambda: len(stream.pending) < 3)
    assert sorted(stream.pending) == [1, 2]


def test_clearing_tool_inputs_spares_the_newest_calls() -> None:
    """With ``clear_tool_inputs``, only the calls older than the newest
    ``keep_tool_results`` lose their input; clearing the newest
    call's input too would hide what the model is working on now."""
    first = blocks.tool_call("run", {"cmd": "make test"}, call_id="c1")
    second = blocks.tool_call("run", {"cmd": "make lint"}, call_id="c2")
    stream = _numbered(
        first,
        blocks.tool_result("c1", "ok", tool_id="run"),
        second,
        blocks.tool_result("c2", "ok", tool_id="run"),
    )
    policy = ClearingPolicy(keep_tool_results=1, clear_tool_inputs=True, clear_thinking=False)
    found = clearing_candidates(stream, 0, policy, carried=frozenset(), current_turn="", cleared={})
    assert [(c.index, c.reason) for c in found] == [(0, "input"), (1, "old")]


@pytest.mark.parametrize(
    ("max_tokens", "kept"), [(285, ["turn.header", "user.prompt"]), (284, ["user.prompt"])]
)
def test_a_last_turn_that_fits_to_the_token_stays_whole(max_tokens: int, kept: list[str]) -> None:
    """Without a usage report the cut reserves the system prompt, the tail and no
    calibration at all: at 285 tokens the last turn fits exactly in the kept share and
    stays whole, at 284 it is split (its header summarized). Reserving one token of
    calibration more than the report gives would split it at 285 already."""
    tl = Timeline(
        "c",
        policy=CompactionPolicy(max_tokens=max_tokens, keep_recent_turns=1),
        token_counter=HeuristicCounter(),
    )
    for t in range(6):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t} " + "word " * (7 * t + 5)))
        tl.append(blocks.assistant_completion(f"reply {t} " + "text " * (5 * t + 9)))
    view = tl.render("sys")
    types = [b.type for b in view.blocks]
    assert types == ["conv.range.summary", *kept, "assistant.completion"]


def test_the_first_line_of_a_text_ending_in_a_long_run_of_blank_lines() -> None:
    """The first line is found scanning the blank end back in chunks of 256 characters;
    a text ending in more than 256 of them reads like its stripped form (stepping the
    end forward instead of back would never finish: mutmut sees that as a timeout)."""
    text = "  Build passed.\nall good" + "\n \t" * 200
    assert first_line(text) == text.strip().splitlines()[0] == "Build passed."
    assert first_line(" \n" * 300) == ""
