"""Backend specifics: URLs, SQLite schema versions and WAL, the optional PostgreSQL driver."""

from __future__ import annotations

import builtins
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import index_store
from index_store._sqlite import SCHEMA_VERSION
from tests.helpers.stores import PG_DSN
from timeline import StoreUnavailableError


@pytest.mark.parametrize("url", ["mysql://x", "sqlite://", "", "file:///x.db"])
def test_unknown_urls_are_refused(url: str) -> None:
    """Unsupported or empty URLs raise StoreUnavailableError naming the accepted forms."""
    with pytest.raises(StoreUnavailableError, match=r"memory://|sqlite:///path\.db"):
        index_store.open(url)


def test_a_sqlite_url_with_two_slashes_is_refused_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite://missing.db`` (two slashes) names the three-slash form and creates no file."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreUnavailableError, match=r"sqlite:///missing\.db"):
        index_store.open("sqlite://missing.db")
    assert list(tmp_path.iterdir()) == []


def test_sqlite_is_wal_with_a_schema_version(tmp_path: Path) -> None:
    """A new SQLite store runs in WAL mode and records its schema version."""
    store = index_store.open(f"sqlite:///{tmp_path / 's.db'}")
    assert isinstance(store, index_store.SqliteStore)
    assert store._query("PRAGMA journal_mode")[0][0] == "wal"
    versions = [(v,) for v in range(1, SCHEMA_VERSION + 1)]  # every migration, in order
    assert store._query("SELECT version FROM schema_version ORDER BY version") == versions
    store.close()
    again = index_store.open(f"sqlite:///{tmp_path / 's.db'}")  # reopening migrates nothing
    assert again._query("SELECT version FROM schema_version ORDER BY version") == versions
    assert again.check_integrity() == []
    again.close()


def test_sqlite_newer_schema_is_refused(tmp_path: Path) -> None:
    """A database written by a newer library version is not opened."""
    path = tmp_path / "new.db"
    index_store.open(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO schema_version VALUES (99)")
    with pytest.raises(StoreUnavailableError, match="schema version 99"):
        index_store.open(f"sqlite:///{path}")


def test_sqlite_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    """A path in a missing directory raises StoreUnavailableError, not sqlite3.Error."""
    with pytest.raises(StoreUnavailableError, match="cannot open"):
        index_store.open(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")


def test_missing_psycopg_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the postgres extra, opening a PostgreSQL URL says how to install it."""
    real_import = builtins.__import__

    def no_psycopg(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "psycopg" or name.startswith("psycopg."):
            raise ImportError("No module named 'psycopg'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_psycopg)
    with pytest.raises(StoreUnavailableError, match=r"pip install -e .*\[postgres\]"):
        index_store.open("postgresql://nobody@127.0.0.1:1/none")


def test_unreachable_postgres_is_a_store_error() -> None:
    """A server that is not there raises StoreUnavailableError with what to check."""
    with pytest.raises(StoreUnavailableError, match="check the DSN"):
        index_store.open("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://bt:s3cret@db.example/app", "postgresql://bt:***@db.example/app"),
        ("postgres://bt:p@ss@db:5433/app", "postgres://bt:***@db:5433/app"),
        (
            "postgresql://bt@db/app?password=s3cret&sslmode=require",
            "postgresql://bt@db/app?password=***&sslmode=require",
        ),
        ("postgresql://db:5432/app", "postgresql://db:5432/app"),
        ("host=db user=bt password=s3cret dbname=app", "host=db user=bt password=*** dbname=app"),
        ("host=db password = 'a b\\' c' sslpassword=k", "host=db password = *** sslpassword=***"),
    ],
)
def test_a_dsn_is_shown_without_its_password(dsn: str, shown: str) -> None:
    """The DSN a PostgreSQL store shows hides a URL's password and password settings."""
    from index_store import shown_dsn

    assert shown_dsn(dsn) == shown


@pytest.mark.parametrize("form", ["url", "key=value"])
def test_a_postgres_store_s_repr_hides_the_password(form: str) -> None:
    """repr(store) shows where it connects but not the password, of a URL DSN or a
    key=value one (one store serves the sync and the async API)."""
    if not PG_DSN:
        pytest.skip("PostgreSQL store tests need BLOCK_TIMELINE_PG_DSN (set by .ci/run)")
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from index_store._postgres import PostgresStore

    params = conninfo_to_dict(PG_DSN)
    password = params.pop("password", None)
    if not password or "user" not in params:
        pytest.skip("needs a DSN with a user and a password")
    if form == "url":
        dsn, hidden = PG_DSN, f"://{params['user']}:***@"
    else:
        dsn, hidden = make_conninfo(**params, password=password), "password=***"
    store = index_store.open(dsn) if form == "url" else PostgresStore(dsn)
    try:
        shown = repr(store)
        assert hidden in shown
        assert f":{password}@" not in shown and f"password={password}" not in shown
    finally:
        store.close()


def test_sqlite_open_waits_while_another_connection_holds_the_file(tmp_path: Path) -> None:
    """Opening a new file while another process holds it (two hosts starting at once)
    waits for the lock instead of failing with "database is locked"."""
    import threading

    path = tmp_path / "busy.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE early (x)")  # still in rollback-journal mode
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO early VALUES (1)")  # a write lock: the switch to WAL waits
    release = threading.Timer(0.3, holder.rollback)
    release.start()
    try:
        store = index_store.open(f"sqlite:///{path}")
    finally:
        release.join()
        holder.close()
    assert store.conversations() == []
    store.close()
