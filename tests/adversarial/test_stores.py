"""The store corpus, on memory, SQLite and real PostgreSQL (BLOCK_TIMELINE_PG_DSN): bad
arguments, hostile text, and rows damaged behind the store's back. Each case has its
exact outcome, and another conversation goes on persisting with nothing lost."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from index_store._common import encode_block_row, encode_window_row
from tests.adversarial.cases import base, load, new_tl, recovers
from tests.helpers.stores import STORE_KINDS, open_store
from timeline import (
    CorruptRecordError,
    InvalidBlockError,
    InvalidConversationIdError,
    NotFoundError,
    Timeline,
    TimelineError,
    blocks,
)

IBE = InvalidBlockError
ICE = InvalidConversationIdError


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    s = open_store(request.param, tmp_path)
    yield s
    s.close()


def _snap(store: Any) -> Any:
    return load(store).snapshot()


ARGUMENTS: dict[str, tuple[Callable[[Any], object], type[TimelineError]]] = {
    "search-query-int": (lambda s: s.search("adv", 5), IBE),
    "search-query-none": (lambda s: s.search("adv", None), IBE),
    "search-query-bytes": (lambda s: s.search("adv", b"list"), IBE),
    "search-limit-zero": (lambda s: s.search("adv", "list", limit=0), IBE),
    "search-limit-negative": (lambda s: s.search("adv", "list", limit=-1), IBE),
    "search-limit-bool": (lambda s: s.search("adv", "list", limit=True), IBE),
    "search-limit-str": (lambda s: s.search("adv", "list", limit="3"), IBE),
    "search-limit-float": (lambda s: s.search("adv", "list", limit=1.5), IBE),
    "search-limit-none": (lambda s: s.search("adv", "list", limit=None), IBE),
    "search-conversation-int": (lambda s: s.search(5, "list"), ICE),
    "search-conversation-surrogate": (lambda s: s.search("\ud800", "list"), ICE),
    "search-conversation-nul": (lambda s: s.search("a\x00", "list"), ICE),
    "get-block-int": (lambda s: s.get_block("adv", 5), IBE),
    "get-block-surrogate": (lambda s: s.get_block("adv", "\udcff"), IBE),
    "get-block-nul-conversation": (lambda s: s.get_block("\x00", "b1"), ICE),
    "get-block-missing": (lambda s: s.get_block("adv", "nope"), NotFoundError),
    "read-path-none": (lambda s: s.read("adv", None), IBE),
    "read-path-nul": (lambda s: s.read("adv", "a\x00b"), IBE),
    "turn-log-int": (lambda s: s.turn_log("adv", 5), IBE),
    "turn-log-surrogate": (lambda s: s.turn_log("adv", "\ud800"), IBE),
    "load-window-int": (lambda s: s.load_window(5), ICE),
    "load-window-surrogate": (lambda s: s.load_window("\ud800"), ICE),
    "load-window-nul": (lambda s: s.load_window("a\x00"), ICE),
    "load-missing": (lambda s: Timeline.load(s, "nope"), NotFoundError),
    "save-checkpoint-int-id": (lambda s: s.save_checkpoint("adv", 5, _snap(s)), IBE),
    "save-checkpoint-nul-id": (lambda s: s.save_checkpoint("adv", "c\x00", _snap(s)), IBE),
    "load-checkpoint-surrogate": (lambda s: s.load_checkpoint("adv", "\ud800"), IBE),
    "load-checkpoint-missing": (lambda s: s.load_checkpoint("adv", "nope"), NotFoundError),
    "delete-checkpoint-int": (lambda s: s.delete_checkpoint(5, "x"), ICE),
    "list-checkpoints-none": (lambda s: s.list_checkpoints(None), ICE),
    "delete-int": (lambda s: s.delete(5), ICE),
    "persist-into-conversation-nul": (lambda s: new_tl("a\x00"), ICE),
}


@pytest.mark.parametrize("name", [pytest.param(n, id=f"typed-store-{n}") for n in ARGUMENTS])
def test_store_argument(store: Any, name: str) -> None:
    """A bad argument to a store method: its typed error; the store goes on."""
    run, expect = ARGUMENTS[name]
    tl = base(store)
    committed = [b.id for b in tl.blocks]
    with pytest.raises(TimelineError) as info:
        run(store)
    assert type(info.value) is expect, f"{type(info.value).__name__}: {info.value}"
    recovers(tl, store, committed)


def _append_text(text: str, kind: str = "result") -> Callable[[Timeline], Any]:
    def run(tl: Timeline) -> Any:
        if kind == "result":
            call = tl.append(blocks.tool_call("cat", {"f": "x"}))
            return tl.append(blocks.tool_result(call.call_id or "", text))
        return tl.append(blocks.user_prompt(text))

    return run


def _words(n: int) -> str:
    return " ".join(f"w{i:x}" for i in range(n))


TEXTS: dict[str, tuple[Callable[[Timeline], Any], str | None]] = {
    "nul-in-result": (_append_text("left\x00right needle\x00"), "needle"),
    "nul-in-prompt": (_append_text("\x00needle\x00", "prompt"), "needle"),
    "only-nul": (_append_text("\x00\x00\x00"), None),
    "three-megabytes": (_append_text("needle " + "x" * 3_000_000), "needle"),
    "two-megabytes-distinct-words": (_append_text("needle " + _words(250_000)), "needle"),
    "long-single-word": (_append_text("needle " + "y" * 100_000), "needle"),
    "multibyte-megabyte": (_append_text("needle " + "\u00e9\u4e2d\U0001f600 " * 200_000), "needle"),
    "fts-operators": (_append_text('needle AND OR NOT "( ) * ^ NEAR : -'), "needle"),
    "surrogate-cleaned": (_append_text("needle \ud800"), "needle"),
}


@pytest.mark.parametrize("name", [pytest.param(n, id=f"valid-store-text-{n}") for n in TEXTS])
def test_hostile_text_is_kept_whole(store: Any, name: str) -> None:
    """Text a backend might choke on persists, loads back exactly, stays searchable, and
    later persists still work."""
    run, needle = TEXTS[name]
    tl = base(store)
    committed = [b.id for b in tl.blocks]
    stored = run(tl)
    tl.persist(store)
    assert load(store).get(stored.id).text == stored.text
    assert store.get_block("adv", stored.id).text == stored.text
    if needle is not None:
        assert stored.id in [h.block.id for h in store.search("adv", needle)]
    recovers(tl, store, committed)


QUERIES: dict[str, tuple[str, list[str]]] = {
    "punctuation-only": ("!!! ??? ...", []),
    "fts-syntax": ('"list" AND (files OR NEAR(x)) *', ["b2"]),
    "surrogate": ("files \ud800", ["b2"]),
    "hundred-terms": (" ".join(["files"] + [f"t{i}" for i in range(100)]), ["b2"]),
    "sql-quote": ("files'; DROP TABLE blocks; --", ["b2"]),
    "unknown-conversation": ("files", []),
}


@pytest.mark.parametrize("name", [pytest.param(n, id=f"valid-store-query-{n}") for n in QUERIES])
def test_odd_query(store: Any, name: str) -> None:
    """An odd query never raises: the hits are exactly the expected blocks."""
    query, expected = QUERIES[name]
    tl = base(store)
    cid = "other" if name == "unknown-conversation" else "adv"
    assert [h.block.id for h in store.search(cid, query)] == expected
    recovers(tl, store, [b.id for b in tl.blocks])


# -- rows damaged behind the store's back ---------------------------------------------------


def _kind(store: Any) -> str:
    return type(store).__name__.removesuffix("Store").lower()


def _set_body(store: Any, block_id: str, value: Any) -> None:
    kind = _kind(store)
    if kind == "memory":
        conv = store._data["bad"]
        conv.rows[block_id] = conv.rows[block_id]._replace(body=value)
    elif kind == "sqlite":
        store._conn.execute(
            "UPDATE blocks SET body = ? WHERE block_id = ? AND seq >> 32 = "
            "(SELECT conv_no FROM conversations WHERE conversation_id = 'bad')",
            (value, block_id),
        )
    else:
        with store._tx() as cur:
            cur.execute(
                "UPDATE bt_blocks SET body = %s WHERE conversation_id = 'bad' AND block_id = %s",
                (value, block_id),
            )


def _set_window(store: Any, value: Any) -> None:
    kind = _kind(store)
    if kind == "memory":
        store._data["bad"].window = value
    elif kind == "sqlite":
        store._conn.execute(
            "UPDATE conversations SET live_window = ? WHERE conversation_id = 'bad'", (value,)
        )
    else:
        with store._tx() as cur:
            cur.execute(
                "UPDATE bt_conversations SET live_window = %s WHERE conversation_id = 'bad'",
                (value,),
            )


def _set_version(store: Any, value: Any) -> None:
    if _kind(store) == "memory":
        store._data["bad"].version = value
    else:
        store._conn.execute(
            "UPDATE conversations SET version = ? WHERE conversation_id = 'bad'", (value,)
        )


def _invalid_utf8_record() -> bytes:
    good = encode_block_row(blocks.note("x"))
    return good.replace(b"\xa1x", b"\xa1\xff")


def _wrong_schema(store: Any) -> bytes:
    return encode_window_row(load(store, "bad").snapshot())


CORRUPTIONS: dict[str, tuple[Callable[[Any], None], tuple[str, ...], tuple[str, ...]]] = {
    # name: (damage, backends, readers that must raise CorruptRecordError)
    "body-garbage": (
        lambda s: _set_body(s, "b2", b"\x00\xff garbage"),
        ("memory", "sqlite", "postgres"),
        ("load", "get_block", "read", "turn_log", "search"),
    ),
    "body-truncated": (
        lambda s: _set_body(s, "b2", s_body(s)[:20]),
        ("memory", "sqlite", "postgres"),
        ("load", "get_block", "read", "turn_log", "search"),
    ),
    "body-empty": (
        lambda s: _set_body(s, "b2", b""),
        ("memory", "sqlite", "postgres"),
        ("load", "get_block", "read", "turn_log", "search"),
    ),
    "body-invalid-utf8": (
        lambda s: _set_body(s, "b2", _invalid_utf8_record()),
        ("memory", "sqlite", "postgres"),
        ("load", "get_block", "read", "turn_log", "search"),
    ),
    "body-wrong-schema": (
        lambda s: _set_body(s, "b2", _wrong_schema(s)),
        ("memory", "sqlite", "postgres"),
        ("load", "get_block", "read", "turn_log", "search"),
    ),
    "body-text-not-blob": (
        lambda s: _set_body(s, "b2", "a TEXT value"),
        ("memory", "sqlite"),
        ("load", "get_block", "read", "turn_log", "search"),
    ),
    "window-garbage": (
        lambda s: _set_window(s, b"\x93garbage"),
        ("memory", "sqlite", "postgres"),
        ("load",),
    ),
    "window-text-not-blob": (lambda s: _set_window(s, "window"), ("memory", "sqlite"), ("load",)),
    "window-names-missing-block": (
        lambda s: _set_window(s, _window_with_ghost(s)),
        ("memory", "sqlite", "postgres"),
        ("load",),
    ),
    "version-not-int": (
        lambda s: _set_version(s, "abc"),
        ("memory", "sqlite"),
        ("load", "persist"),
    ),
    "version-negative": (lambda s: _set_version(s, -3), ("memory", "sqlite"), ("load", "persist")),
}


def s_body(store: Any) -> bytes:
    return encode_block_row(store.get_block("bad", "b2"))


def _window_with_ghost(store: Any) -> bytes:
    snap = load(store, "bad").snapshot()
    ghost = msgspec.structs.replace(snap.blocks[1], id="ghost")
    return encode_window_row(msgspec.structs.replace(snap, blocks=[*snap.blocks, ghost]))


READERS: dict[str, Callable[[Any], object]] = {
    "load": lambda s: load(s, "bad"),
    "get_block": lambda s: s.get_block("bad", "b2"),
    "read": lambda s: s.read("bad", "ar:t1.user.prompt"),
    "turn_log": lambda s: s.turn_log("bad"),
    "search": lambda s: s.search("bad", "list files"),
    "persist": lambda s: _persist_more(s),
}


def _persist_more(store: Any) -> None:
    tl = new_tl("bad")
    tl.begin_turn()
    tl.append(blocks.user_prompt("more"))
    tl._ledger.persisted(1, frozenset(), None)  # as if it had loaded version 1
    tl.persist(store)


def _corruption_cases() -> list[Any]:
    out = []
    for name, (_, backends, readers) in CORRUPTIONS.items():
        for backend in backends:
            for reader in READERS:
                kind = "typed" if reader in readers else "valid"
                if reader == "persist" and kind == "valid":
                    continue
                out.append(
                    pytest.param(
                        backend, name, reader, id=f"{kind}-corrupt-{backend}-{name}-{reader}"
                    )
                )
    return out


@pytest.mark.parametrize(("backend", "name", "reader"), _corruption_cases())
def test_corrupt_row(backend: str, name: str, reader: str, tmp_path: Path) -> None:
    """A damaged row: CorruptRecordError naming conversation (and block) from every reader
    that touches it, the others unaffected; check_integrity reports it; another
    conversation goes on persisting."""
    store = open_store(backend, tmp_path)
    try:
        good = base(store)
        base(store, "bad")
        damage, _, readers = CORRUPTIONS[name]
        damage(store)
        if reader in readers:
            with pytest.raises(TimelineError) as info:
                READERS[reader](store)
            assert type(info.value) is CorruptRecordError, (
                f"{type(info.value).__name__}: {info.value}"
            )
            assert info.value.conversation_id == "bad"
            assert "'bad'" in str(info.value)
        else:
            READERS[reader](store)
        problems = store.check_integrity()
        assert problems and all(p.conversation_id in ("bad", None) for p in problems)
        recovers(good, store, [b.id for b in good.blocks])
    finally:
        store.close()


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("x", id="typed-corrupt-sqlite-schema-version-text"),
        pytest.param(1.5, id="typed-corrupt-sqlite-schema-version-float"),
    ],
)
def test_sqlite_schema_version_not_an_integer(tmp_path: Path, value: Any) -> None:
    """A schema_version that is not an integer: CorruptRecordError on open, not TypeError."""
    import index_store

    url = f"sqlite:///{tmp_path / 's.db'}"
    store = index_store.open(url)
    store._conn.execute("UPDATE schema_version SET version = ?", (value,))
    store.close()
    with pytest.raises(TimelineError) as info:
        index_store.open(url)
    assert type(info.value) is CorruptRecordError


def test_corrupt_row_found_by_check_integrity_without_raising(tmp_path: Path) -> None:
    """check_integrity lists each damaged row (conversation and block), never raises."""
    store = open_store("sqlite", tmp_path)
    base(store, "bad")
    _set_body(store, "b2", b"junk")
    _set_body(store, "b3", b"junk")
    problems = store.check_integrity()
    # the window (stops at its first bad block), then each bad row
    assert [(p.conversation_id, p.block_id) for p in problems] == [
        ("bad", "b2"),
        ("bad", "b2"),
        ("bad", "b3"),
    ]
    store.close()
