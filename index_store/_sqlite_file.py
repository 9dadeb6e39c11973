"""The SQLite store's file: created private, and what its errors mean (damage or not)."""

from __future__ import annotations

import os

from timeline._model import StoreUnavailableError

__all__ = ["create_private", "is_corrupt", "is_damage", "text"]

_CORRUPT = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB (primary result codes)


def create_private(path: str) -> None:
    """Create a new store file readable by its owner only (0600): a store holds whole
    conversations. SQLite gives the ``-wal`` and ``-shm`` files the database file's mode.
    An existing file (or a symlink, never followed here) is left as it is."""
    if path == ":memory:" or not path:
        return
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreUnavailableError(
            f"cannot open SQLite store {path!r}: {exc.strerror}; check the path and permissions"
        ) from exc


_NOT_DAMAGE = (3, 5, 6, 7, 8, 10, 13, 14)
"""PERM, BUSY, LOCKED, NOMEM, READONLY, IOERR, FULL, CANTOPEN: the file may be fine."""


def is_damage(exc: BaseException) -> bool:
    """Whether an error of a read the library wrote means the file is damaged: SQLite's
    corrupt codes, and a generic error ("no such column", "SQL logic error") that only a
    damaged schema or search index gives."""
    code = getattr(exc, "sqlite_errorcode", None)
    return is_corrupt(exc) or not isinstance(code, int) or (code & 0xFF) not in _NOT_DAMAGE


def is_corrupt(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _CORRUPT


def text(raw: bytes) -> str:
    """TEXT values that are not valid UTF-8 (a damaged file) still read, their bytes kept
    as lone surrogates: the row's checksum covers its key columns, so the row reads as a
    CorruptRecordError, never as a block under a garbled key."""
    return raw.decode("utf-8", "surrogateescape")
