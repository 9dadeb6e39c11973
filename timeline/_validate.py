"""Append-time checks: field types, JSON-able meta, canonical tool params."""

from __future__ import annotations

from typing import Any

import msgspec

from timeline.block import CONV_RANGE_SUMMARY, Block
from timeline.block_types import block_type
from timeline.blocks import canonical_json
from timeline.errors import InvalidBlockError

__all__ = ["check_block", "check_tail_block"]

_STR_FIELDS = ("type", "text", "id", "author", "turn_id", "ts", "mime", "path")
_OPT_STR_FIELDS = ("call_id", "tool_id", "replacement_text")


def check_fields(block: Any) -> Block:
    """Reject anything that is not a Block with fields of the declared types."""
    if not isinstance(block, Block):
        raise InvalidBlockError(f"expected a timeline.Block, got {type(block).__name__}")
    for name in _STR_FIELDS:
        value = getattr(block, name)
        if not isinstance(value, str):
            raise InvalidBlockError(
                f"Block.{name} must be a str, got {type(value).__name__}", block_id=str(block.id)
            )
    for name in _OPT_STR_FIELDS:
        value = getattr(block, name)
        if value is not None and not isinstance(value, str):
            raise InvalidBlockError(
                f"Block.{name} must be a str or None, got {type(value).__name__}",
                block_id=block.id,
            )
    if block.data is not None and not isinstance(block.data, bytes):
        raise InvalidBlockError(
            f"Block.data must be bytes or None, got {type(block.data).__name__}", block_id=block.id
        )
    if not isinstance(block.hidden, bool):
        raise InvalidBlockError("Block.hidden must be a bool", block_id=block.id)
    if not isinstance(block.meta, dict) or not all(isinstance(k, str) for k in block.meta):
        raise InvalidBlockError("Block.meta must be a dict with str keys", block_id=block.id)
    try:
        msgspec.json.encode(block.meta)
    except (TypeError, msgspec.EncodeError) as exc:
        raise InvalidBlockError(
            f"Block.meta is not JSON-encodable: {exc}", block_id=block.id
        ) from exc
    if not block.type or block.type != block.type.strip():
        raise InvalidBlockError(f"Block.type must be a non-empty name, got {block.type!r}")
    return block


def check_block(raw: Any) -> Block:
    """A block fit to append: types checked, summaries refused, tool params canonical."""
    block = check_fields(raw)
    if block.type == CONV_RANGE_SUMMARY:
        raise InvalidBlockError(
            "conv.range.summary blocks are inserted by compaction; call Timeline.compact()"
        )
    kind = block_type(block.type).render
    if kind == "tool_call":
        if not block.tool_id:
            raise InvalidBlockError("a react.tool.call needs tool_id (the tool name)")
        try:
            params = msgspec.json.decode(block.text or "{}")
        except msgspec.DecodeError as exc:
            raise InvalidBlockError(f"tool-call params are not JSON: {exc}") from exc
        canonical = canonical_json(params)
        if canonical != block.text:
            block = msgspec.structs.replace(block, text=canonical)
    elif kind == "tool_result" and not block.call_id:
        raise InvalidBlockError("a react.tool.result needs the call_id of its tool call")
    return block


def check_tail_block(raw: Any) -> Block:
    """Tail blocks (volatile, per render) may not be tool calls/results or summaries."""
    block = check_fields(raw)
    if block_type(block.type).render in ("tool_call", "tool_result", "summary", "header"):
        raise InvalidBlockError(
            f"{block.type} cannot be a tail block: tail blocks are volatile context "
            "(plan, announce, sources), never tool exchanges or summaries"
        )
    return block
