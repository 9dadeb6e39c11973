"""The store kinds the store tests run on, and a clean store of each."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import index_store

PG_DSN = os.environ.get("BLOCK_TIMELINE_PG_DSN")
STORE_KINDS = ["memory", "sqlite", "postgres"]


def open_store(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return index_store.open("memory://")
    if kind == "sqlite":
        return index_store.open(f"sqlite:///{tmp_path / 'store.db'}")
    if not PG_DSN:
        pytest.skip("PostgreSQL store tests need BLOCK_TIMELINE_PG_DSN (set by .ci/run)")
    store = index_store.open(PG_DSN)
    for cid in store.conversations():
        store.delete(cid)
    with store._tx() as cur:
        cur.execute("DELETE FROM bt_blocks")
        cur.execute("DELETE FROM bt_checkpoints")
    return store
