"""A streamed import (#28 item 6): the file's blocks go into the store as they are read,
the same conversation as importing the whole timeline and persisting it, in memory that
does not grow with the file, and nothing stored when the input goes bad anywhere."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import ANTHROPIC_MESSAGES, OPENAI_MESSAGES, cli
from timeline import Timeline, blocks
from timeline._io.stream import import_stream
from timeline._io.streamed import StreamedImport
from timeline._model.errors import (
    ConflictError,
    DuplicateBlockIdError,
    InvalidBlockError,
    TimelineError,
)
from timeline._model.persistence import TimelineState

RESPONSES_INPUT = {
    "instructions": "be brief",
    "input": [
        {"role": "user", "content": "weather?"},
        {"type": "function_call", "call_id": "c1", "name": "wx", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ],
}
CASES = [
    (OPENAI_MESSAGES, "openai"),
    (ANTHROPIC_MESSAGES, "anthropic"),
    ({"messages": ANTHROPIC_MESSAGES["messages"], "system": "later"}, "anthropic"),
    (RESPONSES_INPUT, "responses"),
]


def _raw(data: Any) -> io.BytesIO:
    return io.BytesIO(json.dumps(data).encode())


def _stored(store: Any, cid: str) -> tuple[list[Any], TimelineState]:
    found = store.load_window(cid)
    assert found is not None
    return found[1].blocks, found[1].state


@pytest.mark.parametrize(("data", "fmt"), CASES)
def test_a_streamed_import_stores_what_persisting_the_whole_timeline_stores(
    store: Any, data: Any, fmt: Any
) -> None:
    """Blocks (ids, texts, calls, turns), the system prompt and the counters are those of
    ``import_stream`` + ``render(system)`` + ``persist``, on every backend."""
    whole = import_stream(_raw(data), fmt, "whole")
    whole.timeline.render(whole.system)
    whole.timeline.persist(store)
    streamed = StreamedImport(_raw(data), fmt, "streamed")
    assert store.commit_stream("streamed", blocks=streamed, finish=streamed.state) == 1
    (a, a_state), (b, b_state) = _stored(store, "whole"), _stored(store, "streamed")
    plain = [(x.id, x.type, x.text, x.turn_id, x.path, x.call_id, x.meta) for x in a]
    assert plain == [(x.id, x.type, x.text, x.turn_id, x.path, x.call_id, x.meta) for x in b]
    assert (streamed.system, streamed.system_messages) == (whole.system, whole.system_messages)
    assert b_state.last_render.system == a_state.last_render.system == whole.system
    assert b_state.last_render.fixed_tokens == a_state.last_render.fixed_tokens
    assert (b_state.block_seq, b_state.turn_seq) == (a_state.block_seq, a_state.turn_seq)
    assert b_state.current_turn_id == a_state.current_turn_id
    assert streamed.count == len(a) and streamed.timeline.blocks == ()
    loaded = Timeline.load(store, "streamed")
    assert loaded.render(streamed.system).to_openai() == (
        Timeline.load(store, "whole").render(whole.system).to_openai()
    )


def test_a_result_may_answer_a_call_of_an_earlier_message() -> None:
    """Each message's blocks leave the timeline at once: a tool result still finds its
    call, and a result with no call is still refused."""
    calls = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "k1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "k1", "content": "done"},
    ]
    streamed = StreamedImport(_raw(calls), "openai", "c")
    assert [b.type for b in streamed][-1] == "react.tool.result"
    orphan = StreamedImport(_raw([*calls[:1], calls[2]]), "openai", "c")
    with pytest.raises(InvalidBlockError, match=r"no earlier react\.tool\.call"):
        list(orphan)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["late message", "finish"])
def test_bad_input_anywhere_stores_nothing(store: Any, where: str) -> None:
    """An error from the blocks (a bad message after thousands of good ones) or from
    ``finish`` rolls the whole transaction back; other conversations are untouched."""
    tl = Timeline("other")
    tl.begin_turn()
    tl.append(blocks.user_prompt("kept"))
    tl.persist(store)
    good = [{"role": "user", "content": f"m{i}"} for i in range(3000)]
    data = [*good, {"role": "wizard"}] if where == "late message" else good
    streamed = StreamedImport(_raw(data), "openai", "c")

    def finish() -> TimelineState:
        raise TimelineError("refused at the end")

    with pytest.raises((InvalidBlockError, TimelineError)):
        store.commit_stream("c", blocks=streamed, finish=finish)
    assert store.load_window("c") is None
    assert store.turn_log("c") == []
    assert store.search("c", "m2999") == []
    assert [b.text for b in store.turn_log("other")] == ["", "kept"]
    streamed = StreamedImport(_raw(good), "openai", "c")  # the id is still free
    assert store.commit_stream("c", blocks=streamed, finish=streamed.state) == 1
    assert len(store.turn_log("c")) == 6000
    assert store.search("c", "m2999")[0].block.text == "m2999"


def test_a_streamed_commit_creates_a_conversation_and_refuses_twice_an_id(store: Any) -> None:
    streamed = StreamedImport(_raw(OPENAI_MESSAGES), "openai", "c")
    store.commit_stream("c", blocks=streamed, finish=streamed.state)
    again = StreamedImport(_raw(OPENAI_MESSAGES), "openai", "c")
    with pytest.raises(ConflictError):
        store.commit_stream("c", blocks=again, finish=again.state)
    tl = Timeline("d")
    tl.begin_turn()
    one = tl.append(blocks.user_prompt("x"))
    with pytest.raises(DuplicateBlockIdError, match="appears twice"):
        store.commit_stream("d", blocks=[one, one], finish=lambda: tl.snapshot().state)
    assert store.load_window("d") is None


def test_drain_is_only_for_a_new_timeline() -> None:
    """A persisted, compacted, pinned or cleared timeline holds blocks that are not all
    new or not all in its window: drain refuses and changes nothing."""
    import index_store

    tl = Timeline("c")
    tl.begin_turn()
    tl.append(blocks.user_prompt("a"))
    tl.pin([tl.blocks[-1].path])
    with pytest.raises(TimelineError, match="cannot be drained"):
        tl.drain()
    tl.unpin([tl.blocks[-1].path])
    tl.persist(index_store.open("memory://"))
    with pytest.raises(TimelineError, match="cannot be drained"):
        tl.drain()
    assert [b.text for b in tl.blocks] == ["", "a"]
    fresh = Timeline("d")
    fresh.begin_turn()
    fresh.append(blocks.user_prompt("b"))
    assert [b.text for b in fresh.drain()] == ["", "b"]
    assert fresh.blocks == ()
    assert fresh.append(blocks.user_prompt("c")).id == "b3"  # the counters go on


@pytest.mark.parametrize(
    "data",
    [
        RESPONSES_INPUT,
        RESPONSES_INPUT["input"],
        {"input": "just a prompt", "model": "m"},
        {"input": [{"role": "developer", "content": "dev"}, *RESPONSES_INPUT["input"]]},
        {"input": RESPONSES_INPUT["input"], "instructions": "after the input"},
        {"input": [{"type": "reasoning", "id": "rs_1", "summary": []}], "instructions": ""},
    ],
)
def test_responses_input_streams_like_the_whole_document(data: Any) -> None:
    """Responses items are read one at a time like messages: the same blocks, system
    prompt (instructions first, wherever the key is) and count as the whole-document
    importer."""
    from timeline._io.importers import import_conversation

    whole = import_conversation(data, "responses", "c")
    streamed = import_stream(_raw(data), "responses", "c")
    plain = [(b.type, b.text, b.path, b.call_id, b.meta) for b in whole.timeline.blocks]
    assert plain == [(b.type, b.text, b.path, b.call_id, b.meta) for b in streamed.timeline.blocks]
    assert (streamed.system, streamed.system_messages) == (whole.system, whole.system_messages)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"model": "m"}', "input: expected a list of input items"),
        (b'{"input": 5}', "input: expected a list of input items"),
        (b"[5]", r"input\[0\]: expected an object"),
        (b'[{"role": "user", "content": NaN}]', "not valid JSON"),
    ],
)
def test_bad_responses_input_is_refused(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidBlockError, match=message):
        list(StreamedImport(io.BytesIO(raw), "responses", "c"))


def _peak_import(tmp_path: Path, n: int, fmt: str = "openai") -> int:
    from timeline._cli.importing import cmd_import
    from timeline._cli.parser import build_parser

    src = tmp_path / f"tiny{n}.json"
    items = b",".join([b'{"role":"user","content":"a"}'] * n)
    src.write_bytes(b'{"input":[' + items + b"]}" if fmt == "responses" else b"[" + items + b"]")
    db = str(tmp_path / f"t{n}{fmt}.db")
    args = build_parser().parse_args(
        ["import", str(src), "--db", db, "--conversation", "c", "--format", fmt]
    )
    tracemalloc.start()
    try:
        assert cmd_import(args) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_import_memory_does_not_grow_with_the_file(tmp_path: Path, fmt: str) -> None:
    """``timeline import`` of 20,000 tiny messages peaks (Python objects) within 1.5 MiB of
    2,000's: about 100 bytes a message at most. Holding the timeline took about 1,360
    bytes a message (820 the blocks, the rest the render and the commit); a Responses
    file was also parsed whole first."""
    _peak_import(tmp_path, 10, fmt)  # lazy imports
    small, big = _peak_import(tmp_path, 2000, fmt), _peak_import(tmp_path, 20000, fmt)
    assert big - small < 1.5 * 2**20, (small, big)


@pytest.mark.slow
def test_a_failed_import_into_a_new_store_leaves_no_file(tmp_path: Path) -> None:
    src = tmp_path / "bad.json"
    src.write_text(json.dumps([{"role": "user", "content": "a"}] * 3000 + [{"role": "x"}]))
    out = cli("import", str(src), "--db", str(tmp_path / "new.db"), "--conversation", "c")
    assert out.returncode == 1 and "unknown role" in out.stderr
    assert os.listdir(tmp_path) == ["bad.json"]
    src.write_text(json.dumps([{"role": "user", "content": "a"}] * 3000))
    out = cli("import", str(src), "--db", str(tmp_path / "new.db"), "--conversation", "c")
    assert out.returncode == 0, out.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.json", "new.db"]
    assert "imported 6,000 blocks" in out.stdout


@pytest.mark.parametrize("error", [FileExistsError, PermissionError])
def test_a_store_created_meanwhile_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[OSError]
) -> None:
    """Another program creating ``--db`` while the import runs: its file is kept, the
    import's own is removed, and the error says nothing was imported."""
    from timeline._cli import importing
    from timeline._cli.parser import build_parser

    src = tmp_path / "a.json"
    src.write_text(json.dumps(OPENAI_MESSAGES))
    target = tmp_path / "new.db"

    def link(temp: str, path: str) -> None:
        target.write_text("theirs")
        raise error(17, "File exists")

    monkeypatch.setattr(importing.os, "link", link)
    args = build_parser().parse_args(
        ["import", str(src), "--db", str(target), "--conversation", "c"]
    )
    with pytest.raises(TimelineError, match="another program created it"):
        importing.cmd_import(args)
    assert target.read_text() == "theirs"
    assert sorted(os.listdir(tmp_path)) == ["a.json", "new.db"]


def test_a_streamed_import_is_read_once_and_its_state_only_after() -> None:
    streamed = StreamedImport(_raw(OPENAI_MESSAGES), "openai", "c")
    with pytest.raises(TimelineError, match="before every block was read"):
        streamed.state()
    first = list(streamed)
    assert streamed.state().block_seq == len(first)
    with pytest.raises(TimelineError, match="read once"):
        list(streamed)
