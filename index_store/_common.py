"""Helpers every backend shares: row encoding with translated errors, query terms."""

from __future__ import annotations

import re
from collections.abc import Sequence

from timeline.block import Block
from timeline.codec import decode_record, encode_record
from timeline.errors import CodecError, CorruptRecordError, DuplicateBlockIdError
from timeline.persistence import TimelineSnapshot

__all__ = [
    "check_duplicate",
    "decode_block_row",
    "decode_snapshot_row",
    "encode_block_row",
    "encode_snapshot_row",
    "query_terms",
]

_TERM = re.compile(r"\w+", re.UNICODE)


def encode_block_row(block: Block) -> bytes:
    return encode_record("block", block)


def encode_snapshot_row(snapshot: TimelineSnapshot) -> bytes:
    return encode_record("snapshot", snapshot)


def decode_block_row(data: bytes, conversation_id: str, row: str) -> Block:
    """Decode a stored block; a bad row names conversation and row."""
    try:
        return decode_record(bytes(data), "block", Block)
    except CodecError as exc:
        raise CorruptRecordError(
            f"stored block {row!r} of conversation {conversation_id!r} is corrupt: {exc}; "
            "the rest of the store is unaffected",
            conversation_id=conversation_id,
            block_id=row,
        ) from exc


def decode_snapshot_row(data: bytes, conversation_id: str, row: str) -> TimelineSnapshot:
    try:
        return decode_record(bytes(data), "snapshot", TimelineSnapshot)
    except CodecError as exc:
        raise CorruptRecordError(
            f"stored {row} of conversation {conversation_id!r} is corrupt: {exc}; "
            "other conversations are unaffected",
            conversation_id=conversation_id,
        ) from exc


def query_terms(query: str) -> list[str]:
    """Words of a user query; punctuation and operators are dropped so user text can never
    break the backend's query syntax."""
    return query_terms_all(query)[:32]


def query_terms_all(text: str) -> list[str]:
    """Every lower-cased word of ``text``."""
    return [t.lower() for t in _TERM.findall(text)]


def check_duplicate(conversation_id: str, block: Block, existing: bytes | None) -> bool:
    """An id already stored: fine (skip) when the stored block is the same; an error when
    it is a different block. Returns True when the row must be skipped."""
    if existing is None:
        return False
    stored = decode_block_row(existing, conversation_id, block.id)
    if _same(stored, block):
        return True
    raise DuplicateBlockIdError(
        f"block id {block.id!r} already holds a different block in conversation "
        f"{conversation_id!r}; nothing was written",
        conversation_id=conversation_id,
        block_id=block.id,
    )


def _same(a: Block, b: Block) -> bool:
    # hidden/replacement may change after a block was first logged; the content may not
    return (a.type, a.text, a.data, a.call_id, a.turn_id) == (
        b.type,
        b.text,
        b.data,
        b.call_id,
        b.turn_id,
    )


def make_snippet(text: str, terms: Sequence[str], width: int = 160) -> str:
    """A window of ``text`` around the first term, terms in [brackets]."""
    lower = text.lower()
    pos = min((p for p in (lower.find(t) for t in terms) if p >= 0), default=0)
    start = max(0, pos - width // 3)
    window = text[start : start + width]
    for t in terms:
        window = re.sub(f"(?i)\\b({re.escape(t)})", r"[\1]", window)
    return ("…" if start else "") + window + ("…" if start + width < len(text) else "")
