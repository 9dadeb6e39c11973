"""Edges of ``timeline._compaction``: how config errors are worded, model-name resolution,
what the LLM summarizer sends, the pruned-result note and cut validity after a summary.
Written against mutants that the broader tests let through."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.helpers.conversations import coding_turn
from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    LLMSummarizer,
    PolicyError,
    SummaryRequest,
    Timeline,
    blocks,
    context_window_for,
)
from timeline._compaction import valid_cuts
from timeline._compaction.pruning import prune_expired, pruned_replacement
from timeline._compaction.summarizers.llm import SYSTEM_PROMPT, build_prompt


def config_error(config: dict[str, Any]) -> str:
    with pytest.raises(PolicyError) as err:
        CompactionPolicy.from_mapping(config)
    return err.value.message


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model": 5}, "compaction.model: expected a string, got int"),
        # a choice or a section in plain words (cattrs said "not in literal
        # typing.Literal[...]" and "unknown error ('str' object has no attribute 'keys')")
        (
            {"on_summary_failure": "retry"},
            "compaction.on_summary_failure: expected 'fallback' or 'skip', got 'retry'",
        ),
        ({"clearing": "on"}, "compaction.clearing: expected a mapping of its fields, got str"),
        ({"native": 5}, "compaction.native: expected a mapping of its fields, got int"),
        ({"model": ["a"]}, "compaction.model: expected a string, got list"),
        (
            {"focus_instructions": 1.5},
            "compaction.focus_instructions: expected a string, got float",
        ),
        # a value that reads like a message does not change where the path goes
        ({"enabled": "a: b"}, "compaction.enabled: expected true or false, got 'a: b'"),
        ({"max_tokens": 1.5}, "compaction.max_tokens: expected an integer, got 1.5"),
        ({"keep_ratio": 2}, "compaction.keep_ratio: must be in (0, 1), got 2.0"),
        (
            {"tool_classification": {"grep": 1}},
            "compaction.tool_classification['grep']: expected a string, got int",
        ),
    ],
)
def test_config_errors_are_worded_exactly(config: dict[str, Any], message: str) -> None:
    """The whole message: the path first, then what is wrong with the value."""
    assert config_error(config) == message


@pytest.mark.parametrize("value", ["x @ y", "expected x", "a: b"])
def test_a_value_cannot_move_the_path_or_pass_for_our_message(value: str) -> None:
    """A bad value containing cattrs' `` @ `` separator, our ``: `` separator or our
    wording (``expected ...``) is reported under the field's path, in the converter's
    words, with the value as written."""
    message = config_error({"on_summary_failure": value})
    assert message.startswith("compaction.on_summary_failure: ")
    what = message.removeprefix("compaction.on_summary_failure: ")
    assert value in what and not what.startswith(value)


def test_model_names_resolve_by_their_last_segment() -> None:
    """``provider/`` prefixes are ignored however many there are."""
    assert context_window_for("openrouter/anthropic/claude-sonnet-4-5") == 200_000
    assert context_window_for("openrouter/openai/gpt-4o") == 128_000
    assert context_window_for("gpt-4o/unknown-model") is None


def test_llm_summarizer_sends_the_prompt_with_its_tool_output_cap() -> None:
    """The model gets the system prompt and :func:`build_prompt` of the request with the
    summarizer's own ``tool_output_chars``."""
    tl = Timeline("l")
    tl.begin_turn()
    tl.append(blocks.user_prompt("read it"))
    call = tl.append(blocks.tool_call("read_file", {"path": "a.py"}))
    tl.append(blocks.tool_result(call.call_id or "", "line\n" * 400, tool_id="read_file"))
    request = SummaryRequest("history", tl.blocks)
    sent: list[tuple[str, str]] = []

    def complete(system: str, prompt: str) -> str:
        sent.append((system, prompt))
        return "## Goal\n- read it"

    text = LLMSummarizer(complete, tool_output_chars=50).summarize(request)
    assert "read it" in text
    assert sent == [(SYSTEM_PROMPT, build_prompt(request, 50))]
    assert build_prompt(request, 50) != build_prompt(request)


def test_a_result_without_a_tool_name_is_pruned_as_tool() -> None:
    """The pruned note names the tool, or says ``tool`` when the result has none."""
    tl = Timeline("p", clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    tl.begin_turn()
    call = tl.append(blocks.tool_call("bash", {"cmd": "ls"}))
    anonymous = tl.append(blocks.tool_result(call.call_id or "", "a\nb"))
    named = tl.append(blocks.tool_result(call.call_id or "", "c", tool_id="bash"))
    assert pruned_replacement(anonymous) == (
        f"[pruned: tool result {anonymous.path} — read_path to restore]"
    )
    assert pruned_replacement(named) == f"[pruned: bash result {named.path} — read_path to restore]"
    found = prune_expired(
        tl.blocks,
        0,
        now=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=1),
        ttl_seconds=60,
        protected_turns=set(),
        carried=set(),
    )
    assert [b.replacement_text for _, b in found] == [
        pruned_replacement(anonymous),
        pruned_replacement(named),
    ]


def test_valid_cuts_before_start_are_all_invalid() -> None:
    """Positions up to ``start`` (the latest summary and what precedes it) are never cuts;
    after it, the same answers as from 0, one entry per block."""
    tl = Timeline("v")
    for i in range(3):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"p{i}"))
        tl.append(blocks.assistant_completion(f"a{i}"))
    seq = list(tl.blocks)
    whole = valid_cuts(seq, 0)
    assert any(whole[:3])
    after = valid_cuts(seq, 3)
    assert len(after) == len(seq)
    assert after[:4] == [False] * 4 and after[4:] == whole[4:]


@pytest.mark.parametrize(
    ("path", "where"), [("compaction", "compaction."), ("config", "config."), ("$", "$."), ("", "")]
)
def test_errors_name_the_path_the_caller_gave(path: str, where: str) -> None:
    """``from_mapping(..., path=p)`` names every bad field ``p.field`` (just ``field`` when
    ``p`` is empty), whichever check found it: the converter's or a validator's."""
    cases: dict[str, tuple[dict[str, Any], str]] = {
        "max_tokens": ({"max_tokens": "x"}, "expected a number, got str"),
        "keep_ratio": ({"keep_ratio": 2}, "must be in (0, 1), got 2.0"),
        "tool_classification['a']": (
            {"tool_classification": {"a": 1}},
            "expected a string, got int",
        ),
    }
    for field, (config, what) in cases.items():
        with pytest.raises(PolicyError) as err:
            CompactionPolicy.from_mapping(config, path=path)
        assert err.value.message == f"{where}{field}: {what}"


def test_a_pinned_block_before_the_cut_counts_toward_what_stays() -> None:
    """The cut counts the pinned blocks it leaves before it as kept: with a large pinned
    prompt, every compaction still brings the prompt under the trigger (counting only the
    blocks after the cut would keep too much, and compact again at the next render)."""
    policy = CompactionPolicy(max_tokens=3_000, keep_recent_turns=1)
    tl = Timeline("k", policy=policy, token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("Keep these rules. " + "rule " * 600))
    tl.pin(["ar:t1.user.prompt"])
    compacted = []
    for i in range(12):
        coding_turn(tl, i)
        view = tl.render("sys")
        if view.compaction is not None:
            compacted.append(i)
            assert view.tokens < policy.trigger_ratio * policy.max_tokens
    assert len(compacted) >= 2
    assert all(later - earlier > 1 for earlier, later in itertools.pairwise(compacted))


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
