"""Append-time checks: field types, storable strings, JSON meta, canonical tool params."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from timeline._model.block import CONV_RANGE_SUMMARY, Block
from timeline._model.block_types import block_type
from timeline._model.constructors import canonical_json
from timeline._model.errors import DuplicateBlockIdError, InvalidBlockError, OrphanToolResultError
from timeline._model.json_text import check_identifier, check_json, clean_text
from timeline._model.native import (
    NATIVE_MIME,
    PROVIDER_MESSAGE,
    PROVIDERS,
    checked_item,
    holds_item,
)
from timeline._model.persistence import TimelineSnapshot, TimelineState

__all__ = [
    "check_block",
    "check_count",
    "check_paths",
    "check_compact_args",
    "check_render_args",
    "check_snapshot",
    "check_tail_block",
]

_STR_FIELDS = ("type", "text", "id", "author", "turn_id", "ts", "mime", "path")
_OPT_STR_FIELDS = ("call_id", "tool_id", "replacement_text")
_ID_FIELDS = ("type", "id", "author", "turn_id", "ts", "mime", "path", "call_id", "tool_id")
"""Refused when not storable (lone surrogate, NUL); ``text`` and ``replacement_text`` are
free text and get U+FFFD instead."""


def check_fields(block: Any) -> Block:
    """Reject anything that is not a Block with fields of the declared types; identifiers
    must be storable, free text gets U+FFFD for lone surrogates (the block returned)."""
    if not isinstance(block, Block):
        raise InvalidBlockError(f"expected a timeline.Block, got {type(block).__name__}")
    bid = block.id if isinstance(block.id, str) else None
    for name in _STR_FIELDS:
        value = getattr(block, name)
        if not isinstance(value, str):
            raise InvalidBlockError(
                f"Block.{name} must be a str, got {type(value).__name__}", block_id=bid
            )
    for name in _OPT_STR_FIELDS:
        value = getattr(block, name)
        if value is not None and not isinstance(value, str):
            raise InvalidBlockError(
                f"Block.{name} must be a str or None, got {type(value).__name__}",
                block_id=bid,
            )
    error = _error(bid)
    for name in _ID_FIELDS:
        value = getattr(block, name)
        if value is not None:
            check_identifier(value, f"Block.{name}", error)
    if block.data is not None and type(block.data) is not bytes:
        raise InvalidBlockError(
            f"Block.data must be bytes or None, got {type(block.data).__name__}", block_id=bid
        )
    if not isinstance(block.hidden, bool):
        raise InvalidBlockError("Block.hidden must be a bool", block_id=bid)
    if not isinstance(block.meta, dict):
        raise InvalidBlockError(
            f"Block.meta must be a dict, got {type(block.meta).__name__}", block_id=bid
        )
    check_json(block.meta, "meta", error)
    if not block.type or block.type != block.type.strip():
        raise InvalidBlockError(f"Block.type must be a non-empty name, got {block.type!r}")
    text = clean_text(block.text)
    replacement = None if block.replacement_text is None else clean_text(block.replacement_text)
    checked: Block = block
    if text is not block.text or replacement is not block.replacement_text:
        checked = msgspec.structs.replace(checked, text=text, replacement_text=replacement)
    return checked


def _located(where: str, block_id: str) -> Callable[[str], Exception]:
    def make(message: str) -> Exception:
        return InvalidBlockError(f"{where}: {message}", block_id=block_id or None)

    return make


def _error(block_id: str | None) -> Callable[[str], Exception]:
    def make(message: str) -> Exception:
        return InvalidBlockError(message, block_id=block_id or None)

    return make


def check_block(raw: Any) -> Block:
    """A block fit to append: types checked, summaries refused, tool params canonical."""
    block = check_fields(raw)
    if block.type == CONV_RANGE_SUMMARY:
        raise InvalidBlockError(
            "conv.range.summary blocks are inserted by compaction; call Timeline.compact()"
        )
    kind = block_type(block.type).render
    check_native(block, kind)
    if kind == "reasoning" and holds_item(block):
        checked_item(block, _error(block.id or None))
    if kind == "tool_call":
        if not block.tool_id:
            raise InvalidBlockError("a react.tool.call needs tool_id (the tool name)")
        try:
            params = msgspec.json.decode(block.text or "{}")
        except (msgspec.DecodeError, RecursionError) as exc:
            raise InvalidBlockError(
                f"tool-call params are not JSON: {exc}", block_id=block.id or None
            ) from exc
        canonical = canonical_json(params)
        if canonical != block.text:
            block = msgspec.structs.replace(block, text=canonical)
    elif kind == "tool_result" and not block.call_id:
        raise InvalidBlockError("a react.tool.result needs the call_id of its tool call")
    return block


def check_native(block: Block, kind: str) -> None:
    """A provider block keeps a provider's item (``data``: a JSON object, ``mime``
    :data:`~timeline._model.native.NATIVE_MIME`, ``meta["provider"]`` a known format); a
    modelled block with that mime keeps one the same way."""
    native = block.mime == NATIVE_MIME
    if not native and kind != "provider":
        return
    bid = block.id or None
    if block.data is None or not native:
        raise InvalidBlockError(
            f"a {block.type} block needs its provider item in data (mime {NATIVE_MIME})",
            block_id=bid,
        )
    if block.meta.get("provider") not in PROVIDERS:
        raise InvalidBlockError(
            f"Block.meta.provider must be one of {list(PROVIDERS)} for a block keeping a "
            f"provider item, got {block.meta.get('provider')!r}",
            block_id=bid,
        )
    item = checked_item(block, _error(bid))
    if block.type == PROVIDER_MESSAGE and (
        block.meta["provider"] != "anthropic" or item.get("role") != "system"
    ):
        message = (
            f"a {PROVIDER_MESSAGE} block keeps an Anthropic role 'system' message "
            f"(meta.provider 'anthropic', data.role 'system'), got {block.meta['provider']!r} "
            f"and {item.get('role')!r}"
        )
        raise InvalidBlockError(message, block_id=bid)


def check_tail_block(raw: Any) -> Block:
    """Tail blocks (volatile, per render) may not be tool calls/results or summaries."""
    block = check_fields(raw)
    if block_type(block.type).render in ("tool_call", "tool_result", "summary", "header"):
        raise InvalidBlockError(
            f"{block.type} cannot be a tail block: tail blocks are volatile context "
            "(plan, announce, sources), never tool exchanges or summaries"
        )
    return block


def check_snapshot(snapshot: Any, conversation_id: str) -> TimelineSnapshot:
    """A snapshot fit to restore: the same checks as append, on every block and the state.

    Ids and call ids are unique and filled, tool results after the latest summary follow
    their call (pinned ones before it may have lost theirs to compaction), and summaries
    carry the metadata compaction writes. Returns the snapshot with free text cleaned.
    """
    if not isinstance(snapshot, TimelineSnapshot):
        raise InvalidBlockError(f"expected a TimelineSnapshot, got {type(snapshot).__name__}")
    if snapshot.conversation_id != conversation_id:
        raise InvalidBlockError(
            f"snapshot is of conversation {snapshot.conversation_id!r}, not {conversation_id!r}"
        )
    if not isinstance(snapshot.blocks, list):
        raise InvalidBlockError("snapshot.blocks must be a list of blocks")
    try:
        state = msgspec.convert(msgspec.to_builtins(snapshot.state), TimelineState)
    except (TypeError, ValueError, msgspec.EncodeError, msgspec.ValidationError) as exc:
        raise InvalidBlockError(f"snapshot.state is invalid: {exc}") from exc
    blocks = [check_fields(b) for b in snapshot.blocks]
    last_summary = max(
        (i for i, b in enumerate(blocks) if b.type == CONV_RANGE_SUMMARY), default=-1
    )
    ids: set[str] = set()
    calls: set[str] = set()
    for i, b in enumerate(blocks):
        where = f"snapshot.blocks[{i}]"
        for name in ("id", "turn_id", "path"):
            if not getattr(b, name):
                raise InvalidBlockError(f"{where}: a stored block needs {name}", block_id=b.id)
        if b.id in ids:
            raise DuplicateBlockIdError(
                f"{where}: block id {b.id!r} appears twice in the snapshot",
                conversation_id=conversation_id,
                block_id=b.id,
            )
        ids.add(b.id)
        if holds_item(b):
            checked_item(b, _located(where, b.id))
        kind = block_type(b.type).render
        if kind == "tool_call":
            _check_call(b, where, calls)
        elif kind == "tool_result" and b.call_id not in calls and i > last_summary:
            raise OrphanToolResultError(
                f"{where}: tool result names call_id {b.call_id!r} but no earlier tool call "
                "in the snapshot has it",
                conversation_id=conversation_id,
                block_id=b.id,
            )
        elif kind == "summary":
            _check_summary(b, where)
    return TimelineSnapshot(conversation_id, blocks, state)


def _check_call(b: Block, where: str, calls: set[str]) -> None:
    if not b.call_id or not b.tool_id:
        raise InvalidBlockError(f"{where}: a tool call needs call_id and tool_id", block_id=b.id)
    if b.call_id in calls:
        raise InvalidBlockError(f"{where}: call_id {b.call_id!r} is used twice", block_id=b.id)
    calls.add(b.call_id)
    try:
        params = msgspec.json.decode(b.text)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise InvalidBlockError(f"{where}: tool-call params are not JSON: {exc}") from exc
    if not isinstance(params, dict):
        raise InvalidBlockError(f"{where}: tool-call params must be a JSON object")
    check_json(params, f"{where}.params", _error(b.id))


def _check_summary(b: Block, where: str) -> None:
    covered = b.meta.get("covered_turn_ids")
    count = b.meta.get("compacted_block_count")
    if not isinstance(covered, list) or not isinstance(count, int) or isinstance(count, bool):
        raise InvalidBlockError(
            f"{where}: a conv.range.summary without the metadata compaction writes "
            "(covered_turn_ids, compacted_block_count) cannot be restored",
            block_id=b.id,
        )


def check_render_args(system: Any, tail: Any, force: Any = False) -> tuple[str, tuple[Any, ...]]:
    """``render``/``estimate`` arguments: a str system prompt (lone surrogates become
    U+FFFD), a bool ``force_sanitize``, and a list or tuple of tail blocks."""
    if not isinstance(system, str):
        raise InvalidBlockError(f"system must be a str, got {type(system).__name__}")
    if not isinstance(force, bool):
        raise InvalidBlockError(f"force_sanitize must be a bool, got {type(force).__name__}")
    if not isinstance(tail, list | tuple):
        raise InvalidBlockError(
            f"tail must be a list or tuple of blocks, not {type(tail).__name__}"
        )
    return clean_text(system), tuple(tail)


def check_paths(paths: Any) -> list[str]:
    """``hide``/``pin`` paths: one str or an iterable of str."""
    if isinstance(paths, str):
        return [paths]
    if isinstance(paths, bytes | bytearray) or not isinstance(paths, Iterable):
        raise InvalidBlockError(f"paths must be a str or an iterable of str, not {paths!r}")
    out = list(paths)
    for p in out:
        if not isinstance(p, str):
            raise InvalidBlockError(f"paths must hold str values, got {type(p).__name__} {p!r}")
    return out


def check_compact_args(keep_recent_tokens: Any, dry_run: Any, focus: Any) -> None:
    """``compact`` arguments: an optional int ``keep_recent_tokens``, a bool ``dry_run``
    and an optional non-empty str ``focus``."""
    check_count(keep_recent_tokens, "keep_recent_tokens", optional=True)
    if not isinstance(dry_run, bool):
        raise InvalidBlockError(f"dry_run must be a bool, got {type(dry_run).__name__}")
    if focus is not None and (not isinstance(focus, str) or not focus.strip()):
        raise InvalidBlockError(f"focus must be a non-empty str or None, got {focus!r}")


def check_count(value: Any, name: str, *, optional: bool = False, minimum: int = 0) -> None:
    """An int argument (never a bool) of at least ``minimum``; None when ``optional``."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidBlockError(f"{name} must be an int >= {minimum}, got {value!r}")
