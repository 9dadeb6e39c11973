"""Offload on arrival (``ClearingPolicy(offload_over_tokens=N)``): a tool result over N
tokens is shown as a preview from the first request on and read back verbatim with
``read_path``, before and after persist."""

from __future__ import annotations

import re
from typing import Any

import pytest

import index_store
from timeline import (
    ClearingPolicy,
    CompactionPolicy,
    PolicyError,
    Timeline,
    blocks,
)
from timeline._driver.memory_tools import read_path_tool

SYSTEM = "You are a build agent."
LOG = "\n".join(f"line {i}: compiling module_{i}.c ... ok" for i in range(800))


def timeline(over: int | None = 500, **clearing: Any) -> Timeline:
    policy = CompactionPolicy(
        max_tokens=32_000, clearing=ClearingPolicy(offload_over_tokens=over, **clearing)
    )
    tl = Timeline("c", policy=policy)
    tl.begin_turn()
    tl.append(blocks.user_prompt("Build everything."))
    return tl


def run(tl: Timeline, text: str = LOG, tool: str = "bash", **kw: Any) -> Any:
    call = tl.append(blocks.tool_call(tool, {"command": "make all"}))
    return tl.append(blocks.tool_result(call.call_id or "", text, tool_id=tool, **kw))


def shown(tl: Timeline, path: str) -> str:
    view = tl.render(SYSTEM)
    (block,) = [b for b in view.blocks if b.path == path and b.type == "react.tool.result"]
    return block.text


def read_all(tool: Any, path: str) -> str:
    """The text at ``path`` read back page by page, as a model reads it."""
    parts: list[str] = []
    offset = 1
    while True:
        out = tool({"path": path, "offset": offset}).text
        body = out.split("\n", 1)[1]
        more = re.search(r"\n\[\.\.\. [\d,]+ more chars at .*offset=(\d+) to read on\]$", body)
        if more is None:
            parts.append(body)
            return "".join(parts)
        body = body[: more.start()]
        parts.append(body[: body.rfind("\n") + 1])
        offset = int(more.group(1))


def test_a_result_over_the_limit_is_a_preview_from_the_first_request() -> None:
    """The first render already shows the preview: what it is, its size, its first and
    last lines, and the path to read it back; the prompt pays for the preview only."""
    tl = timeline()
    result = run(tl)
    text = shown(tl, result.path)
    assert text.startswith('[offloaded: bash(command="make all") result, 31,779 chars in 800 ')
    assert f"read_path {result.path}" in text
    lines = text.splitlines()
    assert lines[1] == "line 0: compiling module_0.c ... ok"
    assert lines[-1] == "line 799: compiling module_799.c ... ok"
    assert "[... 770 lines not shown ...]" in lines
    assert tl.render(SYSTEM).tokens < tl.block_tokens(result) // 10


def test_a_result_under_the_limit_is_shown_whole() -> None:
    """Results at or under the limit, results of excluded tools and results appended
    pinned are shown as they are."""
    tl = timeline(over=20_000, exclude_tools=("cat",))
    small = run(tl)
    assert shown(tl, small.path) == LOG
    tl2 = timeline(exclude_tools=("cat",))
    excluded = run(tl2, tool="cat")
    assert shown(tl2, excluded.path) == LOG
    call = tl2.append(blocks.tool_call("bash", {"command": "make"}))
    pinned = tl2.append(blocks.tool_result(call.call_id or "", LOG, tool_id="bash"), pin=True)
    assert shown(tl2, pinned.path) == LOG


def test_the_text_is_kept_whole_and_read_back_verbatim_before_and_after_persist() -> None:
    """The timeline keeps the block whole; read_path returns it verbatim before any
    persist (from the timeline) and after (from the store), page by page."""
    tl = timeline()
    result = run(tl)
    assert tl.get(result.id).text == LOG
    store = index_store.open("memory://")
    before = read_path_tool(store, "c", timeline=tl)
    assert read_all(before, result.path) == LOG
    assert before({"path": result.path, "offset": 101, "limit": 2}).text.splitlines() == [
        f"[{result.path}: lines 101-102 of 800]",
        "line 100: compiling module_100.c ... ok",
        "line 101: compiling module_101.c ... ok",
    ]
    tl.persist(store)
    after = read_path_tool(store, "c")
    assert read_all(after, result.path) == LOG
    assert [b.text for b in store.read("c", result.path)] == [LOG]
    hits = store.search("c", "module_400", limit=3)
    assert any(h.path == result.path for h in hits)


def test_a_loaded_timeline_shows_the_same_preview() -> None:
    """The preview is part of the persisted window: a loaded timeline renders the same
    prompt."""
    tl = timeline()
    run(tl)
    store = index_store.open("memory://")
    view = tl.render(SYSTEM)
    tl.persist(store)
    again = Timeline.load(store, "c", policy=tl.policy)
    assert again.render(SYSTEM).to_anthropic() == view.to_anthropic()


def test_unhide_shows_an_offloaded_result_whole() -> None:
    """unhide of its path brings the whole text back into the prompt."""
    tl = timeline()
    result = run(tl)
    tl.unhide([result.path])
    assert shown(tl, result.path) == LOG


def test_an_old_offloaded_result_is_cleared_like_any_other() -> None:
    """When a compaction is due, the clearing tier replaces an old result's preview by
    its one-line placeholder, as for a result shown whole."""
    tl = timeline(keep_tool_results=1, clear_at_least_tokens=0)
    old = run(tl)
    for i in range(6):
        run(tl, text=f"output {i}\n" + "x" * 4_000 + "\n", tool="bash")
    tl.compact(SYSTEM)
    text = shown(tl, old.path)
    assert text.startswith("[cleared: bash(") and "\n" not in text


def test_binary_results_are_never_offloaded() -> None:
    """A result carrying bytes (an image) has no lines to preview: shown as it is."""
    tl = timeline(over=1)
    result = run(tl, text="a chart", mime="image/png", data=b"\x89PNG\r\n\x1a\n" + b"0" * 4096)
    assert shown(tl, result.path) == "a chart"


@pytest.mark.parametrize("value", [0, -5, 1.5, "4000", True])
def test_offload_over_tokens_must_be_a_positive_int(value: Any) -> None:
    """The limit is a positive number of tokens, or None."""
    with pytest.raises(PolicyError, match="offload_over_tokens"):
        ClearingPolicy(offload_over_tokens=value)


def test_offload_over_tokens_loads_from_a_mapping() -> None:
    """It loads from config, in the clearing section."""
    policy = CompactionPolicy.from_mapping(
        {"max_tokens": 32_000, "clearing": {"offload_over_tokens": 4_000}}
    )
    assert policy.clearing is not None and policy.clearing.offload_over_tokens == 4_000
