"""Import a messages file straight into a store, holding one message's blocks at a time.

:func:`~timeline.io.stream.import_stream` returns a timeline holding every block of the
file: about 420 bytes a block in memory, 50 times the file for an export of one-character
messages. :class:`StreamedImport` hands each message's blocks on as soon as they are
appended (``Timeline.drain``), and a store's ``commit_stream`` writes them in one
transaction as they come, so ``timeline import`` needs memory for a message, a chunk of
rows and the parser, not for the conversation. Bad input anywhere still stores nothing:
the error ends the store's transaction, which rolls back.

Chat Completions and Anthropic files stream; a Responses file is read whole (as
``import_stream`` reads it) and then handed on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Literal

from timeline.core.timeline import Timeline
from timeline.io._common import Builder, split_messages
from timeline.io.importers import _import_anthropic, _import_openai
from timeline.io.stream import _Counting, _Messages, import_stream
from timeline.model.block import TURN_HEADER, Block
from timeline.model.errors import InvalidBlockError
from timeline.model.persistence import TimelineState

__all__ = ["StreamedImport"]


class StreamedImport:
    """The blocks of a messages file, in order, each given once as the file is read.

    Iterate it once (a store's ``commit_stream(..., blocks=it, finish=it.state)``); then
    :attr:`system` is the system prompt the file carried, :attr:`system_messages` how
    many messages it came from, :attr:`count` the blocks given and :attr:`messages` the
    ones that are not turn headers. :meth:`state` is what the store keeps with the window:
    the counters, and the system prompt as a render records it."""

    def __init__(
        self,
        file: IO[bytes],
        fmt: Literal["openai", "anthropic", "responses"],
        conversation_id: str,
        on_read: Callable[[int], None] = lambda n: None,
    ) -> None:
        if fmt not in ("openai", "anthropic", "responses"):
            raise InvalidBlockError(
                f"unknown format {fmt!r}; use 'openai', 'anthropic' or 'responses'"
            )
        self._file, self._fmt, self._on_read = file, fmt, on_read
        self._builder = Builder(conversation_id)
        self._timeline = self._builder.tl
        self.system = ""
        self.system_messages = 0
        self.count = 0
        self.messages = 0
        self._done = False

    def __iter__(self) -> Iterator[Block]:
        if self._done or self.count:
            raise RuntimeError("a StreamedImport is read once")
        if self._fmt == "responses":
            imported = import_stream(self._file, "responses", self._builder.tl.conversation_id)
            self._timeline = imported.timeline
            yield from self._drain()
            self.system, self.system_messages = imported.system, imported.system_messages
        else:
            yield from self._messages()
        self._timeline.render(self.system)  # records the system prompt, as import does
        self._done = True

    def _messages(self) -> Iterator[Block]:
        b = self._builder
        messages = _Messages(_Counting(self._file, self._on_read))
        step = _import_openai if self._fmt == "openai" else _import_anthropic
        for i, message in enumerate(messages):
            self.system_messages += step((message,), b, i)
            yield from self._drain()
        if self._fmt == "anthropic":
            system = split_messages({"system": messages.system, "messages": []})[1]
            if system:
                self.system_messages += 1
                b.system.insert(0, system)
        self.system = "\n\n".join(b.system)

    def _drain(self) -> Iterator[Block]:
        for block in self._timeline.drain():
            self.count += 1
            self.messages += block.type != TURN_HEADER
            yield block

    def state(self) -> TimelineState:
        """The state stored with the window (once every block has been given)."""
        if not self._done:
            raise RuntimeError("StreamedImport.state() before every block was read")
        return self.timeline.snapshot().state

    @property
    def timeline(self) -> Timeline:
        """The importing timeline (empty once read: its blocks were handed on)."""
        return self._timeline
