"""A count of what was compacted, by author, and the file lists: a summary with no model."""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

import attrs

from timeline._compaction.quoting import quote
from timeline._compaction.summarizers.base import SummaryRequest, non_header

__all__ = ["TruncateSummarizer"]

_ROLES: Final = ("user", "assistant", "tool")
_LINE = re.compile(r"\[Compacted (\d+) messages: (\d+) user, (\d+) assistant, (\d+) tool\]")


@attrs.frozen
class TruncateSummarizer:
    """``[Compacted N messages: x user, y assistant, z tool]``, counted by author.

    A message is a block authored by the user, the assistant or a tool (system notes and
    turn headers are not counted). Counts add up across compactions: the count line that
    starts the previous summary (this summarizer's own text) is read back; a line
    anywhere else (a path, another summarizer's text) never counts. The read and
    modified file lists follow as tags.
    """

    name: str = "truncate"

    def summarize(self, request: SummaryRequest) -> str:
        counts = Counter(b.author for b in non_header(request.blocks) if b.author in _ROLES)
        previous = _LINE.match(request.previous_summary)
        if previous is not None:
            for role, value in zip(_ROLES, previous.groups()[1:], strict=True):
                counts[role] += int(value)
        user, assistant, tool = (counts[r] for r in _ROLES)
        lines = [
            f"[Compacted {user + assistant + tool} messages: "
            f"{user} user, {assistant} assistant, {tool} tool]"
        ]
        if request.kind == "history":
            digest = request.digest
            if digest.read_files:
                lines.append(f"<read-files>{', '.join(map(quote, digest.read_files))}</read-files>")
            if digest.modified_files:
                changed = ", ".join(map(quote, digest.modified_files))
                lines.append(f"<modified-files>{changed}</modified-files>")
        return "\n".join(lines)
