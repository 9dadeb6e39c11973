"""A PostgreSQL server restart: the same store object raises StoreUnavailableError while
the server is down and reconnects once it is back, with nothing lost.

The test starts its own throw-away cluster (initdb + pg_ctl in a temporary directory, on
a free port): the shared server other tests use is never touched.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.cases import load, new_tl
from timeline import StoreUnavailableError, blocks

pytestmark = pytest.mark.slow  # a PostgreSQL server restarted

BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """initdb/pg_ctl as the ``postgres`` user when running as root, else as ourselves."""

    def __init__(self, bindir: str) -> None:
        self.bin = Path(bindir)
        self.dir = Path(tempfile.mkdtemp(prefix="bt-pg-restart-"))
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self.data = self.dir / "data"

    def run(self, *argv: str) -> None:
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr or done.stdout

    def init(self) -> None:
        self.run("initdb", "-D", str(self.data), "-U", "bt", "--auth=trust", "-E", "UTF8")

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.run(
            "pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.dir / "log"), "-w", "start"
        )

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    @property
    def dsn(self) -> str:
        return f"postgresql://bt@127.0.0.1:{self.port}/postgres"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if not BIN or not (Path(BIN[-1]) / "initdb").exists():
        pytest.skip("needs the PostgreSQL server binaries (initdb, pg_ctl)")
    if os.geteuid() == 0 and not shutil.which("runuser"):
        pytest.skip("as root, needs runuser to start PostgreSQL as the postgres user")
    pytest.importorskip("psycopg")
    c = Cluster(BIN[-1])
    try:
        c.init()
        c.start()
        yield c
    finally:
        if (c.data / "postmaster.pid").exists():
            c.run("pg_ctl", "-D", str(c.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(c.dir, ignore_errors=True)


@pytest.mark.parametrize("restart", [pytest.param("fast", id="typed-pg-server-restart")])
def test_same_store_reconnects_after_a_server_restart(cluster: Cluster, restart: str) -> None:
    """Down: a typed error, the timeline unchanged. Back: the same object persists and
    loads again, everything committed before and after is there."""
    import index_store

    store = index_store.open(cluster.dsn)
    tl = new_tl("restart")
    tl.begin_turn()
    tl.append(blocks.user_prompt("before the restart"))
    assert tl.persist(store) == 1

    cluster.stop()
    tl.append(blocks.assistant_completion("written while the server is down"))
    with pytest.raises(StoreUnavailableError):
        tl.persist(store)
    assert tl.version == 1
    with pytest.raises(StoreUnavailableError):
        store.load_window("restart")
    with pytest.raises(StoreUnavailableError):
        store.search("restart", "restart")

    cluster.start()
    assert tl.persist(store) == 2
    again = load(store, "restart")
    assert [b.text for b in again.blocks][1:] == [
        "before the restart",
        "written while the server is down",
    ]
    assert [h.block.text for h in store.search("restart", "restart")] == ["before the restart"]
    store.close()
