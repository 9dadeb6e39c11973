"""timeline._state."""

from __future__ import annotations

from timeline._state.archive import (
    Archive,
    Entry,
    Recall,
)
from timeline._state.carry import (
    RELEASED_KEY,
)
from timeline._state.ledger import (
    Ledger,
)
from timeline._state.stream import (
    VisibleStream,
    cleared_form,
    rendered_form,
    track_call,
)

__all__ = [
    "Archive",
    "Entry",
    "Ledger",
    "RELEASED_KEY",
    "Recall",
    "VisibleStream",
    "cleared_form",
    "rendered_form",
    "track_call",
]
