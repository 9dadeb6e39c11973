"""Render-time truncation of blocks too big for the budget (the full block is kept).

Used when no cut can make the prompt fit: one huge tool result, or a forced retry with
nothing left to compact. The rendered copy keeps the head and tail of the text and a
marker naming the block's path, so the model knows where the rest can be read back.

A truncated copy is text: a provider block loses its item. Its partners (the blocks of
the same provider pair, a server tool's use and its result, a computer call and its
output) then go as their text form too, so no provider gets half a pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from timeline._model import Block, block_type

__all__ = ["MIN_TRUNCATED_TOKENS", "cut_at_word", "truncate_text", "truncate_to_fit"]

MIN_TRUNCATED_TOKENS = 48
"""A truncated block keeps at least this much, so it still says what it was."""


def cut_at_word(text: str, cap: int) -> str:
    """``text[:cap]``, backed off to the start of a word the cut would split, so a stored
    excerpt never holds a fragment that search would match as another word ("cat" out of
    "catalogue"). A fragment of :data:`LONG_TOKEN` characters or more (a hash, base64, a
    run of one character) matches no query word and is kept."""
    if len(text) <= cap:
        return text
    cut = max(cap, 0)
    if cut and text[cut - 1].isalnum() and text[cut].isalnum():
        start = cut - 1
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        if cut - start < LONG_TOKEN:
            cut = start
    return text[:cut].rstrip()


LONG_TOKEN = 32
"""A cut-off piece of a word at least this long is kept (see :func:`cut_at_word`)."""


def truncate_text(text: str, path: str, keep_chars: int) -> str:
    """Head (2/3) + marker + tail (1/3) of ``text`` in about ``keep_chars`` characters."""
    if len(text) <= keep_chars:
        return text
    keep_chars = max(keep_chars, 0)
    head = keep_chars * 2 // 3
    tail = keep_chars - head
    omitted = len(text) - head - tail
    marker = f"\n[... truncated {omitted} of {len(text)} chars; full text at {path} ...]\n"
    return f"{text[:head]}{marker}{text[len(text) - tail :] if tail else ''}"


def truncate_to_fit(
    blocks: list[Block],
    costs: list[int],
    excess: int,
    cost_of: Callable[[Block], int],
    protected: Sequence[str] = (),
) -> tuple[int, list[str]]:
    """Shrink the largest truncatable blocks in place until ``excess`` tokens are gone.

    Tool calls (JSON params) and ``protected`` ids (pinned blocks) are never truncated.
    Returns the tokens removed and the paths truncated.
    """
    removed = 0
    paths: list[str] = []
    keep_ids = set(protected)
    for _ in range(3 * len(blocks) + 3):
        if removed >= excess:
            break
        best = -1
        for i, b in enumerate(blocks):
            if (
                b.id in keep_ids
                or block_type(b.type).render in ("tool_call", "header")
                or costs[i] <= MIN_TRUNCATED_TOKENS
                or not b.text
            ):
                continue
            if best < 0 or costs[i] > costs[best]:
                best = i
        if best < 0:
            break
        block = blocks[best]
        need = excess - removed
        target = max(MIN_TRUNCATED_TOKENS, costs[best] - need - 16)
        ratio = len(block.text) / max(1, costs[best])
        new_text = truncate_text(block.text, block.path, int(target * ratio) - 100)
        shrunk = msgspec.structs.replace(block, text=new_text, data=None)
        new_cost = cost_of(shrunk)
        if new_cost >= costs[best]:
            keep_ids.add(block.id)
            continue
        removed += costs[best] - new_cost
        blocks[best] = shrunk
        costs[best] = new_cost
        removed += _as_text(blocks, costs, _partners(blocks, best, block), cost_of)
        if block.path not in paths:
            paths.append(block.path)
    return removed, paths


def _partners(blocks: Sequence[Block], at: int, block: Block) -> list[int]:
    """The other provider blocks still holding their item that share ``block``'s pair
    id (none unless ``block`` is a provider block of a pair)."""
    if block.data is None or not block.call_id or block_type(block.type).render != "provider":
        return []
    return [
        i
        for i, b in enumerate(blocks)
        if i != at
        and b.call_id == block.call_id
        and b.data is not None
        and block_type(b.type).render == "provider"
    ]


def _as_text(
    blocks: list[Block], costs: list[int], indices: Sequence[int], cost_of: Callable[[Block], int]
) -> int:
    """Render the blocks at ``indices`` as their text form; the tokens that saves."""
    saved = 0
    for i in indices:
        plain = msgspec.structs.replace(blocks[i], data=None)
        cost = cost_of(plain)
        saved += costs[i] - cost
        blocks[i], costs[i] = plain, cost
    return saved
