"""The per-block token memo's accounting of summaries: exact with an additive counter,
each distinct line tokenized once, lines an earlier summary had never again, and a
compaction's summary counted once."""

from __future__ import annotations

from collections.abc import Callable

from tests.helpers.clock import CountingCounter
from timeline import Block, CompactionPolicy, TiktokenCounter, Timeline, blocks
from timeline._formats.text import block_text
from timeline._tokens import BLOCK_OVERHEAD_TOKENS, BlockTokenMemo


class Chars:
    """One token per character: additive, so a text costs the sum of its pieces."""

    def count(self, text: str) -> int:
        return len(text)


def summary(block_id: str, lines: list[str]) -> Block:
    return Block(type="conv.range.summary", id=block_id, text="\n".join(lines))


LINES = [f"- point {i}: the retry loop in worker {i} has no backoff" for i in range(12)]


def test_a_summary_costs_its_text_exactly_with_an_additive_counter() -> None:
    """Lines and the newlines between them add up to the whole text's count."""
    first = summary("s1", [*LINES, "", "- again", "- again"])
    assert len(block_text(first)) + BLOCK_OVERHEAD_TOKENS == BlockTokenMemo(Chars()).block(first)


def test_each_distinct_summary_line_is_tokenized_once() -> None:
    """A line repeated inside a summary, or carried over from the previous summary, is
    not tokenized again: only the new line of an extended summary is."""
    counter = CountingCounter()
    memo = BlockTokenMemo(counter, lazy_bounds=False)
    first = summary("s1", [*LINES, "- same", "- same", "- same"])
    memo.block(first)
    distinct = {line for line in block_text(first).split("\n") if line}
    assert sum(len(line) for line in distinct) == counter.chars
    chars = counter.chars
    memo.block(summary("s2", [*LINES, "- same", "- a new point"]))
    assert len("- a new point") == counter.chars - chars


def test_a_compaction_counts_its_summary_once(make_tl: Callable[..., Timeline]) -> None:
    """The summary a render makes is counted while it is made, then never again."""
    counter = CountingCounter()
    tl = make_tl(
        token_counter=counter, policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1)
    )
    view = None
    for i in range(12):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"question {i} " + "q " * 300))
        tl.append(blocks.assistant_completion(f"answer {i} " + "a " * 300))
        view = tl.render("sys")
        if view.compaction is not None and view.compaction.summary_path:
            break
    assert view is not None and view.blocks[0].type == "conv.range.summary"
    calls = counter.calls
    tl.render("sys")
    tl.estimate("sys")
    assert calls == counter.calls


def test_uncached_and_remember_count_nothing_twice() -> None:
    """uncached() gives a known block's cost without counting; a cost remembered after
    uncached() is what block() returns, without counting."""
    counter = CountingCounter()
    memo = BlockTokenMemo(counter, lazy_bounds=False)
    known = Block(type="user.prompt", id="p1", text="hello there")
    cost = memo.block(known)
    calls = counter.calls
    assert (cost, calls) == (memo.uncached(known), counter.calls)
    new = Block(type="user.prompt", id="p2", text="a block not added yet")
    new_cost = memo.uncached(new)
    calls = counter.calls
    memo.remember(new, new_cost)
    assert (new_cost, calls) == (memo.block(new), counter.calls)


def test_the_bound_of_a_summary_is_its_exact_cost() -> None:
    """A summary is counted line by line, cheaply, so its bound is its exact cost (a
    bound from its text alone would leave out its label)."""
    memo = BlockTokenMemo(TiktokenCounter())
    made = summary("s1", LINES)
    assert memo.block(made) == memo.bound(made)


def test_the_bound_of_a_block_with_data_covers_its_text_and_its_data() -> None:
    """An image attachment, and an image a tool returned, are bounded by their label and
    text plus the image's estimate."""
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + (300).to_bytes(4, "big") * 2
    memo = BlockTokenMemo(TiktokenCounter())
    for block in (
        blocks.user_attachment(name="screenshot.png", mime="image/png", data=png),
        blocks.tool_result("c1", "the chart", tool_id="plot", mime="image/png", data=png),
    ):
        assert memo.bound(block) >= memo.block(block) > 120
