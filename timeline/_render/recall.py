"""Recall at render time (:mod:`timeline._compaction.recall`): the query, the room the
budget leaves, one search of the archive (the blocks in memory no longer shown, and the
store's turn log) each time what it depends on changes, and the labelled block added
after the stable stream.

Nothing is searched again while the query, the archive and the store are the same (the
agent's next render after an append), and nothing is packed again while the room is
too: the memo's keys hold everything each result depends on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from timeline._compaction import INTRO, RecallPolicy, entry_text, rank_candidates, recalled_blocks
from timeline._model import (
    CONV_RECALLED,
    USER_PROMPT,
    Block,
    IndexStore,
    SearchHit,
    StoreError,
    block_counts,
    block_type,
    query_terms,
    search_text,
    word_term,
)
from timeline._model import log as _log
from timeline._render.prepare import Prep, overhead, raw_tokens
from timeline._render.settings import Settings
from timeline._state import Archive, Entry, Ledger, Recall

__all__ = ["MIN_ROOM", "recall_async", "recall_sync", "with_recall"]

MIN_ROOM: Final = 96
"""Less room than this (tokens) recalls nothing: the note and one heading would fill it."""
RECALL_ID: Final = "recall"
SEARCH_LIMIT: Final = 50
COUNTS_HELD: Final = 512
"""The most stored blocks whose terms are remembered (the memo starts over past it)."""


@attrs.frozen
class _Ask:
    """One render's question to the archive, and the room for the answer."""

    query: str
    """What the archive is searched with: the query's words not in view."""
    terms: tuple[str, ...]
    """The whole query's terms (what the candidates are ranked by)."""
    own: frozenset[str]
    """The blocks the query was taken from (never recalled)."""
    novel: tuple[str, ...]
    """The query's terms the prompt does not show: a block comes back only for one."""
    room: int
    policy: RecallPolicy
    store: IndexStore | None
    key: tuple[object, ...]
    """What the search's result depends on (the store besides: compared by identity)."""


def _sources(ledger: Ledger) -> tuple[Block, ...]:
    """The newest user prompt in view, and the agent's newest tool call after it while
    that call waits for its result (what the agent is about to learn), whichever there
    are. A call already answered shows its result: the query stays the prompt, the same
    at every step of the agent's work on it."""
    stream = ledger.refresh_stream()
    waiting = stream.open_calls
    call: Block | None = None
    looking = bool(waiting)
    for b in reversed(stream.blocks):
        if b.type == USER_PROMPT and not b.hidden:
            return (b,) if call is None else (b, call)
        if looking and block_type(b.type).render == "tool_call":
            looking = False
            if b.call_id in waiting:
                call = b
    return () if call is None else (call,)


def _query(ledger: Ledger) -> frozenset[str]:
    """The ids of the blocks the query comes from (:func:`_sources`, counted among the
    shown words first; gathered again only when those blocks are others)."""
    sources = _sources(ledger)
    memo = ledger.recall
    memo.visible.count(sources)
    held = memo.query_sources
    if len(held) != len(sources) or any(a is not b for a, b in zip(held, sources, strict=False)):
        memo.query_sources = sources
        memo.query_ids = frozenset(b.id for b in sources)
    return memo.query_ids


def _terms(ledger: Ledger) -> tuple[str, tuple[str, ...]]:
    """The query's text and its search terms (analysed once per query, and only when a
    word of it is not in view)."""
    memo = ledger.recall
    sources = memo.query_sources
    text = "\n".join(b.text if b.type == USER_PROMPT else search_text(b) for b in sources)
    if memo.query_terms[0] != text:
        memo.query_terms = (text, tuple(query_terms(text)))
    return memo.query_terms


def _room(ledger: Ledger, prep: Prep, budget: int, policy: RecallPolicy) -> int:
    """Tokens the recalled block may take: ``share`` of the budget, or what the budget
    leaves when less (upper bounds counted exactly only when they decide it)."""
    want = int(policy.share * budget)
    stream = ledger.refresh_stream()
    calibration = overhead(ledger)
    if raw_tokens(stream, prep) + calibration + want > budget and stream.pending:
        stream.resolve(lambda: raw_tokens(stream, prep) + calibration + want <= budget)
    return min(want, budget - raw_tokens(stream, prep) - calibration)


def _novel(ledger: Ledger, prep: Prep, sources: Sequence[Block]) -> dict[str, str]:
    """The words of the query's ``sources`` (:func:`~timeline._model.search_text.shown_words`)
    no visible block shows but those sources (the stream's blocks, the caller's tail's),
    in a stable order, each with its term: the word's whole
    (:func:`~timeline._model.search_text.word_term`), as a part of it may be in view while
    the word is not; stop words left out.

    A word a counted block besides the sources shows stays shown while the stream's
    version is the same (blocks are only added, and the sources that come later are new
    blocks), so each source keeps the words not yet known to be shown
    (:attr:`~timeline._state.archive.RecallMemo.open_words`) and only those are looked at
    again."""
    memo = ledger.recall
    visible = memo.visible
    get = visible.counts.get
    own = [visible.words_of(b) for b in sources]
    tail = [visible.words_of(b) for b in prep.tail]
    held = memo.open_words if memo.open_version == visible.version else {}
    memo.open_words, memo.open_version = {}, visible.version
    most = len(own)  # (a word only the sources show is counted at most that many times)
    unseen: set[str] = set()
    for block, mine in zip(sources, own, strict=True):
        kept = held.get(block.id)
        still = []
        for w in kept[1] if kept is not None and kept[0] is block else mine:
            n = get(w, 0)
            if n <= most and n <= sum(w in words for words in own):
                still.append(w)
        memo.open_words[block.id] = (block, tuple(still))
        unseen.update(w for w in still if not any(w in t for t in tail))
    if not unseen:
        return {}
    novel = {w: word_term(w) for w in sorted(unseen)}
    return {w: t for w, t in novel.items() if t}


def _ask(ledger: Ledger, settings: Settings, prep: Prep, force: bool) -> _Ask | None:
    policy = settings.policy
    recall = policy.recall
    budget = policy.budget
    if recall is None or force or not policy.active or budget is None:
        return None
    if ledger.summary_index < 0 and not ledger.state.cleared:
        return None  # nothing was compacted or cleared: all there is is in view
    stream = ledger.refresh_stream()
    visible = ledger.recall.visible
    visible.update(stream.version, stream.blocks)
    own = _query(ledger)
    sources = ledger.recall.query_sources
    found = _novel(ledger, prep, sources)
    if found and visible.pending:  # counted without the blocks appended since: count them
        visible.flush()
        found = _novel(ledger, prep, sources)
    if not found:
        return None  # everything the query names is in view: nothing to bring back
    novel = tuple(sorted(set(found.values())))
    _, terms = _terms(ledger)
    room = _room(ledger, prep, budget, recall)
    if room < MIN_ROOM:
        return None
    state = ledger.state
    key = (terms, novel, own, state.structure_version, ledger.version, recall.max_blocks)
    return _Ask(" ".join(found), terms, own, novel, room, recall, ledger.store, key)


def _limit(ask: _Ask) -> int:
    """Candidates asked of each source: enough that the joint ranking, not one source's,
    decides what comes back."""
    return max(SEARCH_LIMIT, 3 * ask.policy.max_blocks)


def _stored(
    ledger: Ledger, ask: _Ask, archived: Mapping[str, Block], hits: Sequence[SearchHit]
) -> dict[str, Entry]:
    """The store's hits on blocks not shown (not in memory, or ``archived`` there), as
    entries by the id of the block they show (a hit on a call shows its result)."""
    out: dict[str, Entry] = {}
    for hit in hits:
        block, call = hit.block, getattr(hit, "call", None)
        result = getattr(hit, "result", None)
        if result is not None:
            block, call = result, hit.block
        bid = block.id
        shown = ledger.get(bid) is not None and bid not in archived
        if hit.kind != "log" or block.hidden or shown or bid in ask.own or bid in out:
            continue
        out[bid] = (call, block)
    return out


def _counts(ledger: Ledger, entry: Entry) -> Mapping[str, int]:
    """The terms a stored entry is found by (its block's, and its call's), analysed once
    per block."""
    call, block = entry
    memo = ledger.recall.counts
    held = memo.get(block.id)
    if held is None or held[0] is not block:
        if len(memo) > COUNTS_HELD:
            memo.clear()
        held = (block, block_counts(block, call))
        memo[block.id] = held
    return held[1]


def _archive(ledger: Ledger) -> Archive:
    """The blocks in memory no longer shown whole (compacted away or cleared), brought up
    to date when the structure or the store version moved."""
    archive = ledger.recall.archive
    key = (ledger.state.structure_version, ledger.version)
    archive.refresh(key, ledger.blocks, ledger.summary_index, ledger.carried, ledger.state.cleared)
    return archive


def _found(
    ledger: Ledger, ask: _Ask, hits: Sequence[SearchHit]
) -> list[tuple[Entry, Mapping[str, int]]]:
    """The archive's best entries for ``ask``. With a store, it searches everything the
    store holds and the in-memory archive only what was never persisted (blocks
    compacted since the last persist); what both found is ranked together
    (:func:`~timeline._compaction.recall_rank.rank_candidates`)."""
    archive = _archive(ledger)
    memory = [i for i in archive.search(ask.novel, _limit(ask)) if i not in ask.own]
    if ask.store is not None and memory:
        unstored = set(ledger.new_ids)
        memory = [i for i in memory if i in unstored]
    entries: dict[str, Entry] = {i: (archive.calls.get(i), archive.blocks[i]) for i in memory}
    candidates = [(i, archive.counts(i)) for i in memory]
    for bid, entry in _stored(ledger, ask, archive.blocks, hits).items():
        if bid not in entries:
            entries[bid] = entry
            candidates.append((bid, _counts(ledger, entry)))
    least = ask.policy.min_match
    counts = dict(candidates)
    ranked = rank_candidates(ask.terms, candidates)
    return [(entries[key], counts[key]) for key, match in ranked if match >= least]


def _pack(ledger: Ledger, ask: _Ask, found: list[Entry]) -> Recall | None:
    """The recalled block: the best entries that fit the room, at most ``max_blocks``."""
    if not found:
        return None
    memo = ledger.memo
    wanted = frozenset(ask.terms)
    cap = ask.policy.block_max_tokens or ask.room // 2
    turn = ledger.state.current_turn_id
    left = ask.room - memo.text(INTRO) - 16  # the label and the framing
    chosen: list[tuple[Entry, str]] = []
    for entry in found[: ask.policy.max_blocks]:
        text = entry_text(entry, wanted, min(cap, left), memo.text)
        cost = memo.text(text) + 1
        if cost > left:
            continue
        chosen.append((entry, text))
        left -= cost
    while chosen:
        body = "\n\n".join([INTRO, *(text for _, text in chosen)])
        block = Block(
            type=CONV_RECALLED,
            text=body,
            id=RECALL_ID,
            author="system",
            turn_id=turn,
            path=block_type(CONV_RECALLED).default_path(turn, None, None),
        )
        cost = memo.block(block)
        if cost <= ask.room:
            return Recall(block, cost, recalled_blocks([entry for entry, _ in chosen]))
        chosen.pop()
    return None


def _recalled(ledger: Ledger, ask: _Ask, hits: Sequence[SearchHit]) -> Recall | None:
    memo = ledger.recall
    if memo.search_key != ask.key or memo.store is not ask.store:
        memo.found = _found(ledger, ask, hits)
        memo.search_key, memo.store = ask.key, ask.store
    pack_key = (ask.key, ask.novel, ask.room, ledger.state.current_turn_id)
    if memo.pack_key != pack_key:
        novel = ask.novel
        wanted = [entry for entry, counts in memo.found if any(t in counts for t in novel)]
        memo.packed = _pack(ledger, ask, wanted)
        memo.pack_key = pack_key
    return memo.packed


def _searched(ledger: Ledger, ask: _Ask) -> bool:
    """The memo holds this search's result already."""
    return ledger.recall.search_key == ask.key and ledger.recall.store is ask.store


def recall_sync(ledger: Ledger, settings: Settings, prep: Prep, *, force: bool) -> Recall | None:
    """What this render recalls (None: nothing, or recall is off)."""
    ask = _ask(ledger, settings, prep, force)
    if ask is None:
        return None
    hits: list[SearchHit] = []
    if ask.store is not None and not _searched(ledger, ask):
        try:
            hits = ask.store.search(settings.conversation_id, ask.query, limit=_limit(ask))
        except StoreError as exc:
            _log.recall_search_failed(settings.conversation_id, exc)
    return _recalled(ledger, ask, hits)


async def recall_async(
    ledger: Ledger, settings: Settings, prep: Prep, *, force: bool
) -> Recall | None:
    """:func:`recall_sync` with the store's async search (or its sync one in a worker
    thread)."""
    ask = _ask(ledger, settings, prep, force)
    if ask is None:
        return None
    hits: list[SearchHit] = []
    store = ask.store
    if store is not None and not _searched(ledger, ask):
        cid, limit = settings.conversation_id, _limit(ask)
        try:
            asearch = getattr(store, "asearch", None)
            if asearch is not None:
                hits = await asearch(cid, ask.query, limit=limit)
            else:
                hits = await asyncio.to_thread(store.search, cid, ask.query, limit=limit)
        except StoreError as exc:
            _log.recall_search_failed(settings.conversation_id, exc)
    return _recalled(ledger, ask, hits)


def with_recall(prep: Prep, recall: Recall | None) -> Prep:
    """``prep`` with the recalled block first in the tail (after the stable stream,
    before the caller's own tail blocks)."""
    if recall is None:
        return prep
    return attrs.evolve(
        prep,
        tail=[recall.block, *prep.tail],
        tail_costs=[recall.cost, *prep.tail_costs],
        recalled=recall.recalled,
    )
