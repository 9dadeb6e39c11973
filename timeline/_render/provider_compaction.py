"""Recording a provider compaction (:mod:`timeline._compaction.provider_compaction`): the
newest ``provider.compaction`` block of the policy's provider becomes the cut, and
everything visible before it is compacted, as by a summary of our own."""

from __future__ import annotations

from timeline._compaction import CompactionStats, CutPlan, provider_compaction_cut, valid_cuts
from timeline._model import CONV_RANGE_SUMMARY, block_type
from timeline._render.prepare import Prep, overhead, raw_tokens
from timeline._render.settings import Settings
from timeline._state import Ledger

__all__ = ["provider_compaction_plan"]


def provider_compaction_plan(
    ledger: Ledger, settings: Settings, prep: Prep
) -> tuple[CutPlan, CompactionStats] | None:
    """The cut at the provider's compaction block and the stats announcing it (None: the
    policy has no native mode, or no compaction block to record)."""
    native = settings.policy.native
    if native is None:
        return None
    blocks = ledger.blocks
    start = ledger.summary_index + 1
    cut = provider_compaction_cut(blocks, start, native.provider)
    if cut is None or not valid_cuts(blocks, start)[cut]:
        return None  # e.g. inside a tool call and its result: left as content
    pinned = ledger.pinned
    compacted = tuple(
        b for b in blocks[start:cut] if b.id not in pinned and b.type != CONV_RANGE_SUMMARY
    )
    if not any(block_type(b.type).render != "header" for b in compacted):
        return None
    stream = ledger.refresh_stream()
    stream.resolve()
    before = raw_tokens(stream, prep) + overhead(ledger)
    plan = CutPlan(
        cut=cut,
        history=compacted,
        prefix=(),
        split_turn_id=None,
        compacted=compacted,
        kept_tokens=0,
    )
    stats = CompactionStats.opening(
        "native",
        before,
        summary_block_count=ledger.summary_count,
        original_block_count=len(stream.blocks) + len(prep.tail),
        summarizer=f"native ({native.provider})",
        tier="provider",
    )
    return plan, stats
