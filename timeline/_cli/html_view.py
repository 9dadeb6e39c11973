"""The HTML page of a stored conversation (``timeline inspect ID --html OUT``): what the
model sees next, then every block the conversation held, evicted ones from the store's
turn log included (the page itself is drawn by :mod:`timeline._html.page`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from html import escape

from timeline._cli.words import plural
from timeline._compaction import NoBudgetWarning
from timeline._core import Timeline
from timeline._html import Item, page, view_items
from timeline._model import CONV_RANGE_SUMMARY, Block, ToolSpec
from timeline._render import RenderedContext

__all__ = ["timeline_html"]


def _suppressed_render(tl: Timeline, system: str, tools: tuple[ToolSpec, ...]) -> RenderedContext:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)
        return tl.render(system, tools=tools)


def _summaries_after(tl: Timeline, summaries: Sequence[Block]) -> dict[str, list[Block]]:
    """Each summary by the id of the last block it covers (where its compaction cut)."""
    after: dict[str, list[Block]] = {}
    seen: set[str] = set()
    for s in [*summaries, *(b for b in tl.blocks if b.type == CONV_RANGE_SUMMARY)]:
        if s.id not in seen:
            seen.add(s.id)
            after.setdefault(str(s.meta.get("last_block_id", "")), []).append(s)
    return after


def _chronology(
    tl: Timeline, view: RenderedContext, log: Sequence[Block], summaries: Sequence[Block]
) -> list[Item]:
    """Every block the conversation held, in order: the turn log (evicted blocks from it),
    each summary right after the last block it covers, then what is not persisted yet.
    Blocks in the next prompt carry its marks; the others are ``evicted`` (only in the
    store), ``out`` (in memory, before the latest summary) or ``superseded`` (an earlier
    summary)."""
    in_prompt = {item.block.id: item for item in view_items(view, tl.pinned_ids, tl.cleared_ids)}
    memory = {b.id: b for b in tl.blocks}
    pinned = set(tl.pinned_ids)
    cleared = tl.cleared_ids
    after = _summaries_after(tl, summaries)
    items: list[Item] = []
    placed: set[str] = set()

    def add(b: Block) -> None:
        placed.add(b.id)
        shown = in_prompt.get(b.id)
        if shown is not None:
            items.append(shown)
        else:
            current = memory.get(b.id)
            block = current or b
            if b.type == CONV_RANGE_SUMMARY:
                marks = ["superseded"]
            else:
                marks = ["evicted" if current is None else "out"]
            marks += ["hidden"] if block.hidden else []
            marks += ["cleared"] if block.meta.get("cleared") or b.id in cleared else []
            marks += ["pinned"] if block.id in pinned else []
            items.append(Item(block, tl.block_tokens(block), tuple(marks)))
        for s in after.pop(b.id, []):
            if s.id not in placed:
                add(s)

    for b in log:
        if b.type != CONV_RANGE_SUMMARY and b.id not in placed:
            add(b)
    for b in tl.blocks:
        if b.id not in placed and (b.type != CONV_RANGE_SUMMARY or b.id in in_prompt):
            add(b)
    for group in list(after.values()):  # summaries whose covered blocks are not in the log
        for s in group:
            if s.id not in placed:
                add(s)
    return items


def timeline_html(
    tl: Timeline,
    system: str = "",
    tools: tuple[ToolSpec, ...] = (),
    *,
    log: Sequence[Block] = (),
    summaries: Sequence[Block] = (),
    title: str = "",
) -> str:
    """The page for a whole conversation: ``log`` (the store's turn log) adds the blocks
    evicted from memory and ``summaries`` the earlier compactions."""
    view = _suppressed_render(tl, system, tools)
    prompt = view_items(view, tl.pinned_ids, tl.cleared_ids)
    chronology = _chronology(tl, view, log, summaries)
    logged = [i for i in chronology if i.block.type != CONV_RANGE_SUMMARY]
    made = len(chronology) - len(logged)
    evicted = sum("evicted" in i.marks for i in logged)
    head = (
        f"conversation {escape(repr(tl.conversation_id))}, version {tl.version}: "
        f"{plural(len(logged), 'block')} and {plural(made, 'summary', 'summaries')}; "
        f"{plural(evicted, 'block')} evicted to the store"
    )
    notes = _cache_section(tl)
    return page(title or f"timeline {tl.conversation_id}", head, view, chronology, prompt, notes)


def _cache_section(tl: Timeline) -> str:
    """The provider's cache figures of the last request and the latest cache breaks with
    their likely cause ("" when ``record_usage`` never had cache figures)."""
    state = tl.snapshot().state
    report, breaks = state.usage, state.cache_breaks
    if (report is None or report.cache_read_tokens is None) and not breaks:
        return ""
    out = ['<section id="cache" aria-labelledby="cache-h"><h2 id="cache-h">Prompt cache</h2>']
    if report is not None and report.cache_read_tokens is not None:
        wrote = report.cache_write_tokens
        written = "" if wrote is None else f", wrote {wrote:,}"
        out.append(
            f'<p class="sub">Last request: read {report.cache_read_tokens:,}{written} of '
            f"{report.prompt_tokens:,} prompt tokens from the provider's cache.</p>"
        )
    if breaks:
        out.append(f"<p>{plural(len(breaks), 'cache break')}, the latest last:</p><ul>")
        for b in breaks:
            out.append(
                f"<li><code>{escape(b.ts)}</code> <strong>{escape(b.cause)}</strong>: read "
                f"{b.read_tokens:,} of {b.expected_tokens:,} cached tokens; "
                f"{escape(b.detail)}</li>"
            )
        out.append("</ul>")
    out.append("</section>")
    return "".join(out)
