"""What one compaction keeps for the next (the summary's state in ``meta``) is plain data
the text is written from, and a timeline loaded from a store makes the same next summary
as one kept in memory."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_store._memory import MemoryStore
from tests.helpers.conversations import coding_turn
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks
from timeline._compaction.digest import CompactionDigest, digest_from_meta
from timeline._compaction.summarizers._page import Page
from timeline._compaction.summarizers.inventory import LIST_CAPS
from timeline._compaction.summary_state import render_state, state_from_meta
from timeline._model.block import CONV_RANGE_SUMMARY
from timeline._model.errors import TimelineError

# texts that reach every check: sentences that become items, tagged notes, headings,
# tags, checkboxes, parenthesised notes, mid-turn markers, odd line breaks
TEXTS = (
    "Refactor the cache module.",
    "Please check the retry logic; avoid global state.",
    "ok",
    "Fix the parser. You must never drop comments.",
    "We decided to use sqlite instead of postgres. Next I will run the tests.",
    "[P] keep the API stable\n[D] use attrs",
    "## Tagged Notes\n[S] a heading in a prompt",
    "# Title\n<b>bold</b>\n[MID-TURN COMPACTION 2]",
    "[x] already done",
    "[x] You must keep it.",
    "## [P] a tagged heading",
    "(just a note)",
    "line\rbreak\u2028and more",
    "  padded request  ",
    "next: the docs " * 30,
)
TOOLS = ("read_file", "bash", "grep", "edit_file")

STEPS = st.lists(
    st.tuples(
        st.sampled_from(("prompt", "tools", "reply", "note", "plan", "persist", "hide")),
        st.integers(0, len(TEXTS) - 1),
        st.integers(0, 12_000),
    ),
    min_size=40,
    max_size=120,
)


def summaries(tl: Timeline) -> list[tuple[str, dict[str, Any]]]:
    """Every summary block's text and meta."""
    return [(b.text, b.meta) for b in tl.blocks if b.type == CONV_RANGE_SUMMARY]


def run(steps: list[Any], budget: int) -> None:
    """Play ``steps``, rendering after each and checking every summary's state."""
    kw: dict[str, Any] = {
        "policy": CompactionPolicy(max_tokens=budget, min_split_prefix_blocks=2),
        "token_counter": HeuristicCounter(),
    }
    tl = Timeline("c", **kw)
    store = MemoryStore()
    tl.begin_turn()
    for n, (kind, text, size) in enumerate(steps):
        if kind == "prompt":
            tl.begin_turn()
            tl.append(blocks.user_prompt(TEXTS[text]))
        elif kind == "tools":
            tool = TOOLS[text % len(TOOLS)]
            call = tl.append(blocks.tool_call(tool, {"path": f"src/{n}.py"}))
            result = TEXTS[text] + "x" * size
            tl.append(blocks.tool_result(call.call_id or "", result, is_error=size % 5 == 0))
        elif kind == "reply":
            tl.append(blocks.assistant_completion(TEXTS[text]))
        elif kind == "note":
            tl.append(blocks.note(TEXTS[text]))
        elif kind == "plan":
            tl.append(blocks.plan(TEXTS[text]))
        elif kind == "persist":
            tl.persist(store)
            tl = Timeline.load(store, "c", **kw)
        elif tl.blocks:
            tl.hide([tl.blocks[size % len(tl.blocks)].path])
        with contextlib.suppress(TimelineError):
            tl.render("system")
        check_state(tl)


def check_state(tl: Timeline) -> None:
    """Every summary's text is its state rendered, and its meta is plain JSON data."""
    for block in tl.blocks:
        if block.type != CONV_RANGE_SUMMARY:
            continue
        state = state_from_meta(block.meta)
        digest = digest_from_meta(block.meta)
        assert state is not None and digest is not None
        assert render_state(state, digest.tagged_notes) == block.text
        assert msgspec.json.decode(msgspec.json.encode(block.meta)) == block.meta


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, budget=st.integers(5_000, 12_000))
def test_every_summary_is_its_state_rendered(steps: list[Any], budget: int) -> None:
    """Through compactions, persists, loads and hides, every summary's text is exactly its
    stored state rendered, and that state is plain JSON data."""
    run(steps, budget)  # check_state after every step


def test_loaded_timeline_summarizes_like_the_one_in_memory() -> None:
    """A timeline persisted and loaded (nothing kept) makes the same next summary as the
    one that stayed in memory."""
    kw: dict[str, Any] = {
        "policy": CompactionPolicy(max_tokens=8_000),
        "token_counter": HeuristicCounter(),
    }
    tl = Timeline("l", **kw)
    store = MemoryStore()

    def turn(t: Timeline, i: int) -> None:
        t.begin_turn()
        t.append(blocks.user_prompt(f"Request {i}: never break the build. [P] step {i}"))
        call = t.append(blocks.tool_call("read_file", {"path": f"a{i}.py"}))
        t.append(blocks.tool_result(call.call_id or "", "code\n" * 800))
        t.append(blocks.assistant_completion(f"Done {i}. Next I will test it."))
        t.render("system")

    for i in range(24):
        turn(tl, i)
    tl.persist(store)
    before = summaries(tl)[-1]
    loaded = Timeline.load(store, "l", **kw)
    for i in range(24, 40):
        turn(tl, i)
    assert summaries(tl)[-1] != before  # compacted again after the load point
    warm = summaries(tl)[-1]
    for i in range(24, 40):
        turn(loaded, i)
    assert summaries(loaded)[-1] == warm
    check_state(loaded)


line_text = st.text(st.sampled_from("ab \n-[x]()#<é"), max_size=30)
page_lists = st.lists(line_text, max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    lists=st.fixed_dictionaries(
        {name: page_lists for name in LIST_CAPS} | {"in_progress": page_lists}
    ),
    goal=page_lists,
    steps=page_lists,
    requests=st.lists(st.text(st.sampled_from("ab \n"), max_size=200), max_size=12),
    omitted=st.integers(0, 3),
    files=st.lists(line_text, max_size=4),
    caps=st.fixed_dictionaries({name: st.integers(1, 20) for name in LIST_CAPS}),
    cap_chars=st.sampled_from((600, 120, 60, 0)),
    keep=st.none() | st.integers(0, 12),
)
def test_page_size_is_the_rendered_length(
    lists: dict[str, list[str]],
    goal: list[str],
    steps: list[str],
    requests: list[str],
    omitted: int,
    files: list[str],
    caps: dict[str, int],
    cap_chars: int,
    keep: int | None,
) -> None:
    """The inventory page measures a render exactly without building it."""
    digest = CompactionDigest(
        user_requests=requests,
        user_requests_omitted=omitted,
        read_files=files,
        modified_files=files[:1],
    )
    page = Page(lists, goal, steps, digest)
    assert page.size(caps, cap_chars, keep) == len(page.render(caps, cap_chars, keep))


def test_a_constraint_outlives_the_compaction_that_summarized_it(
    make_tl: Callable[..., Timeline],
) -> None:
    """The inventory carries the previous summary's constraints into the next one: a
    rule the user gave once stays in every later summary."""
    tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Build the parser."))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Never edit the migrations folder."))
    tl.append(blocks.assistant_completion("Understood."))
    seen = 0
    for i in range(30):
        coding_turn(tl, i)
        view = tl.render("sys")
        if view.compaction is not None:
            seen += 1
            assert "\n- Never edit the migrations folder.\n" in view.blocks[0].text
    assert seen >= 3
