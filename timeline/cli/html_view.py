"""The HTML page of a stored conversation (``timeline inspect ID --html OUT``): every block
it held, evicted ones from the store's turn log included (the page itself is drawn by
:mod:`timeline.render.html`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from html import escape

from timeline.compaction.policy import NoBudgetWarning
from timeline.core.timeline import Timeline
from timeline.model.block import CONV_RANGE_SUMMARY, Block
from timeline.render.context import RenderedContext
from timeline.render.html import Item, page, view_items
from timeline.render.usage import plural

__all__ = ["timeline_html"]


def _suppressed_render(tl: Timeline, system: str) -> RenderedContext:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)
        return tl.render(system)


def _stored_items(
    tl: Timeline, view: RenderedContext, log: Sequence[Block], summaries: Sequence[Block]
) -> list[Item]:
    """Every block the conversation held, in order: the turn log (evicted blocks from it),
    each summary right after the last block it covers, then what is not persisted yet."""
    in_prompt = {item.block.id: item for item in view_items(view, tl.pinned_ids)}
    memory = {b.id: b for b in tl.blocks}
    pinned = set(tl.pinned_ids)
    after: dict[str, list[Block]] = {}
    seen_summaries: set[str] = set()
    for s in [*summaries, *(b for b in tl.blocks if b.type == CONV_RANGE_SUMMARY)]:
        if s.id not in seen_summaries:
            seen_summaries.add(s.id)
            after.setdefault(str(s.meta.get("last_block_id", "")), []).append(s)
    items: list[Item] = []
    placed: set[str] = set()

    def add(b: Block) -> None:
        placed.add(b.id)
        shown = in_prompt.get(b.id)
        if shown is not None:
            items.append(shown)
            return
        current = memory.get(b.id)
        gone = "superseded" if b.type == CONV_RANGE_SUMMARY else "evicted"
        marks = [gone] if current is None else []
        block = current or b
        marks += ["hidden"] if block.hidden else []
        marks += ["pinned"] if block.id in pinned else []
        items.append(Item(block, tl.block_tokens(block), tuple(marks)))
        for s in after.pop(b.id, []):
            add(s)

    for b in log:
        if b.type != CONV_RANGE_SUMMARY and b.id not in placed:
            add(b)
    for b in tl.blocks:
        if b.id not in placed and (b.type != CONV_RANGE_SUMMARY or b.id in in_prompt):
            add(b)
    for group in after.values():  # summaries whose covered blocks are not in the log
        for s in group:
            if s.id not in placed:
                add(s)
    return items


def timeline_html(
    tl: Timeline,
    system: str = "",
    *,
    log: Sequence[Block] = (),
    summaries: Sequence[Block] = (),
    title: str = "",
) -> str:
    """The page for a whole conversation: ``log`` (the store's turn log) adds the blocks
    evicted from memory and ``summaries`` the earlier compactions."""
    view = _suppressed_render(tl, system)
    items = _stored_items(tl, view, log, summaries)
    evicted = sum("evicted" in i.marks or "superseded" in i.marks for i in items)
    head = (
        f"conversation {escape(tl.conversation_id)!s}, version {tl.version}: "
        f"{plural(len(items), 'block')}, {evicted:,} evicted to the store"
    )
    return page(title or f"timeline {tl.conversation_id}", head, items, view)
