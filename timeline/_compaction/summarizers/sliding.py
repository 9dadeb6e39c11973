"""The sliding-window summarizer: first N and last M blocks, the middle counted."""

from __future__ import annotations

import attrs

from timeline._compaction.summarizers.base import (
    SummaryRequest,
    block_line,
    estimate_tokens,
    non_header,
)

__all__ = ["SlidingWindowSummarizer"]


@attrs.frozen
class SlidingWindowSummarizer:
    """Keeps the first ``keep_first`` and last ``keep_last`` blocks as transcript lines and
    replaces the middle with ``[... N blocks omitted ...]``; no model needed."""

    keep_first: int = 2
    keep_last: int = 5
    line_chars: int = 400
    name: str = "sliding_window"

    def summarize(self, request: SummaryRequest) -> str:
        blocks = non_header(request.blocks)
        head = blocks[: self.keep_first]
        tail = blocks[max(self.keep_first, len(blocks) - self.keep_last) :]
        omitted = len(blocks) - len(head) - len(tail)
        lines = ["[Conversation summary]"]
        previous = request.previous_summary.strip()
        if previous:
            budget_chars = request.max_tokens * 2  # half the budget for what came before
            if len(previous) > budget_chars:
                previous = "[...]\n" + previous[-budget_chars:]
            lines += ["[Earlier summary]", previous]
        lines += [block_line(b, self.line_chars) for b in head]
        if omitted:
            lines.append(f"[... {omitted} blocks omitted ...]")
        lines += [block_line(b, self.line_chars) for b in tail]
        if request.digest.user_requests:
            lines.append("[User requests so far]")
            lines += [f"{i}. {r}" for i, r in enumerate(request.digest.user_requests, 1)]
        text = "\n".join(lines)
        if estimate_tokens(text) > request.max_tokens and self.line_chars > 60:
            # shorter lines until it fits (or lines are already short)
            return attrs.evolve(self, line_chars=self.line_chars // 2).summarize(request)
        return text
