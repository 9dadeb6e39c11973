"""Import a messages file straight into a store, holding one message's blocks at a time.

:func:`~timeline._io.stream.import_stream` returns a timeline holding every block of the
file: about 420 bytes a block in memory, 50 times the file for an export of one-character
messages. :class:`StreamedImport` hands each message's blocks on as soon as they are
appended (``Timeline.drain``), and a store's ``commit_stream`` writes them in one
transaction as they come, so ``timeline import`` needs memory for a message, a chunk of
rows and the parser, not for the conversation. Bad input anywhere still stores nothing:
the error ends the store's transaction, which rolls back.

Chat Completions, Anthropic and Responses files all stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Literal

from timeline._core import Timeline
from timeline._io._common import Builder
from timeline._io.stream import document_system, importer_of, read_messages
from timeline._model import TURN_HEADER, Block, TimelineError, TimelineState

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
        self._step = importer_of(fmt)  # an unknown format is refused here
        self._file, self._fmt, self._on_read = file, fmt, on_read
        self._builder = Builder(conversation_id)
        self.system = ""
        self.system_messages = 0
        self.count = 0
        self.messages = 0
        self._done = False

    def __iter__(self) -> Iterator[Block]:
        if self._done or self.count:
            raise TimelineError("a StreamedImport is read once: make a new one for the file")
        b = self._builder
        messages = read_messages(self._file, self._fmt, self._on_read)
        for i, message in enumerate(messages):
            self.system_messages += self._step((message,), b, i)
            yield from self._drain()
        self.system_messages += document_system(self._fmt, messages, b)
        self.system = "\n\n".join(b.system)
        b.tl.render(self.system)  # records the system prompt, as import does
        self._done = True

    def _drain(self) -> Iterator[Block]:
        for block in self._builder.tl.drain():
            self.count += 1
            self.messages += block.type != TURN_HEADER
            yield block

    def state(self) -> TimelineState:
        """The state stored with the window (once every block has been given)."""
        if not self._done:
            raise TimelineError("StreamedImport.state() before every block was read")
        return self.timeline.snapshot().state

    @property
    def timeline(self) -> Timeline:
        """The importing timeline (empty once read: its blocks were handed on)."""
        return self._builder.tl
