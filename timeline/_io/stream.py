"""Import a messages JSON file without loading it whole: messages are parsed one at a time
(ijson) and appended as they arrive, so a 200 MB export needs about its size in memory for
the blocks, not several times that for a parsed document as well.

Accepts the same shapes as :func:`timeline._io.importers.import_messages`: a list of messages,
or an object with ``messages`` (and, for Anthropic, ``system``). Nothing is stored here:
the caller persists the returned timeline, so bad input anywhere stores nothing.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Final, Literal

import ijson

from timeline._core import Timeline
from timeline._io._common import Builder, ImportedConversation, split_messages
from timeline._io.importers import _import_anthropic, _import_openai
from timeline._io.responses import import_items
from timeline._model import MAX_DEPTH, InvalidBlockError

__all__ = [
    "document_system",
    "import_file",
    "import_stream",
    "importer_of",
    "json_events",
    "read_messages",
]

_OPEN = ("start_map", "start_array")
_CLOSE = ("end_map", "end_array")


class _Counting:
    """A binary reader that reports how many bytes were read (for progress bars) and
    sizes its reads so that parsing stays linear in the length of any one string.

    ijson's C parser lexes a token split over reads again from its start on every read,
    so a 200 MB string read 4 KiB at a time costs quadratic time. Reads are small (a
    deep document read in big chunks would take memory quadratic in its depth) while
    the parser yields events; when a read yielded none (inside a long string), the next
    one is twice as large, up to the end of the string (its first unescaped quote), so a
    long token costs a few reads whose sizes sum to about twice its length."""

    def __init__(self, raw: IO[bytes], on_read: Callable[[int], None]) -> None:
        self._raw = raw
        self._on_read = on_read
        self._first = True
        self._pending = b""
        self._size = _READ
        self._backslashes = 0
        self.events = 0
        self._events_then = -1

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson asks for nothing first, to learn the stream's type
            return b""
        if size < 0:
            data = self._pending + self._raw_read(-1)
            self._pending = b""
            return data
        grow = self.events == self._events_then
        self._events_then = self.events
        self._size = min(self._size * 2, _MAX_READ) if grow else _READ
        want = max(size, self._size)
        if len(self._pending) < want:
            self._pending += self._raw_read(want - len(self._pending))
        data, self._pending = self._pending[:want], self._pending[want:]
        if grow:
            cut = self._string_end(data)
            if cut < len(data):
                data, self._pending = data[:cut], data[cut:] + self._pending
        trailing = len(data) - len(data.rstrip(b"\\"))
        self._backslashes = trailing + (self._backslashes if trailing == len(data) else 0)
        return data

    def _string_end(self, data: bytes) -> int:
        """Just past the first quote of ``data`` no backslash escapes (``len(data)`` if
        none): where a string that started before ``data`` ends."""
        start = 0
        while (at := data.find(b'"', start)) >= 0:
            run = 0
            while run < at and data[at - run - 1] == 0x5C:  # backslashes before it
                run += 1
            if run == at:  # the run reaches back into the previous read
                run += self._backslashes
            if run % 2 == 0:
                return at + 1
            start = at + 1
        return len(data)

    def _raw_read(self, size: int) -> bytes:
        data = self._raw.read(size)
        if self._first and data:
            self._first = False
            if data.startswith(codecs.BOM_UTF8):  # a UTF-8 BOM is not JSON; skip it
                self._on_read(len(codecs.BOM_UTF8))
                data = data[len(codecs.BOM_UTF8) :]
        self._on_read(len(data))
        return data


_READ: Final = 4096
_MAX_READ: Final = 64 << 20


MAX_NESTING: Final = MAX_DEPTH + 16
"""Deepest JSON accepted in an import file: params and meta may nest 64 levels, below a
few levels of message structure."""


def _bounded(events: Iterable[Any], reader: _Counting) -> Iterator[Any]:
    depth = 0
    for event in events:
        reader.events += 1
        if event[1] in _OPEN:
            depth += 1
            if depth > MAX_NESTING:
                raise InvalidBlockError(f"not valid JSON: nested deeper than {MAX_NESTING} levels")
        elif event[1] in _CLOSE:
            depth -= 1
        yield event


def json_events(file: IO[bytes]) -> Iterator[tuple[str, str, Any]]:
    """ijson's ``(prefix, event, value)`` events of ``file``, read as an import reads it:
    linear in the length of any one string, deep documents refused (``InvalidBlockError``),
    a UTF-8 BOM skipped. (``timeline import`` detects the format with it: a plain
    ``ijson.parse`` lexes a long string again from its start at every read.)"""
    yield from _events(_Counting(file, lambda n: None))


def _events(reader: _Counting) -> Iterator[Any]:
    """The parse events of ``reader``: small reads, depth capped (see :class:`_Messages`)."""
    return _bounded(ijson.parse(reader, use_float=True, buf_size=_READ), reader)


class _Messages:
    """Iterates the messages of a JSON document as they are parsed; ``system`` holds the
    top-level ``system`` value once the document has been read. ``responses=True``: the
    items of a Responses input (a list, or an object with ``input``, which may be a
    string: one user message) and its ``instructions``."""

    def __init__(self, reader: _Counting, responses: bool = False) -> None:
        # small reads and a depth cap: ijson builds a prefix string per event, so a deep
        # document read in big chunks would take memory quadratic in its depth
        self._events = _events(reader)
        self.system: Any = ""
        self._key, self._system_key = ("input", "instructions") if responses else _MESSAGES
        what = "input items" if responses else "messages"
        self._expected = f"{self._key}: expected a list of {what} (or an object with '{self._key}')"

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self._walk()
        except ijson.JSONError as exc:
            text = exc.args[0] if exc.args else ""
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            reason = (str(text).strip().splitlines() or ["parse error"])[0]
            raise InvalidBlockError(f"not valid JSON: {reason}") from exc

    def _walk(self) -> Iterator[Any]:
        events = iter(self._events)
        first = next(events, None)
        if first is None or first[1] not in _OPEN:
            raise InvalidBlockError(self._expected)
        key, system_key = self._key, self._system_key
        item = "item" if first[1] == "start_array" else f"{key}.item"
        found = item == "item"
        builder: Any = None
        target = ""
        depth = 0
        for prefix, event, value in events:
            if builder is not None:
                builder.event(event, value)
                depth += (event in _OPEN) - (event in _CLOSE)
                if depth == 0:
                    if target == system_key:
                        self.system = builder.value
                    else:
                        yield builder.value
                    builder = None
                continue
            if prefix in (item, system_key) and event != "map_key":
                if prefix == system_key and item == "item":
                    continue
                if event in _OPEN:
                    builder, target, depth = ijson.ObjectBuilder(), prefix, 1
                    builder.event(event, value)
                elif prefix == system_key:
                    self.system = value
                elif event not in _CLOSE:
                    yield value
            elif prefix == key and item != "item":
                if event == "start_array":
                    found = True
                elif event == "string" and key == "input":  # Responses: one user message
                    found = True
                    yield {"role": "user", "content": value}
                elif event != "end_array":
                    raise InvalidBlockError(self._expected)
        if not found:
            raise InvalidBlockError(self._expected)


_MESSAGES: Final = ("messages", "system")


def import_stream(
    file: IO[bytes],
    fmt: Literal["openai", "anthropic", "responses"],
    conversation_id: str,
    on_read: Callable[[int], None] = lambda n: None,
) -> ImportedConversation:
    """A new timeline holding the messages of ``file`` (a binary stream of JSON), with the
    system prompt it carried and its count of system messages. ``on_read`` gets each
    chunk's size."""
    messages = read_messages(file, fmt, on_read)
    b = Builder(conversation_id)
    count = importer_of(fmt)(messages, b, 0)
    count += document_system(fmt, messages, b)
    return ImportedConversation(b.tl, "\n\n".join(b.system), count)


def read_messages(
    file: IO[bytes], fmt: str, on_read: Callable[[int], None] = lambda n: None
) -> _Messages:
    """The messages (Responses: items) of ``file`` as they are parsed; once read, its
    ``system`` holds the document's own system prompt (``system`` / ``instructions``)."""
    return _Messages(_Counting(file, on_read), responses=fmt == "responses")


Importer = Callable[[Iterable[Any], Builder, int], int]
"""Appends messages (the first one's index given, for error messages); returns how many
went to the system prompt."""


def importer_of(fmt: str) -> Importer:
    """The importer of ``fmt``'s messages or items."""
    if fmt == "openai":
        return _import_openai
    if fmt == "anthropic":
        return _import_anthropic
    if fmt == "responses":
        return lambda items, b, start: import_items(items, b, b.system, start)
    raise InvalidBlockError(f"unknown format {fmt!r}; use 'openai', 'anthropic' or 'responses'")


def document_system(fmt: str, messages: _Messages, b: Builder) -> int:
    """Put the document's own system prompt (Anthropic's ``system``, Responses'
    ``instructions``), read by now, first in the builder's; returns 1 if there was one."""
    if fmt == "anthropic":
        system = split_messages({"system": messages.system, "messages": []})[1]
    elif fmt == "responses" and isinstance(messages.system, str):
        system = messages.system
    else:
        return 0
    if system:
        b.system.insert(0, system)
    return 1 if system else 0


def import_file(
    file: IO[bytes],
    fmt: Literal["openai", "anthropic", "responses"],
    conversation_id: str,
    on_read: Callable[[int], None] = lambda n: None,
) -> tuple[Timeline, int]:
    """A new timeline holding the messages of ``file`` (a binary stream of JSON); returns
    it and the count of skipped system messages (:func:`import_stream` also gives the
    system prompt). ``on_read`` gets each chunk's size."""
    imported = import_stream(file, fmt, conversation_id, on_read)
    return imported.timeline, imported.system_messages
