"""The inventory summary's sections as plain data: what one summary carries to the next.

Stored in the summary block's ``meta`` (see :mod:`~timeline.compaction.summary_state`) and
handed to the next inventory summary as ``SummaryRequest.previous_sections``: the items
travel as data, so no text from the conversation (a prompt with ``## Goal`` in it, a file
path with a line break) can ever become a section or end one.
"""

from __future__ import annotations

import msgspec

__all__ = ["SummarySections"]


class SummarySections(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The items of each section of an inventory summary, as it listed them.

    ``goal`` holds the Goal as written; every other list holds one item per bullet (its
    text, no list marker). ``original_request``, ``early_progress`` and
    ``context_for_suffix`` come from a split turn's prefix summary and join Critical
    Context in the next summary. ``earlier`` holds the text of summaries the inventory
    did not write (another summarizer's, or one stored by an earlier version), carried
    verbatim: nothing is read out of them.
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

    def merged(self, other: SummarySections) -> SummarySections:
        """These sections followed by ``other``'s, section by section."""
        return SummarySections(
            **{
                name: [*getattr(self, name), *getattr(other, name)]
                for name in self.__struct_fields__
            }
        )
