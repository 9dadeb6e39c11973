"""Compaction: choose the cut, build the summary requests, run summarizers safely.

The cut keeps recent context and never separates a tool call from its results; the
summary replaces what is before it. The modules:

* :mod:`~timeline.compaction.stats`: what a compaction did (:class:`CompactionStats`) and
  where it cuts (:class:`CutPlan`);
* :mod:`~timeline.compaction.clearing`: the clearing tier run before a summary (what is
  eligible and the placeholder each block shows);
* :mod:`~timeline.compaction.cuts`: valid cuts and the cut planner;
* :mod:`~timeline.compaction.requests`: the digest and the summary requests of a cut;
* :mod:`~timeline.compaction.run`: running a summarizer with its timeout and fallback;
* :mod:`~timeline.compaction.digest`, :mod:`~timeline.compaction.summary_text` and
  :mod:`~timeline.compaction.summarizers`: what a summary holds and says.
"""

from __future__ import annotations

from timeline.compaction.cuts import cut_boundary, plan_cut, valid_cuts
from timeline.compaction.requests import SummaryPlan, requests_for
from timeline.compaction.run import summarize_async, summarize_sync
from timeline.compaction.stats import (
    CompactionPreview,
    CompactionReason,
    CompactionStats,
    CompactionTier,
    CutPlan,
)
from timeline.compaction.summary_text import SPLIT_TURN_HEADING

__all__ = [
    "SPLIT_TURN_HEADING",
    "CompactionPreview",
    "CompactionReason",
    "CompactionStats",
    "CompactionTier",
    "CutPlan",
    "SummaryPlan",
    "cut_boundary",
    "plan_cut",
    "requests_for",
    "summarize_async",
    "summarize_sync",
    "valid_cuts",
]
