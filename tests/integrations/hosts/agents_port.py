"""The one construction the ported OpenAI Agents SDK tests change: where the SDK's tests
build a ``SQLiteSession`` (or subclass it), they get a ``TimelineSession`` on the same
database. ``SQLiteSession`` here is that class (the ported files import it from this
module, never from ``agents``); ``make_session`` builds one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from timeline import CompactionPolicy
from timeline.integrations.openai_agents import TimelineSession

POLICY = CompactionPolicy(max_tokens=100_000)
"""A budget the SDK's small conversations never reach: the session behaves as a plain
store, which is what these tests expect of one."""


BUILT = 0
"""How many sessions of ours the ported tests built (the suite's conftest reports a
ported test case that built none as skipped: it ran the SDK with another session)."""


class SQLiteSession(TimelineSession):
    """``SQLiteSession(session_id, db_path, ...)`` as a ``TimelineSession``: a file path
    becomes a SQLite store on that file, ``":memory:"`` a fresh in-memory store (each
    ``SQLiteSession(":memory:")`` has a database of its own, too). Tests that subclass
    ``SQLiteSession`` (to fail or pause an ``add_items``) subclass this."""

    def __init__(self, session_id: str, db_path: str | Path = ":memory:", **kwargs: Any) -> None:
        global BUILT
        BUILT += 1
        store = "memory://" if str(db_path) == ":memory:" else f"sqlite:///{db_path}"
        super().__init__(session_id, store, POLICY, **kwargs)


def make_session(
    session_id: str, db_path: str | Path = ":memory:", **kwargs: Any
) -> TimelineSession:
    """``SQLiteSession(session_id, db_path, ...)``, ported (see :class:`SQLiteSession`)."""
    return SQLiteSession(session_id, db_path, **kwargs)
