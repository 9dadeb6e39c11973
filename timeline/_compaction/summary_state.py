"""A summary block's state as data: what its text is written from, and what the next
compaction reads instead of the text.

Every summary the library inserts keeps, in ``meta["summary_state"]``, the parts its text
is assembled from (:func:`~timeline._compaction.summary_text.assemble`): the Active Work
Reminder, the summarizer's own text, the split-turn or mid-turn part, and the inventory's
sections as lists of items (the tagged notes are in ``meta["compaction_digest"]``). The
next compaction reads this state, never the text: ``previous_summary`` is the previous
summarizer's text as it wrote it, prose or headings, and the inventory summarizer gets the
previous sections as data, so nothing from the conversation (a prompt with ``## Goal`` or
``[MID-TURN COMPACTION 1]`` in it, a path with a line break) can add, end or drop a
section.

A summary stored by an earlier version has no state: its whole text is the previous
summary, carried verbatim and never parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from timeline._compaction.digest import CompactionDigest
from timeline._compaction.sections import SummarySections
from timeline._compaction.summarizers.base import SummaryResult
from timeline._compaction.summary_text import SPLIT_TURN_HEADING, assemble
from timeline._model import Block

__all__ = [
    "STATE_KEY",
    "SummaryState",
    "previous_summary",
    "render_state",
    "state_from_meta",
    "summary_content",
]

STATE_KEY: Final = "summary_state"
"""The summary block's ``meta`` key holding its :class:`SummaryState`."""


class SummaryState(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The parts a summary's text is written from (stored as plain data).

    ``main`` is the history summarizer's text and ``main_sections`` its sections when the
    inventory wrote it; ``prefix`` / ``prefix_sections`` the same for a split turn's
    prefix, a ``[MID-TURN COMPACTION mid_turn]`` checkpoint when ``mid_turn`` is set.
    """

    reminder: str = ""
    main: str = ""
    main_sections: SummarySections | None = None
    prefix: str | None = None
    prefix_sections: SummarySections | None = None
    mid_turn: int | None = None


def render_state(state: SummaryState, tagged_notes: list[str]) -> str:
    """The summary text of ``state`` (the block's text is exactly this)."""
    return assemble(state.reminder, state.main, tagged_notes, state.prefix, state.mid_turn)


def summary_content(
    reminder: str,
    main: SummaryResult,
    prefix: SummaryResult | None,
    digest: CompactionDigest,
    mid_turn: int | None,
) -> tuple[str, dict[str, Any]]:
    """A new summary block's text and its ``meta["summary_state"]`` (plain data)."""
    state = SummaryState(
        reminder=reminder,
        main=main.text.strip(),
        main_sections=main.sections,
        prefix=None if prefix is None else prefix.text.strip(),
        prefix_sections=None if prefix is None else prefix.sections,
        mid_turn=mid_turn if prefix is not None else None,
    )
    meta: dict[str, Any] = msgspec.to_builtins(state)
    return render_state(state, digest.tagged_notes), meta


def state_from_meta(meta: Mapping[str, Any]) -> SummaryState | None:
    """The state stored in a summary block's meta; None when there is none (a summary of
    an earlier version) or it does not convert."""
    raw = meta.get(STATE_KEY)
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, SummaryState)
    except msgspec.ValidationError:
        return None


def previous_summary(block: Block | None) -> SummaryResult:
    """What the next compaction extends: the previous summarizer's text and, when the
    inventory wrote all of it, its sections.

    The rebuilt parts (reminder, tagged notes, a mid-turn checkpoint) are left out; a
    split turn's prefix summary stays, after the main text under ``## Turn Context
    (split turn)`` (its items join the sections when the inventory wrote it, else its
    text is carried verbatim). Without state, the block's whole text, as it is."""
    if block is None:
        return SummaryResult("")
    state = state_from_meta(block.meta)
    if state is None:
        return SummaryResult(block.text)
    text, sections = state.main, state.main_sections
    if state.prefix is not None and state.mid_turn is None:
        part = f"{SPLIT_TURN_HEADING}\n{state.prefix}"
        text = f"{text}\n\n{part}" if text else part
        if sections is not None:
            added = state.prefix_sections
            sections = sections.merged(added or SummarySections(earlier=[part]))
    return SummaryResult(text, sections)
