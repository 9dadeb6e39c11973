"""What one SQLite commit keeps while it writes a conversation's rows: the conversation's
number, the next free ``seq`` of its range, and the blocks it wrote (for the search index,
which the commit brings up to date before its window)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from timeline._model import Block

__all__ = ["LONG_TEXT", "SEQ_BITS", "CommitRange", "Written"]

SEQ_BITS: Final = 32
"""``seq`` = ``conv_no << SEQ_BITS | position``: one conversation's rows are one range."""

LONG_TEXT: Final = 1 << 20
"""In a streamed commit, blocks of texts this long are not kept for the search index: it
reads them from their row, once the commit has let the blocks go (a persist keeps them:
the timeline holds them anyway, and reading them back would be a second copy)."""


class Written(Mapping[int, Block | None]):
    """The blocks of a commit's rows by ``seq``, consecutive from ``first``: a list, 8
    bytes a row, where a dict of int keys took about 70 (a first persist of 700k tiny
    blocks holds them all at once)."""

    def __init__(self, first: int, keep_long: bool = True) -> None:
        self.first = first
        self.keep_long = keep_long
        self._blocks: list[Block | None] = []

    def append(self, block: Block) -> None:
        """The block of the row at ``first + len(self)`` (None for a long one, unless
        ``keep_long``)."""
        keep = self.keep_long or len(block.text) < LONG_TEXT
        self._blocks.append(block if keep else None)

    def __getitem__(self, seq: int) -> Block | None:
        if 0 <= seq - self.first < len(self._blocks):
            return self._blocks[seq - self.first]
        raise KeyError(seq)

    def __len__(self) -> int:
        return len(self._blocks)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.first, self.first + len(self._blocks)))


class CommitRange:
    """A conversation's number and the next free ``seq`` of its range (one commit)."""

    def __init__(self, conv_no: int, next_seq: int) -> None:
        self.conv_no = conv_no
        self.next_seq = next_seq
        self.blocks = Written(next_seq)

    def indexed(self) -> None:
        """The search index holds the rows written so far: their blocks are let go (a
        streamed commit indexes a chunk at a time)."""
        self.blocks = Written(self.next_seq, self.blocks.keep_long)

    def streamed(self) -> None:
        """A streamed commit: long texts are read back from their rows for the index."""
        self.blocks.keep_long = False

    def wrote(self, block: Block) -> None:
        """The row at ``next_seq`` was inserted: the next one is free."""
        self.blocks.append(block)
        self.next_seq += 1
