"""Files the CLI writes (``inspect --html OUT``): never over the store, never over an
existing file without ``--force``, never through a symlink, atomically, owner-only.

The page is written to a temporary file in the target's directory (created ``O_EXCL``
and ``O_NOFOLLOW``, mode 0600), flushed to disk, then moved into place: a reader sees the
old file or the whole new one, never half a page. Without ``--force`` the move is a hard
link, which fails if something appeared at the target meanwhile; with ``--force`` it is
``os.replace``, which replaces a symlink at the target itself, never the file it points to.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable

from timeline._model import TimelineError

__all__ = ["FileRefusedError", "store_files", "write_private"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class FileRefusedError(TimelineError, ValueError):
    """The CLI will not write the file it was asked to (it names the flag and the file)."""


def store_files(path: str | None) -> list[str]:
    """A SQLite store's files: the database and its journal, WAL and shared-memory files."""
    if not path or path == ":memory:":
        return []
    return [path, f"{path}-wal", f"{path}-shm", f"{path}-journal"]


def _same_file(a: os.stat_result, path: str) -> bool:
    try:
        b = os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _check_target(target: str, flag: str, force: bool, protected: Iterable[str]) -> None:
    """Refuse the store (whatever ``force`` says), a directory, and without ``force`` any
    existing file or symlink."""
    try:
        found = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FileRefusedError(f"{flag} {target}: {exc.strerror}") from exc
    resolved = os.stat(target) if stat.S_ISLNK(found.st_mode) and os.path.exists(target) else found
    for path in protected:
        if _same_file(found, path) or _same_file(resolved, path):
            raise FileRefusedError(
                f"{flag} {target} is the store itself ({path}); choose another file"
            )
    if stat.S_ISDIR(found.st_mode):
        raise FileRefusedError(f"{flag} {target} is a directory; give a file name")
    if not force:
        what = "a symlink" if stat.S_ISLNK(found.st_mode) else "a file"
        raise FileRefusedError(
            f"{flag} {target}: {what} is already there; pass --force to replace it"
        )


def write_private(
    target: str,
    data: bytes,
    *,
    flag: str,
    force: bool = False,
    protected: Iterable[str] = (),
) -> None:
    """Write ``data`` to ``target`` as described in the module docstring; ``protected``
    are files never written over (the store's). Errors name ``flag`` and the file."""
    _check_target(target, flag, force, list(protected))
    directory = os.path.dirname(target) or "."
    temp = os.path.join(directory, f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    except OSError as exc:
        raise FileRefusedError(f"{flag} {target}: cannot write there: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        _move(temp, target, flag, force)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)


def _move(temp: str, target: str, flag: str, force: bool) -> None:
    if force:
        os.replace(temp, target)
        return
    try:
        os.link(temp, target, follow_symlinks=False)
    except FileExistsError as exc:
        raise FileRefusedError(
            f"{flag} {target}: a file appeared there meanwhile; pass --force to replace it"
        ) from exc
    except OSError:  # a file system without hard links: the check above must do
        if os.path.lexists(target):
            raise FileRefusedError(
                f"{flag} {target}: a file is already there; pass --force to replace it"
            ) from None
        os.replace(temp, target)
