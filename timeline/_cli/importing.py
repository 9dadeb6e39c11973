"""``timeline import``: a provider's messages file into a new stored conversation, its
format detected when ``--format`` is left out, its system prompt kept with it.

Detection reads the start of the file as a stream (never the whole of it) and looks for
what only one format has: Anthropic's ``tool_use`` / ``tool_result`` / ``thinking`` parts
and top-level ``system``; Chat Completions' ``tool_calls``, ``tool`` messages and
``image_url`` parts; Responses' typed items (``function_call``, ``message``...),
``input_text`` parts and top-level ``input``. A file of plain text messages reads the same
in every format and imports as Chat Completions. A pipe, a FIFO or ``-`` (standard
input) is read once: detection keeps the bytes it read and the import reads them again
before the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from typing import IO, Any, Final

import ijson

from timeline._cli.output import printable, progress
from timeline._cli.stored import InputError, open_store
from timeline._cli.words import plural
from timeline._io import StreamedImport
from timeline._model import (
    InvalidBlockError,
    StoreError,
    StoreUnavailableError,
    TimelineError,
    TimelineState,
)

__all__ = ["FORMATS", "cmd_import", "detect_format"]

FORMATS: Final = ("openai", "anthropic", "responses")

_ITEMS: Final = ("item", "messages.item", "input.item")
_TOP_KEYS: Final = {"system": "anthropic", "input": "responses", "instructions": "responses"}
_ITEM_KEYS: Final = {"tool_calls": "openai", "tool_call_id": "openai", "function_call": "openai"}
_ITEM_TYPES: Final = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "item_reference"}
    | {"custom_tool_call", "custom_tool_call_output", "computer_call", "compaction"}
)
_PART_TYPES: Final = {
    **dict.fromkeys(("tool_use", "tool_result", "thinking", "redacted_thinking"), "anthropic"),
    **dict.fromkeys(("image", "document", "server_tool_use", "search_result"), "anthropic"),
    **dict.fromkeys(("input_text", "output_text", "input_image", "input_file"), "responses"),
    **dict.fromkeys(("image_url", "input_audio"), "openai"),
}
_LOOK_AT: Final = 200_000
"""Parser events read at most before giving up (the first few hundred messages)."""


def _evidence(prefix: str, event: str, value: Any) -> str | None:
    """The format one parser event proves, if any."""
    if event == "map_key" and prefix == "":
        return _TOP_KEYS.get(value)
    if event == "map_key" and prefix in _ITEMS:
        return _ITEM_KEYS.get(value)
    if event != "string":
        return None
    head, _, leaf = prefix.rpartition(".")
    if head in _ITEMS and leaf == "type":
        return "responses" if value in _ITEM_TYPES else None
    if head in _ITEMS and leaf == "role" and value == "tool":
        return "openai"
    if leaf == "type" and head.endswith(".content.item"):
        return _PART_TYPES.get(value)
    return None


def detect_format(fh: IO[bytes]) -> str | None:
    """The format the file's first messages prove (None: plain messages that any format
    reads alike, or not JSON at all). Reads from the current position; rewinds to it."""
    start = fh.tell()
    found = _scan(fh)
    fh.seek(start)
    return found


def _scan(fh: IO[bytes]) -> str | None:
    """:func:`detect_format` without the rewind (the stream is read on from there)."""
    from timeline._io import json_events

    found: str | None = None
    try:
        for n, (prefix, event, value) in enumerate(json_events(fh)):
            found = _evidence(prefix, event, value)
            if found is not None or n >= _LOOK_AT:
                break
    except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
        found = None
    except InvalidBlockError:  # nested too deeply: the import names it
        found = None
    return found


class _Replayed(io.RawIOBase):
    """A stream read once (a pipe) given again from its start: the bytes already read
    (``head``), then the rest of it."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Recorded(io.RawIOBase):
    """A stream read once that keeps what was read from it (for :class:`_Replayed`)."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source = source
        self.read_so_far = bytearray()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.source.read(len(buffer))
        self.read_so_far += data
        buffer[: len(data)] = data
        return len(data)


def _detected(fh: IO[bytes]) -> tuple[str | None, IO[bytes]]:
    """The format ``fh`` proves and the stream to import from: ``fh`` rewound, or, for
    a stream that cannot seek (a pipe), one that gives the bytes detection read first."""
    if fh.seekable():
        return detect_format(fh), fh
    recorded = _Recorded(fh)
    found = _scan(io.BufferedReader(recorded))
    return found, io.BufferedReader(_Replayed(bytes(recorded.read_so_far), fh))


def _size(fh: Any) -> int | None:
    try:
        return os.fstat(fh.fileno()).st_size or None
    except OSError:
        return None


def _exists(store: Any, conversation: str, db: str) -> None:
    if store.load_window(conversation) is not None:
        raise TimelineError(
            f"conversation {conversation!r} already exists in {db}; "
            "import into a new --conversation id"
        )


def _stream(
    store: Any, fh: IO[bytes], fmt: str, args: argparse.Namespace
) -> tuple[StreamedImport, int]:
    """Read the file into the store as it is parsed (one transaction); a format error
    says which format the file looks like when that is another one."""
    with progress(f"importing {os.path.basename(args.file)}", _size(fh)) as advance:
        streamed = StreamedImport(fh, fmt, args.conversation, advance)  # type: ignore[arg-type]

        def finish() -> TimelineState:
            if not streamed.messages:
                raise InputError(f"FILE {args.file}: no messages in it; nothing imported")
            return streamed.state()

        try:
            version: int = store.commit_stream(args.conversation, blocks=streamed, finish=finish)
        except UnicodeDecodeError as exc:
            raise InputError(f"{args.file}: not valid JSON: not UTF-8 ({exc})") from exc
        except InputError:
            raise
        except TimelineError as exc:
            if str(exc).startswith("not valid JSON"):
                raise InputError(f"{args.file}: {exc}") from exc
            guess = None
            if args.format and fh.seekable():
                fh.seek(0)
                guess = detect_format(fh)
            if isinstance(exc, InvalidBlockError) and guess not in (None, fmt):
                raise InvalidBlockError(f"{exc} (the file looks like --format {guess})") from exc
            raise
    return streamed, version


class _NewStore:
    """A new SQLite store for an import, built beside its path and moved into place once
    the import committed: a failed import leaves no file behind, not even an empty one."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.temp = f"{path}.importing-{os.getpid()}"

    def publish(self) -> None:
        try:
            os.link(self.temp, self.path)  # fails if the path appeared meanwhile
        except FileExistsError as exc:
            raise TimelineError(
                f"--db {self.path}: another program created it during the import; nothing "
                "imported: run the import again"
            ) from exc
        except OSError as exc:  # no hard links on this file system: a plain rename
            if os.path.exists(self.path):
                raise TimelineError(
                    f"--db {self.path}: another program created it during the import; "
                    "nothing imported: run the import again"
                ) from exc
            try:
                os.replace(self.temp, self.path)
            except OSError as failed:
                raise StoreUnavailableError(
                    f"--db {self.path}: cannot put the new store in place: "
                    f"{failed.strerror}; nothing imported"
                ) from failed
        self.discard()

    def discard(self) -> None:
        for leftover in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp + leftover)

    def failed(self, exc: StoreError) -> StoreUnavailableError:
        """``exc`` (the new store's own error) told as the import's: it names ``--db``,
        never the file being built, which is gone."""
        reason = str(exc).split(": ", 1)[-1].split("; rolled back")[0]
        return StoreUnavailableError(
            f"--db {self.path}: the import could not write the new store: {reason}; "
            "nothing imported and no file left behind: check the disk (space, "
            "permissions) and retry"
        )


def _open(db: str) -> tuple[Any, _NewStore | None]:
    """The store at ``--db``, or a new SQLite one built beside the path it names."""
    import index_store

    try:
        return open_store(db), None
    except StoreUnavailableError:
        path = index_store.sqlite_path(db)
        if path is None or path == ":memory:":
            raise
    new = _NewStore(path)
    new.discard()  # a leftover of an import this process id ran before
    try:
        return open_store(new.temp, create=True), new
    except StoreError as exc:
        new.discard()
        raise new.failed(exc) from exc
    except BaseException:
        new.discard()
        raise


def _input(file: str) -> IO[bytes]:
    """``FILE`` opened for reading (``-``: standard input)."""
    if file == "-":
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    try:
        return open(file, "rb")
    except OSError as exc:
        raise InputError(f"FILE {file}: cannot read it: {exc.strerror}") from exc


def _into(db: str, fh: IO[bytes], fmt: str, args: argparse.Namespace) -> tuple[Any, int]:
    """Stream the import into ``--db`` (a new store: built beside it, moved into place
    once committed, removed whatever fails)."""
    store, new = _open(db)
    try:
        try:
            _exists(store, args.conversation, db)
            streamed, version = _stream(store, fh, fmt, args)
        finally:
            store.close()
        if new is not None:
            new.publish()
    except StoreError as exc:
        if new is None or str(exc).startswith(f"--db {new.path}"):
            raise
        raise new.failed(exc) from exc
    finally:
        if new is not None:
            new.discard()
    return streamed, version


def cmd_import(args: argparse.Namespace) -> int:
    """Import ``FILE`` into the new conversation ``--conversation`` of ``--db``."""
    with _input(args.file) as given:
        fmt, fh = (args.format, given) if args.format else _detected(given)
        fmt = fmt or "openai"
        streamed, version = _into(args.db, fh, fmt, args)
    notes = [] if args.format else [f"format {fmt} (detected)"]
    if streamed.system:
        notes.append(
            f"its system prompt ({plural(streamed.system_messages, 'system message')}, "
            f"{plural(len(streamed.system), 'char')}) is kept with it"
        )
    print(
        f"imported {plural(streamed.count, 'block')} into "
        f"{printable(repr(args.conversation))} (version {version})"
        + "".join(f"; {n}" for n in notes)
    )
    return 0
