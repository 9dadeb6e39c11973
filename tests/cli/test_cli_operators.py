"""What operators and library users expect around the CLI (issue 27): a plain path opens
a SQLite store, read-only opens create nothing, stores and pages are owner-only,
``Timeline.load_or_create`` and the install hint of a missing extra."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import index_store
from timeline import StoreUnavailableError


def test_open_takes_a_plain_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """index_store.open("agent.db") opens (and creates) a SQLite store, as --db does;
    a pathlib.Path works too."""
    monkeypatch.chdir(tmp_path)
    store = index_store.open("agent.db")
    assert isinstance(store, index_store.SqliteStore) and store.path == "agent.db"
    store.close()
    assert (tmp_path / "agent.db").is_file()
    again = index_store.open(tmp_path / "agent.db")
    assert isinstance(again, index_store.SqliteStore)
    again.close()


def test_open_without_create_refuses_a_missing_file(tmp_path: Path) -> None:
    """create=False on a missing SQLite file names the path and creates nothing."""
    for url in (str(tmp_path / "typo.db"), f"sqlite:///{tmp_path / 'typo.db'}"):
        with pytest.raises(StoreUnavailableError, match=r"typo\.db"):
            index_store.open(url, create=False)
    assert list(tmp_path.iterdir()) == []
    index_store.open(tmp_path / "real.db").close()
    index_store.open(tmp_path / "real.db", create=False).close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_sqlite_store_is_owner_only(tmp_path: Path) -> None:
    """A new store file and its -wal/-shm files are created 0600 whatever the umask; an
    existing file keeps its mode."""
    old = os.umask(0o022)
    try:
        store = index_store.open(tmp_path / "new.db")
        store.close()
        reopened = index_store.open(tmp_path / "new.db")  # -wal and -shm exist while open
        sidecars = [tmp_path / "new.db-wal", tmp_path / "new.db-shm"]
        assert all(p.exists() for p in sidecars)
        assert [_mode(p) for p in [tmp_path / "new.db", *sidecars]] == [0o600] * 3
        reopened.close()
        shared = tmp_path / "shared.db"
        shared.touch(mode=0o644)
        os.chmod(shared, 0o644)
        index_store.open(shared).close()
        assert _mode(shared) == 0o644
    finally:
        os.umask(old)


def test_load_or_create(tmp_path: Path) -> None:
    """load_or_create: a new timeline for an unknown id, the stored one after a persist
    (same blocks, same version), and the async twin agrees."""
    import asyncio

    from timeline import CompactionPolicy, Timeline, blocks

    store = index_store.open(tmp_path / "s.db")
    new = Timeline.load_or_create(store, "c", policy=CompactionPolicy(max_tokens=4_000))
    assert (new.blocks, new.version) == ((), 0)
    new.begin_turn()
    new.append(blocks.user_prompt("hello"))
    assert new.persist(store) == 1
    again = Timeline.load_or_create(store, "c", policy=CompactionPolicy(max_tokens=4_000))
    assert (again.blocks, again.version) == (new.blocks, 1)
    again.begin_turn()
    assert again.persist(store) == 2
    loaded = asyncio.run(Timeline.aload_or_create(store, "c"))
    fresh = asyncio.run(Timeline.aload_or_create(store, "other"))
    assert (loaded.version, len(loaded.blocks), fresh.version) == (2, 3, 0)
    store.close()


def test_missing_extra_hint_works_from_a_clone() -> None:
    """Run from this checkout, the install hint is ``pip install -e '<checkout>[extra]'``,
    which pip accepts as a requirement of this project with that extra; it never names a
    package index form that no index serves."""
    import shlex

    from timeline.integrations import missing_extra

    message = str(missing_extra("langchain", "langchain"))
    assert "block-timeline[langchain]'" not in message
    clone = message.split("pip install -e ", 1)[1]
    root = Path(__file__).resolve().parent.parent.parent
    (target,) = shlex.split(clone)
    assert target == f"{root}[langchain]"
    assert (root / "pyproject.toml").is_file()


def test_missing_extra_hint_outside_a_checkout_names_the_packages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Installed from a wheel (no checkout around the package), the hint installs the
    extra's own packages, as the installed metadata lists them."""
    import shlex

    from timeline._model import extras
    from timeline.integrations import missing_extra

    monkeypatch.setattr(extras, "source_tree", lambda: None)
    message = str(missing_extra("langchain", "langchain"))
    line = message.split("pip install ", 1)[1].split(" (", 1)[0]
    assert sorted(shlex.split(line)) == ["langchain<2,>=1.5.2", "langgraph<2,>=1.2.24"]


DATA = Path(__file__).parent.parent / "data"


def test_the_window_state_keeps_the_last_budget_and_system_prompt(tmp_path: Path) -> None:
    """A render records its budget, trigger and system prompt in the persisted state; a
    loaded timeline still has them; a render under a policy without a budget records None."""
    from timeline import CompactionPolicy, Timeline, blocks

    store = index_store.open(tmp_path / "s.db")
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=16_000, trigger_ratio=0.8))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    assert (tl.snapshot().state.last_render.system, tl.snapshot().state.last_render.budget) == (
        None,
        None,
    )
    tl.render("You are terse.")
    tl.persist(store)
    state = Timeline.load(store, "c").snapshot().state
    assert (
        state.last_render.budget,
        state.last_render.trigger_ratio,
        state.last_render.system,
    ) == (16_000, 0.8, "You are terse.")
    plain = Timeline.load(store, "c", policy=CompactionPolicy())
    plain.render("")
    assert (
        plain.snapshot().state.last_render.budget,
        plain.snapshot().state.last_render.system,
    ) == (None, "")
    store.close()


def test_a_system_prompt_of_a_str_subclass_persists(tmp_path: Path) -> None:
    """A system prompt given as a str subclass (LangChain's ``message.text`` is one) is
    kept as plain text: the window state still encodes and loads."""
    from timeline import CompactionPolicy, Timeline, blocks

    class Text(str):
        pass

    store = index_store.open(tmp_path / "s.db")
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=16_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    tl.render(Text("You are terse."))
    assert type(tl.snapshot().state.last_render.system) is str
    tl.persist(store)
    assert Timeline.load(store, "c").snapshot().state.last_render.system == "You are terse."
    store.close()


def test_old_stored_state_decodes_without_budget_or_system() -> None:
    """Window and snapshot rows written before these fields existed still decode; the
    new fields are None (tests/data/*_v1.msgpack)."""
    from index_store._common import decode_snapshot_row, decode_window_row

    record = decode_window_row((DATA / "window_v1.msgpack").read_bytes(), "c1")
    snap = decode_snapshot_row((DATA / "snapshot_v1.msgpack").read_bytes(), "c1", "window")
    for state in (record.state, snap.state):
        assert (
            state.last_render.budget,
            state.last_render.trigger_ratio,
            state.last_render.system,
        ) == (None, None, None)


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("anthropic", {"system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}),
        ("anthropic", {"system": "Be terse."}),
        ("openai", [{"role": "system", "content": "S1"}, {"role": "developer", "content": "S2"}]),
        ("responses", {"instructions": "Be terse."}),
    ],
)
def test_streamed_import_keeps_the_system_prompt(fmt: str, data: object) -> None:
    """import_stream returns the system prompt the file carried, as the whole-document
    importer does."""
    import io
    import json

    from timeline._io.importers import import_conversation
    from timeline._io.stream import import_stream

    user = {"role": "user", "content": "hi"}
    if isinstance(data, dict):
        data = {**data, ("input" if fmt == "responses" else "messages"): [user]}
    else:
        data = [*data, user]  # type: ignore[list-item]
    streamed = import_stream(io.BytesIO(json.dumps(data).encode()), fmt, "c")  # type: ignore[arg-type]
    whole = import_conversation(data, fmt, "c")  # type: ignore[arg-type]
    assert (streamed.system, streamed.system_messages) == (whole.system, whole.system_messages)
    assert streamed.system
