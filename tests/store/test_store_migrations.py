"""Old stores open and upgrade with everything intact (#28): a SQLite schema-2 file and a
PostgreSQL schema-1 dump, each written by the code of the commit that introduced that
schema (``tests/data/store_v2.sqlite``, ``tests/data/pg_store_v1.sql``), with what that
code read back from them (``*_expected.json``: turn logs, summaries with their digests,
a checkpoint and the render of each loaded window). Search is this code's: an upgraded
store is indexed again and searches as a store holding the same rows written now."""

from __future__ import annotations

import secrets
import shutil
import sqlite3
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.helpers.migrations import DATA, POLICY, expected, observe
from tests.helpers.search_reference import assert_searches_as_written_now
from tests.helpers.stores import PG_DSN
from timeline import Timeline


def test_a_schema_2_sqlite_store_upgrades_to_schema_6(tmp_path: Path) -> None:
    db = tmp_path / "v2.sqlite"
    shutil.copy(DATA / "store_v2.sqlite", db)
    want = expected("store_v2_expected.json")
    assert observe(f"sqlite:///{db}") == want
    with sqlite3.connect(db) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
        unframed = conn.execute("SELECT count(*) FROM blocks WHERE substr(body, 1, 1) != x'c1'")
        assert unframed.fetchone() == (0,)
    assert versions == [1, 2, 3, 4, 5, 6]
    assert observe(f"sqlite:///{db}") == want  # reopened: nothing left to upgrade
    # its state kept the last render's cost as a loose field: it is the last render's now
    loaded = Timeline.load(index_store.open(f"sqlite:///{db}"), "conv-a", policy=POLICY)
    assert loaded.snapshot().state.last_render.fixed_tokens == 20


def test_a_schema_5_sqlite_store_gets_each_term_s_highest_count(tmp_path: Path) -> None:
    """Schema 5 to 6 fills ``search_most`` from the rows already indexed: the same as
    indexing them now, and searches as written now."""
    db = tmp_path / "v5.sqlite"
    shutil.copy(DATA / "store_v2.sqlite", db)
    index_store.open(f"sqlite:///{db}").close()
    with sqlite3.connect(db) as conn:
        most = conn.execute("SELECT * FROM search_most ORDER BY 1, 2").fetchall()
        conn.execute("DROP TABLE search_most")
        conn.execute("DELETE FROM schema_version WHERE version = 6")
    assert most  # the fixture repeats words
    store = index_store.open(f"sqlite:///{db}")
    for cid in ("conv-a", "conv-b"):
        assert_searches_as_written_now(store, cid)
    store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT * FROM search_most ORDER BY 1, 2").fetchall() == most
        assert conn.execute("SELECT max(version) FROM schema_version").fetchone() == (6,)


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, Any]]:
    """A fresh schema holding the schema-1 dump; yields a DSN whose search path is it."""
    if not PG_DSN:
        pytest.skip("PostgreSQL store tests need BLOCK_TIMELINE_PG_DSN (set by .ci/run)")
    import psycopg

    name = f"bt_migrate_{secrets.token_hex(4)}"
    dump = (DATA / "pg_store_v1.sql").read_text(encoding="utf-8")
    dump = dump.replace("SELECT pg_catalog.set_config('search_path', '', false);", "")
    dump = dump.replace("public.", f"{name}.")
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
        conn.execute(dump.encode("utf-8"))
    joiner = "&" if "?" in PG_DSN else "?"
    try:
        yield f"{PG_DSN}{joiner}options=-csearch_path%3D{name}", psycopg
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


def test_a_schema_1_postgres_store_upgrades_to_schema_5(pg_schema: tuple[str, Any]) -> None:
    dsn, psycopg = pg_schema
    want = expected("pg_store_v1_expected.json")
    assert observe(dsn) == want
    with psycopg.connect(dsn) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM bt_schema_version ORDER BY 1")]
        columns = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = "
                "'bt_blocks' AND table_schema = current_schema()"
            )
        }
        indexes = {
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            )
        }
    assert versions == [1, 2, 3, 4, 5]
    assert not {"text", "tsv"} & columns
    assert "bt_search_postings_pkey" in indexes
    assert not {"bt_search_terms", "bt_text_search"} & indexes
    assert observe(dsn) == want


def test_a_schema_3_postgres_store_gets_each_term_s_highest_count(
    pg_schema: tuple[str, Any],
) -> None:
    """Schema 3 to 4 fills ``bt_search_most`` from the rows already indexed: the same as
    indexing them now, and searches as written now."""
    dsn, psycopg = pg_schema
    index_store.open(dsn).close()
    query = "SELECT conversation_id, term, tf FROM bt_search_most ORDER BY 1, 2"
    with psycopg.connect(dsn) as conn:
        most = conn.execute(query).fetchall()
        postings = conn.execute(POSTINGS).fetchall()
        _terms_back(conn)
        conn.execute("DROP TABLE bt_search_most")
        conn.execute("DROP TABLE bt_search_postings")
        conn.execute("DELETE FROM bt_schema_version WHERE version >= 4")
    assert most  # the dump repeats words
    with _upgraded(dsn, psycopg, postings) as conn:
        assert conn.execute(query).fetchall() == most


def _terms_back(conn: Any) -> None:
    """Each turn-log row's terms listed in ``bt_search`` again, as schemas 3 and 4 kept
    them (schema 5 keeps them in the postings only): from the postings (each entry three
    64-bit numbers, the row's ``seq`` first)."""
    held: dict[int, list[str]] = {}
    for term, data in conn.execute("SELECT term, data FROM bt_search_postings ORDER BY 1"):
        entries = array("q", bytes(data))
        for seq in entries[0::3]:
            held.setdefault(seq, []).append(term)
    for seq, terms in held.items():
        conn.execute("UPDATE bt_search SET terms = %s WHERE seq = %s", (terms, seq))


POSTINGS = "SELECT conversation_id, term, chunk, data FROM bt_search_postings ORDER BY 1, 2, 3"


@contextmanager
def _upgraded(dsn: str, psycopg: Any, postings: list[Any]) -> Iterator[Any]:
    """Open the store (upgrading it to schema 5), check that both conversations search
    as a store written now and that the postings are those of indexing now; then a
    connection to check more."""
    store = index_store.open(dsn)
    for cid in ("conv-a", "conv-b"):
        assert_searches_as_written_now(store, cid)
    store.close()
    with psycopg.connect(dsn) as conn:
        assert conn.execute(POSTINGS).fetchall() == postings
        assert conn.execute("SELECT max(version) FROM bt_schema_version").fetchone() == (5,)
        yield conn


def test_a_schema_4_postgres_store_gets_its_terms_postings(pg_schema: tuple[str, Any]) -> None:
    """Schema 4 to 5 fills ``bt_search_postings`` from the rows already indexed (the same
    as indexing them now) and drops schema 4's GIN index of their terms; searches find
    what they find in a store written now."""
    dsn, psycopg = pg_schema
    index_store.open(dsn).close()
    with psycopg.connect(dsn) as conn:
        postings = conn.execute(POSTINGS).fetchall()
        _terms_back(conn)
        conn.execute("DROP TABLE bt_search_postings")
        conn.execute("CREATE INDEX bt_search_terms ON bt_search USING GIN (terms)")
        conn.execute("DELETE FROM bt_schema_version WHERE version = 5")
    assert len({row[0] for row in postings}) == 2
    with _upgraded(dsn, psycopg, postings) as conn:
        indexes = [
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            )
        ]
        assert "bt_search_terms" not in indexes
