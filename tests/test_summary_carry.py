"""What one compaction keeps for the next (the newest summary's sections, stripped text
and digest) equals what the next would parse, convert or strip without it."""

from __future__ import annotations

import contextlib
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import timeline.compaction.digest as digest_module
import timeline.compaction.summary_text as summary_text
from index_store.memory import MemoryStore
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks
from timeline.compaction.digest import CompactionDigest, digest_from_meta
from timeline.compaction.summarizers import _sections
from timeline.compaction.summarizers._page import Page
from timeline.compaction.summarizers._sections import items, parse_sections
from timeline.compaction.summarizers.inventory import LIST_CAPS
from timeline.model.block import CONV_RANGE_SUMMARY
from timeline.model.errors import TimelineError

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


def forget() -> None:
    """Drop what the newest compaction kept (as in a fresh process)."""
    _sections.remember("", None)
    summary_text._stripped = None
    digest_module._latest = None


def summaries(tl: Timeline) -> list[tuple[str, dict[str, Any]]]:
    """Every summary block's text and meta."""
    return [(b.text, b.meta) for b in tl.blocks if b.type == CONV_RANGE_SUMMARY]


def run(steps: list[Any], budget: int, cold: bool) -> list[Any]:
    """The summaries after each step; ``cold`` forgets before every render."""
    kw: dict[str, Any] = {
        "policy": CompactionPolicy(max_tokens=budget, min_split_prefix_blocks=2),
        "token_counter": HeuristicCounter(),
    }
    tl = Timeline("c", **kw)
    store = MemoryStore()
    tl.begin_turn()
    out: list[Any] = []
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
        if cold:
            forget()
        with contextlib.suppress(TimelineError):
            tl.render("system")
        out.append(summaries(tl))
        check_kept(tl)
    return out


def check_kept(tl: Timeline) -> None:
    """What the newest compaction kept equals what parsing, converting and stripping
    its summary give."""
    latest = [b for b in tl.blocks if b.type == CONV_RANGE_SUMMARY]
    known = summary_text._stripped
    if known is not None:
        forget_strip, summary_text._stripped = known, None
        assert summary_text.strip_rebuilt_sections(known[0]) == known[1]
        summary_text._stripped = forget_strip
    kept = _sections._latest
    if kept is not None:
        parsed = parse_sections(kept[0])
        expected = {n: items(parsed[n]) for n in parsed if n not in ("Goal", "User Requests")}
        expected["Goal"] = parsed.get("Goal", [])
        expected = {n: lines for n, lines in expected.items() if lines and n != "Progress"}
        assert kept[1] == expected
    if latest:
        raw = latest[-1].meta["compaction_digest"]
        assert digest_from_meta(latest[-1].meta) == msgspec.convert(raw, CompactionDigest)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, budget=st.integers(5_000, 12_000))
def test_kept_summary_state_changes_nothing(steps: list[Any], budget: int) -> None:
    """Summaries are identical whether each compaction reuses what the previous one kept
    or parses everything again (as after a load in a fresh process)."""
    warm = run(steps, budget, cold=False)
    cold = run(steps, budget, cold=True)
    assert warm == cold


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
        assert _sections._latest is not None  # the next compaction reuses it
    assert summaries(tl)[-1] != before  # compacted again after the load point
    warm = summaries(tl)[-1]
    forget()
    for i in range(24, 40):
        turn(loaded, i)
    assert summaries(loaded)[-1] == warm


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
