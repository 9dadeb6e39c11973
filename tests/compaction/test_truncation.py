"""Truncating to fit: what a cut may take, and what it leaves."""

from __future__ import annotations

import msgspec

from timeline import (
    Block,
    CompactionPolicy,
    HeuristicCounter,
    Timeline,
    blocks,
)
from timeline._compaction.truncation import truncate_to_fit


def test_truncation_never_cuts_a_tool_call_or_a_protected_block() -> None:
    """Tool calls (their JSON params) and protected (pinned) blocks are never cut, each
    on its own: a run with nothing else to cut removes nothing."""
    call = blocks.tool_call("write_file", {"path": "a.py", "text": "x " * 4_000}, call_id="c1")
    made = [
        msgspec.structs.replace(call, id="b1", path="tc:t1.tool_calls.c1.in.json"),
        msgspec.structs.replace(
            blocks.user_prompt("rule " * 4_000), id="b2", path="ar:t1.user.prompt"
        ),
    ]
    costs = [len(b.text) // 4 for b in made]
    removed, paths = truncate_to_fit(made, costs, 3_000, lambda b: len(b.text) // 4, ["b2"])
    assert (removed, paths) == (0, [])
    removed, paths = truncate_to_fit(made, costs, 3_000, lambda b: len(b.text) // 4)
    assert removed >= 3_000 and paths == ["ar:t1.user.prompt"]
    assert truncate_to_fit(made[:1], costs[:1], 1_000, lambda b: len(b.text) // 4) == (0, [])


def test_a_truncation_that_saves_nothing_is_not_applied() -> None:
    """A cut that does not lower the block's cost leaves it whole and unlisted."""
    prompt = msgspec.structs.replace(
        blocks.user_prompt("rule " * 4_000), id="b1", path="ar:t1.user.prompt"
    )
    made = [prompt]
    assert truncate_to_fit(made, [5_000], 3_000, lambda b: 5_000) == (0, [])
    assert made == [prompt]


def test_a_render_truncating_to_fit_never_cuts_a_pinned_block() -> None:
    """Over the budget with nothing left to compact, the render truncates the largest
    block it may: a pinned block, even a larger one, stays whole."""
    policy = CompactionPolicy(max_tokens=1_000)
    tl = Timeline("t", policy=policy, token_counter=HeuristicCounter())
    tl.begin_turn()
    rule = tl.append(blocks.user_prompt("rule " * 550))
    tl.pin([rule.path])
    call = tl.append(blocks.tool_call("read_log", {"path": "app.log"}))
    tl.append(blocks.tool_result(call.call_id or "", "log line\n" * 220))
    view = tl.render("sys")
    assert view.truncated_paths and rule.path not in view.truncated_paths
    assert next(b for b in view.blocks if b.id == rule.id).text == rule.text


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
