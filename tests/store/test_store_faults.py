"""A store failing mid-persist (at ``COMMIT`` or at a statement): the persist raises a
typed StoreError naming the conversation, nothing is half-written, and the next persist
succeeds on the same store object (issue #23 item 5).

Each fault is one a real backend produces: SQLite failing ``COMMIT`` and keeping the
transaction open (a deferred foreign key, or a ``disk I/O error`` injected at ``COMMIT``
through a connection wrapper), SQLite rolling back by itself before the error reaches
the caller (disk full, I/O error), and PostgreSQL failing ``COMMIT`` (a deferred
constraint trigger raising an I/O error class). Each runs through ``persist`` and
``apersist``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.store_work import arun, load, new_tl, work
from tests.helpers.stores import open_store
from timeline import StoreError, Timeline

Disarm = Callable[[], None]


class FaultyConnection:
    """A sqlite3 connection whose next statement matching ``when`` fails once with
    ``error``; with ``auto_rollback`` SQLite's own rollback runs first (what SQLite does
    on a full disk or an I/O error: the transaction is gone when the error arrives)."""

    def __init__(
        self, conn: sqlite3.Connection, when: Callable[[str], bool], auto_rollback: bool
    ) -> None:
        self.conn = conn
        self.when = when
        self.auto_rollback = auto_rollback
        self.fired = False

    def execute(self, sql: str, *params: Any) -> Any:
        if not self.fired and self.when(sql):
            self.fired = True
            if self.auto_rollback:
                self.conn.execute("ROLLBACK")
            raise sqlite3.OperationalError("disk I/O error")
        return self.conn.execute(sql, *params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def _wrap(store: Any, when: Callable[[str], bool], auto_rollback: bool) -> Disarm:
    """Install the wrapper; it stays in place (spent) so the next persist goes through
    the same store object untouched."""
    faulty = FaultyConnection(store._conn, when, auto_rollback)
    store._conn = faulty

    def spent() -> None:
        assert faulty.fired, "the fault never fired"

    return spent


def commit_io_error(store: Any) -> Disarm:
    """``COMMIT`` fails once and the transaction stays open (a transient I/O error)."""
    return _wrap(store, lambda sql: sql == "COMMIT", auto_rollback=False)


def commit_io_error_rolled_back(store: Any) -> Disarm:
    """``COMMIT`` fails once after SQLite already rolled the transaction back."""
    return _wrap(store, lambda sql: sql == "COMMIT", auto_rollback=True)


def insert_disk_full(store: Any) -> Disarm:
    """A block insert fails once after SQLite already rolled back (disk full): a second
    ``ROLLBACK`` would raise "no transaction is active" and hide the real error."""
    return _wrap(store, lambda sql: sql.startswith("INSERT INTO blocks"), auto_rollback=True)


def sqlite_deferred_fk(store: Any) -> Disarm:
    """A real SQLite ``COMMIT`` failure: a deferred foreign key the window write violates.
    SQLite refuses the ``COMMIT`` and keeps the transaction open."""
    conn = store._conn
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(
        """
        CREATE TABLE fault_parent (id INTEGER PRIMARY KEY);
        CREATE TABLE fault_child (
            parent INTEGER REFERENCES fault_parent (id) DEFERRABLE INITIALLY DEFERRED
        );
        CREATE TRIGGER fault_at_commit AFTER UPDATE ON conversations BEGIN
            INSERT INTO fault_child (parent) VALUES (1);
        END;
        """
    )

    def disarm() -> None:
        conn.executescript(
            "DROP TRIGGER fault_at_commit; DROP TABLE fault_child; DROP TABLE fault_parent;"
        )

    return disarm


def postgres_deferred_trigger(store: Any) -> Disarm:
    """A real PostgreSQL ``COMMIT`` failure: a deferred constraint trigger on the window
    row raises an I/O error class (58030) when the transaction commits."""
    with store._tx() as cur:
        cur.execute(
            "CREATE OR REPLACE FUNCTION fault_at_commit() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'could not write to file: disk I/O error' USING ERRCODE = '58030'; "
            "END $$ LANGUAGE plpgsql"
        )
        cur.execute("DROP TRIGGER IF EXISTS fault_at_commit ON bt_conversations")
        cur.execute(
            "CREATE CONSTRAINT TRIGGER fault_at_commit AFTER UPDATE ON bt_conversations "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fault_at_commit()"
        )

    def disarm() -> None:
        with store._tx() as cur:
            cur.execute("DROP TRIGGER fault_at_commit ON bt_conversations")
            cur.execute("DROP FUNCTION fault_at_commit()")

    return disarm


FAULTS: dict[str, tuple[str, Callable[[Any], Disarm]]] = {
    # name: (backend, arm the fault; returns what removes it)
    "sqlite-commit-io-error": ("sqlite", commit_io_error),
    "sqlite-commit-io-error-rolled-back": ("sqlite", commit_io_error_rolled_back),
    "sqlite-insert-disk-full": ("sqlite", insert_disk_full),
    "sqlite-commit-deferred-foreign-key": ("sqlite", sqlite_deferred_fk),
    "postgres-commit-deferred-trigger": ("postgres", postgres_deferred_trigger),
}


def persist(store: Any, tl: Timeline, mode: str) -> int:
    if mode == "sync":
        return tl.persist(store)
    return arun(store, lambda: tl.apersist(store))


def stored(store: Any) -> tuple[int, str, list[str], list[str]]:
    """Everything a persist writes: version, window payload, turn log and summary ids."""
    found = store.load_window("c1")
    assert found is not None
    payload = json.dumps(load(store).render("sys").to_anthropic())
    log = [b.id for b in store.turn_log("c1")]
    return found[0], payload, log, [b.id for b in store.summaries("c1")]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failed_persist_writes_nothing_and_the_next_one_succeeds(
    fault: str, mode: str, tmp_path: Path
) -> None:
    """The failing persist raises StoreError naming the conversation and saying what to
    do; the store still holds exactly the previous version; the next persist on the same
    store object commits everything, the blocks of the failed one included."""
    backend, arm = FAULTS[fault]
    store = open_store(backend, tmp_path)
    try:
        tl = new_tl()
        work(tl, 3)
        assert persist(store, tl, mode) == 1
        before = stored(store)
        work(tl, 9, start=3)  # new log rows, a new summary, a new window
        disarm = arm(store)
        try:
            with pytest.raises(StoreError) as err:
                persist(store, tl, mode)
        finally:
            disarm()
        assert err.value.conversation_id == "c1"
        assert "'c1'" in str(err.value) and "retry" in str(err.value)
        assert isinstance(err.value.__cause__, Exception)
        assert not isinstance(err.value.__cause__, StoreError)
        assert before == stored(store)
        expected = json.dumps(tl.render("sys").to_anthropic())
        assert persist(store, tl, mode) == 2
        version, payload, log, summaries = stored(store)
        assert (2, expected) == (version, payload)
        assert set(before[2]) < set(log) and len(log) == len(set(log))
        assert len(summaries) > len(before[3])
    finally:
        store.close()
