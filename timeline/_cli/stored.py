"""Opening ``--db`` and loading a stored conversation as it was run: its own budget,
compaction trigger and system prompt (kept in the persisted window state), unless the
command line gives others."""

from __future__ import annotations

import argparse
from typing import Any

import attrs

from timeline._compaction import ClearingPolicy, CompactionPolicy, budget_policy, stored_policy
from timeline._core import Timeline
from timeline._model import (
    NotFoundError,
    PolicyError,
    StoreUnavailableError,
    TimelineError,
    ToolSpec,
)

__all__ = ["InputError", "Loaded", "load", "open_store", "read_system", "require"]


class InputError(TimelineError, ValueError):
    """A file or flag value the command cannot use; the message names the flag or file."""


def open_store(db: str, *, create: bool = False) -> Any:
    """The store at ``--db``. Only ``import`` and ``demo`` create one (``create=True``):
    every other command on a missing file is an error naming it, and creates nothing."""
    import index_store

    try:
        return index_store.open(db, create=create)
    except StoreUnavailableError as exc:
        raise StoreUnavailableError(f"--db: {exc}") from exc


def require(store: Any, conversation: str) -> None:
    """``NotFoundError`` unless ``conversation`` is in ``store``."""
    if conversation not in store.conversations():
        raise NotFoundError(
            f"conversation {conversation!r} is not in the store", conversation_id=conversation
        )


def read_system(value: str) -> str:
    """``--system``: the text itself, or ``@file`` for a file's text without the one
    trailing newline an editor adds."""
    if not value.startswith("@"):
        return value
    try:
        with open(value[1:], encoding="utf-8-sig") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(f"--system {value}: cannot read it: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"--system {value}: not UTF-8 text ({exc.reason})") from exc
    return text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")


@attrs.frozen
class Loaded:
    """A stored conversation, loaded with the budget, system prompt and tools to render
    it with (the ones of its last render, kept in the store)."""

    timeline: Timeline
    system: str
    tools: tuple[ToolSpec, ...] = ()


def _with_budget(policy: CompactionPolicy, budget: int) -> CompactionPolicy:
    """``--max-tokens``: the stored policy under another budget (its token-sized settings
    dropped when they would not fit under it)."""
    try:
        return attrs.evolve(policy, max_tokens=budget)
    except PolicyError:
        return budget_policy(budget, policy.trigger_ratio)


def load(args: argparse.Namespace, store: Any) -> Loaded:
    """``args.conversation`` from ``store``; ``--max-tokens`` and ``--system`` override
    the budget and system prompt the conversation was last rendered with."""
    found = store.load_window(args.conversation)
    if found is None:
        raise NotFoundError(
            f"conversation {args.conversation!r} is not in the store",
            conversation_id=args.conversation,
        )
    state = found[1].state
    policy = stored_policy(state)
    if args.max_tokens is not None:
        policy = _with_budget(policy, args.max_tokens)
    if getattr(args, "clear", False) and policy.clearing is None:  # the clearing tier first
        policy = attrs.evolve(policy, clearing=ClearingPolicy())
    tl = Timeline.load(store, args.conversation, policy=policy)
    last = state.last_render
    system = read_system(args.system) if args.system is not None else last.system or ""
    return Loaded(tl, system, last.tools)
