"""A compaction splices its summary into the visible stream instead of rebuilding it; the
result must equal a rebuild, whatever was pinned or hidden before."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.helpers.conversations import numbered
from timeline import CompactionPolicy, HeuristicCounter, TiktokenCounter, Timeline, blocks
from timeline._state.stream import VisibleStream
from timeline._tokens import BlockTokenMemo

STEPS = st.lists(
    st.tuples(
        st.integers(0, 3),  # tool calls in this step
        st.integers(0, 3_000),  # result size
        st.booleans(),  # new turn first
        st.sampled_from(
            ["none", "pin", "pin_call", "hide", "hide_replaced", "shared_note", "pending"]
        ),
    ),
    min_size=1,
    max_size=30,
)
SHARED = "ar:notes.shared"


def _rebuilt(tl: Timeline) -> VisibleStream:
    fresh = VisibleStream(tl.token_memo)
    ledger = tl._ledger
    fresh.rebuild(ledger.blocks, ledger.summary_index, ledger.pinned)
    fresh.resolve()
    return fresh


def _fields(s: VisibleStream) -> tuple[Any, ...]:
    return (
        [b.id for b in s.blocks],
        [b.text for b in s.blocks],
        s.costs,
        s.source_index,
        s.positions,
        s.anchor,
        s.tokens,
        s.pinned_tokens,
        s.consumed,
        s.open_calls,
        s._pos,
        s._prev_kind,
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, budget=st.integers(1_500, 6_000))
def test_spliced_stream_equals_a_rebuild(steps: list[Any], budget: int) -> None:
    tl = Timeline("s", policy=CompactionPolicy(max_tokens=budget), token_counter=HeuristicCounter())
    tl.begin_turn()
    late_results: list[Any] = []
    for n_calls, size, new_turn, act in steps:
        if new_turn:
            tl.begin_turn()
            prompt = tl.append(blocks.user_prompt("please do the thing " * 4))
            if act == "pin":
                tl.pin([prompt.path])
            elif act.startswith("hide"):
                tl.hide([prompt.path], "(shortened)" if act == "hide_replaced" else None)
        if act == "shared_note":
            # several blocks under one path: a hidden path renders once, at its first block,
            # so compacting that block away changes how the later ones render
            note = msgspec.structs.replace(blocks.assistant_completion("a note"), path=SHARED)
            tl.append(note)
            tl.hide([SHARED], "(notes hidden)")
        for late in late_results:
            tl.append(late)
        late_results = []
        for i in range(n_calls):
            call = tl.append(blocks.tool_call("bash", {"i": i}))
            if act == "pin_call":
                tl.pin([call.path])
            result = blocks.tool_result(call.call_id or "", "r " * (size // 2))
            if act == "pending" and i == n_calls - 1:
                late_results.append(result)  # rendered while the call waits for it
            else:
                tl.append(result)
        if not late_results:
            tl.append(blocks.assistant_completion("done with it"))
        view = tl.render("system")
        if view.compaction is not None:
            hidden = any(b.hidden for b in tl.blocks)
            event("compacted with pins/hides" if tl.pinned_ids or hidden else "compacted")
        stream = tl._ledger.refresh_stream()
        stream.resolve()
        assert _fields(stream) == _fields(_rebuilt(tl))


def test_a_compaction_splices_instead_of_rebuilding(monkeypatch: Any) -> None:
    """The plain case (nothing hidden) never rebuilds after the first render."""
    rebuilds = 0
    original = VisibleStream.rebuild

    def counting(self: VisibleStream, *args: Any) -> None:
        nonlocal rebuilds
        rebuilds += 1
        original(self, *args)

    monkeypatch.setattr(VisibleStream, "rebuild", counting)
    tl = Timeline("s", policy=CompactionPolicy(max_tokens=2_000))
    compactions = 0
    for turn in range(40):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"step {turn}: keep going with the refactor"))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{turn}.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "def f():\n    return 1\n" * 20))
        compactions += tl.render("system").compaction is not None
    assert compactions >= 3
    assert rebuilds == 1  # the first render's


def test_a_stream_resolves_its_largest_bounds_first() -> None:
    """With ``enough``, a stream replaces its upper bounds by exact costs largest first
    (each exact count then takes the most slack off the total); left in append order,
    it would tokenize the small last block and leave the largest bound standing."""
    big = "word " * 400
    stream = VisibleStream(memo=BlockTokenMemo(TiktokenCounter()))
    stream.rebuild(
        numbered(
            blocks.user_prompt(big), blocks.assistant_completion("ok"), blocks.user_prompt("why")
        ),
        -1,
        frozenset(),
    )
    assert stream.pending == [0, 1, 2]
    stream.resolve(lambda: len(stream.pending) < 3)
    assert sorted(stream.pending) == [1, 2]
