"""Paths as the timeline's methods take them: checked, with the ``plan.latest`` alias, the
blocks that hiding or showing them changes, and whether pinning them fits the budget."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from timeline._compaction import CompactionPolicy
from timeline._model import (
    CONV_RANGE_SUMMARY,
    PLAN_LATEST,
    Block,
    InvalidBlockError,
    PinnedOverBudgetError,
    UnknownPathError,
    block_type,
    check_paths,
    clean_text,
)
from timeline._state import Ledger

__all__ = [
    "check_pin_fits",
    "clean_replacement",
    "known_paths",
    "plan_path",
    "set_hidden",
    "with_hidden",
]


def plan_path(ledger: Ledger, conversation_id: str, path: str) -> str:
    """``path`` with the alias ``plan.latest`` replaced by the newest plan's path."""
    if path != PLAN_LATEST:
        return path
    plan = ledger.get(ledger.plan_id) if ledger.plan_id else None
    if plan is None:
        raise UnknownPathError(
            "no react.plan block in memory for the alias 'plan.latest'",
            conversation_id=conversation_id,
            path=path,
        )
    return plan.path


def known_paths(ledger: Ledger, conversation_id: str, paths: Iterable[str]) -> set[str]:
    """``paths`` (aliases resolved), each of which must be the path of a block in memory."""
    wanted = {plan_path(ledger, conversation_id, p) for p in check_paths(paths)}
    missing = wanted - {b.path for b in ledger.blocks}
    if missing:
        first = sorted(missing)[0]
        raise UnknownPathError(
            f"no block at path {first!r} in memory",
            conversation_id=conversation_id,
            path=first,
        )
    return wanted


def clean_replacement(replacement: object) -> str | None:
    """A replacement text as stored (checked, cleaned of what no provider accepts)."""
    if replacement is not None and not isinstance(replacement, str):
        raise InvalidBlockError(
            f"replacement_text must be a str or None, got {type(replacement).__name__}"
        )
    return None if replacement is None else clean_text(replacement)


def with_hidden(
    blocks: Sequence[Block], paths: set[str], hidden: bool, replacement: str | None
) -> dict[int, Block]:
    """The blocks at ``paths`` (summaries excepted) that change when hidden (with
    ``replacement``, cleaned) or shown, by index. A provider pair goes with any of its
    blocks (a server tool's use and result, a computer call and its output: no provider
    takes one without the other): the partners are hidden without a replacement of
    their own (the one given stands for the pair) or shown again with it."""
    changed: dict[int, Block] = {}
    pairs: set[str] = set()
    for i, b in enumerate(blocks):
        if b.path in paths and b.type != CONV_RANGE_SUMMARY:
            new = msgspec.structs.replace(b, hidden=hidden, replacement_text=replacement)
            if new != b:
                changed[i] = new
            if b.call_id and block_type(b.type).render == "provider":
                pairs.add(b.call_id)
    if pairs:
        for i, b in enumerate(blocks):
            partner = b.path not in paths and block_type(b.type).render == "provider"
            if partner and b.call_id in pairs:
                new = msgspec.structs.replace(b, hidden=hidden, replacement_text=None)
                if new != b:
                    changed[i] = new
    return changed


def set_hidden(ledger: Ledger, wanted: set[str], hidden: bool, replacement: str | None) -> int:
    """Hide (or show again) the blocks at the ``wanted`` paths; showing also restores
    what the clearing tier cleared there. Returns how many blocks changed."""
    changed = with_hidden(ledger.blocks, wanted, hidden, replacement)
    ledger.replace(changed)
    if hidden:
        return len(changed)
    cleared = ledger.state.cleared
    shown = [i for i, b in enumerate(ledger.blocks) if b.path in wanted and b.id in cleared]
    ledger.restore_content(ledger.blocks[i].id for i in shown)
    return len(changed.keys() | shown)


def check_pin_fits(
    ledger: Ledger,
    policy: CompactionPolicy,
    conversation_id: str,
    block: Block,
    also: Sequence[Block] = (),
) -> None:
    """Pinning ``block`` (with ``also``, about to be pinned) fits the budget."""
    budget = policy.budget
    if budget is None or not policy.enabled:
        return
    pinned = sum(ledger.memo.block(b) for b in map(ledger.get, ledger.pinned) if b is not None)
    pinned += sum(ledger.memo.block(b) for b in also)
    need = pinned + ledger.cost(block) + ledger.state.last_render.fixed_tokens
    if need > budget:
        raise PinnedOverBudgetError(
            f"pinned blocks would need {need} tokens (with the last system prompt) but "
            f"the budget is {budget}; unpin something or raise max_tokens",
            budget=budget,
            required=need,
            parts=("system prompt", "pinned blocks"),
            conversation_id=conversation_id,
        )
