"""The inventory summary's sections as plain data: what one summary carries to the next.

Stored in the summary block's ``meta`` (see :mod:`~timeline._compaction.summary_state`) and
handed to the next inventory summary as ``SummaryRequest.previous_sections``: the items
travel as data, so no text from the conversation (a prompt with ``## Goal`` in it, a file
path with a line break) can ever become a section or end one.
"""

from __future__ import annotations

import msgspec

__all__ = ["Fact", "SummarySections"]


class Fact(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One fact a summary keeps: a short quote of the block it came from.

    ``text`` is already quoted (one line); ``path`` the block's path, ``turn_id`` its turn
    and ``date`` its day (``8 May 2023``); ``subject`` what a tool result answered (the
    tool and its main argument, ``read_file src/db.py``). A newer fact with the same
    non-empty ``key`` replaces an older one (a file read again, a command run again);
    ``score`` is what the fact is worth to a later question, per character spent on it
    (how the summary chooses under its cap); ``kind`` is ``"error"`` for a failure,
    ``"decision"`` for a decision the agent stated, else ``""``.
    """

    text: str
    path: str
    turn_id: str = ""
    date: str = ""
    subject: str = ""
    key: str = ""
    score: float = 0.0
    kind: str = ""


class SummarySections(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The items of each section of an inventory summary, as it listed them.

    ``goal`` holds the Goal as written; every other list holds one item per bullet (its
    text, no list marker). ``original_request``, ``early_progress`` and
    ``context_for_suffix`` come from a split turn's prefix summary and join Critical
    Context in the next summary. ``earlier`` holds the text of summaries the inventory
    did not write (another summarizer's, or one stored by an earlier version), carried
    verbatim: nothing is read out of them. ``facts`` are the facts the summary kept, oldest
    first; ``form`` is ``"conversation"`` for a conversation between people (no tool use),
    else the agent form; ``people`` are who speaks in a conversation and ``span`` its first
    and last day.
    """

    goal: list[str] = []
    constraints: list[str] = []
    done: list[str] = []
    in_progress: list[str] = []
    not_started: list[str] = []
    blocked: list[str] = []
    decisions: list[str] = []
    next_steps: list[str] = []
    critical: list[str] = []
    original_request: list[str] = []
    early_progress: list[str] = []
    context_for_suffix: list[str] = []
    earlier: list[str] = []
    facts: list[Fact] = []
    people: list[str] = []
    span: list[str] = []
    form: str = ""

    def merged(self, other: SummarySections) -> SummarySections:
        """These sections followed by ``other``'s, section by section (the form: this
        one's, else ``other``'s; the span from the first of both to the last)."""
        lists = {
            name: [*getattr(self, name), *getattr(other, name)]
            for name in self.__struct_fields__
            if name not in ("form", "span")
        }
        span = [*(self.span or other.span)[:1], *(other.span or self.span)[-1:]]
        return SummarySections(**lists, span=span, form=self.form or other.form)
