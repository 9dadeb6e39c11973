"""The live window as stored: references to its blocks, consecutive ids as one run.

A window names every block it holds. Ids from the default id factory follow each other
(``b1``, ``b2`` ...), so a window is stored as runs: ``b1`` and the 699,999 ids after it is
one reference, not 700,000. The window row then stays a few bytes however long the
conversation is (it is written again at every persist), and a streaming import
(``commit_stream``) holds only the run it is extending, not every id it wrote.

A record holding a run is written at codec version 2 (:data:`RUNS_VERSION`): a reader of
version 1 would take each run for its first id alone, so it refuses the record instead
("upgrade block-timeline"). Other records keep version 1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import msgspec

from timeline._model import TimelineState

__all__ = ["MAX_RUN", "RUNS_VERSION", "RefRuns", "WindowRecord", "WindowRef", "expand"]

RUNS_VERSION: Final = 2
MAX_RUN: Final = 1 << 24
"""Most ids one reference stands for after its own (a longer run is cut in two): a
damaged or forged row cannot make one reference expand without bound."""

_NUMBERED: Final = re.compile(r"(.*?)(0|[1-9][0-9]*)\Z", re.DOTALL)
"""An id as a prefix and a number written without leading zeros (``str(n)``)."""


class WindowRef(msgspec.Struct, frozen=True, array_like=True):
    """One window block by reference: its id and the hidden state it has now; ``then``
    more blocks follow in a run (shown, not hidden), their ids counting on from ``id``."""

    id: str
    hidden: bool = False
    replacement_text: str | None = None
    then: int = 0


class WindowRecord(msgspec.Struct, frozen=True):
    """The live window as stored: references into the turn log / summary index, so a
    persist writes O(new blocks), not the whole window. Decoded records hold one
    reference a block (:func:`expand`)."""

    conversation_id: str
    refs: list[WindowRef]
    state: TimelineState


def _split(block_id: str) -> tuple[str, int] | None:
    found = _NUMBERED.match(block_id)
    return (found[1], int(found[2])) if found else None


class RefRuns:
    """Builds a window's references one block at a time, joining consecutive ids."""

    def __init__(self) -> None:
        self.refs: list[WindowRef] = []
        self._prefix = ""
        self._last = -1
        """The number of the run's last id (-1: the last reference starts no run)."""
        self._then = 0

    def add(self, block_id: str, hidden: bool = False, replacement_text: str | None = None) -> None:
        plain = not hidden and replacement_text is None
        if (
            plain
            and self._last >= 0
            and self._then < MAX_RUN
            and block_id == f"{self._prefix}{self._last + 1}"
        ):
            self._last += 1
            self._then += 1
            return
        self._close()
        self.refs.append(WindowRef(block_id, hidden, replacement_text))
        parts = _split(block_id) if plain else None
        self._prefix, self._last = parts if parts is not None else ("", -1)

    def _close(self) -> None:
        if self._then:
            self.refs[-1] = WindowRef(self.refs[-1].id, then=self._then)
            self._then = 0

    def done(self) -> list[WindowRef]:
        """The references, the last run closed."""
        self._close()
        self._last = -1
        return self.refs

    def extend(self, refs: Iterable[tuple[str, bool, str | None]]) -> None:
        """Add ``(id, hidden, replacement_text)`` references in order."""
        for block_id, hidden, replacement in refs:
            self.add(block_id, hidden, replacement)

    @classmethod
    def of(cls, refs: Iterable[tuple[str, bool, str | None]]) -> list[WindowRef]:
        runs = cls()
        runs.extend(refs)
        return runs.done()


def version_of(refs: list[WindowRef]) -> int:
    """The codec version a record holding ``refs`` is written at."""
    return RUNS_VERSION if any(r.then for r in refs) else 1


def expand(refs: list[WindowRef]) -> list[WindowRef]:
    """One reference a block; ValueError for a run no writer makes (hidden, too long, or
    from an id without a number)."""
    if not any(r.then for r in refs):
        return refs
    out: list[WindowRef] = []
    for ref in refs:
        if not ref.then:
            out.append(ref)
            continue
        parts = _split(ref.id)
        if ref.hidden or ref.replacement_text is not None or parts is None:
            raise ValueError(f"reference {ref.id!r} starts a run it cannot start")
        if not 0 < ref.then <= MAX_RUN:
            raise ValueError(f"reference {ref.id!r} has a run of {ref.then}")
        prefix, first = parts
        out += [WindowRef(f"{prefix}{n}") for n in range(first, first + ref.then + 1)]
    return out
