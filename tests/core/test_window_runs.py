"""A stored window names its blocks as runs of consecutive ids (#28 item 6): the window
row of a long conversation stays small, every reference comes back exactly, and a reader
that does not know runs refuses the row instead of misreading it."""

from __future__ import annotations

import zlib
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import index_store
from index_store._common import decode_window, encode_window, encode_window_row
from index_store._window import MAX_RUN, RefRuns, WindowRecord, WindowRef, expand
from timeline import Timeline, blocks
from timeline._model import codec
from timeline._model.errors import CorruptRecordError
from timeline._model.persistence import TimelineState


def _refs(ids: list[tuple[str, bool, str | None]]) -> list[WindowRef]:
    return [WindowRef(i, h, r) for i, h, r in ids]


def test_consecutive_ids_are_one_reference() -> None:
    ids = [(f"b{n}", False, None) for n in range(1, 701)]
    assert RefRuns.of(ids) == [WindowRef("b1", then=699)]
    mixed = [
        ("b8", False, None),
        ("b9", False, None),
        ("b10", False, None),  # 9 -> 10: still one run
        ("b11", True, "[hidden]"),  # hidden: a reference of its own
        ("b12", False, None),
        ("b13", False, None),
        ("x", False, None),  # no number
        ("s07", False, None),  # a leading zero: s0 and 7
        ("s08", False, None),
        ("b15", False, None),  # a gap
    ]
    assert RefRuns.of(mixed) == [
        WindowRef("b8", then=2),
        WindowRef("b11", True, "[hidden]"),
        WindowRef("b12", then=1),
        WindowRef("x"),
        WindowRef("s07", then=1),
        WindowRef("b15"),
    ]
    assert expand(RefRuns.of(mixed)) == _refs(mixed)


_ID = st.one_of(
    st.integers(0, 30).map(lambda n: f"b{n}"),
    st.integers(0, 12).map(lambda n: f"s0{n}"),
    st.text("ab0129", min_size=1, max_size=4),
)


@given(st.lists(st.tuples(_ID, st.booleans(), st.sampled_from([None, "", "r"])), max_size=60))
def test_any_references_come_back_exactly(ids: list[tuple[str, bool, str | None]]) -> None:
    refs = RefRuns.of(ids)
    assert expand(refs) == _refs(ids)
    assert len(refs) <= len(ids)


@pytest.mark.slow
def test_a_run_is_cut_at_its_longest() -> None:
    runs = RefRuns()
    for n in range(MAX_RUN + 3):
        runs.add(f"b{n}")
    assert runs.done() == [WindowRef("b0", then=MAX_RUN), WindowRef(f"b{MAX_RUN + 1}", then=1)]


def _row(refs: list[WindowRef], version: int = 1) -> bytes:
    from index_store._common import frame_runs

    return frame_runs(WindowRecord("c", refs, TimelineState()), version)


@pytest.mark.parametrize(
    ("refs", "why"),
    [
        ([WindowRef("b1", True, None, 3)], "starts a run it cannot start"),
        ([WindowRef("b1", False, "r", 3)], "starts a run it cannot start"),
        ([WindowRef("plain", then=3)], "starts a run it cannot start"),
        ([WindowRef("b1", then=MAX_RUN + 1)], "has a run of"),
        ([WindowRef("b1", then=-2)], "has a run of"),
    ],
)
def test_a_run_no_writer_makes_is_a_damaged_window(refs: list[WindowRef], why: str) -> None:
    with pytest.raises(CorruptRecordError, match=why):
        decode_window(_row(refs), "c", 1)


def test_a_reader_without_runs_refuses_a_window_that_has_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Version 1 readers would take a run for its first id: the record says version 2,
    which they refuse. A window without a run stays version 1, readable by them."""
    tl = Timeline("c")
    tl.begin_turn()
    tl.append(blocks.user_prompt("a"))
    with_run = encode_window(tl.snapshot(), 1)
    tl.hide([tl.blocks[-1].path])
    without = encode_window(tl.snapshot(), 1)
    monkeypatch.setattr(codec, "SCHEMA_VERSION", 1)
    assert [r.id for r in decode_window(without, "c", 1).refs] == ["b1", "b2"]
    with pytest.raises(CorruptRecordError, match="newer than this library"):
        decode_window(with_run, "c", 1)


def test_the_window_row_of_a_long_conversation_stays_small(tmp_path: Any) -> None:
    """10,000 blocks: one reference a block took over 20 KB even compressed (about 2.2
    bytes a block); with runs the row is a few dozen bytes, and loads back every block."""
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    tl = Timeline("c")
    for n in range(5000):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"m{n}"))
    tl.persist(store)
    size = store._query("SELECT length(live_window) FROM conversations")[0][0]
    one_a_block = zlib.compress(encode_window_row(tl.snapshot()), 6)
    assert size < 300 and len(one_a_block) > 20_000, (size, len(one_a_block))
    found = store.load_window("c")
    assert found is not None
    assert [b.id for b in found[1].blocks] == [b.id for b in tl.blocks]
    assert msgspec.structs.asdict(found[1].state)["block_seq"] == 10000
    store.close()
