"""Helpers every backend shares: windows and checkpoints in their framed rows, the
schema-1/2 record formats (still read, for upgrades), the checks of search arguments."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

import msgspec

from index_store._rows import frame, key_bytes, unframe
from index_store._window import RefRuns, WindowRecord, WindowRef, expand, version_of
from timeline._model import (
    Block,
    CodecError,
    ConflictError,
    CorruptRecordError,
    DuplicateBlockIdError,
    InvalidBlockError,
    InvalidConversationIdError,
    TimelineSnapshot,
    check_identifier,
    clean_text,
    decode_record,
    encode_record,
    query_terms,
)

__all__ = [
    "WindowRecord",
    "decode_checkpoint",
    "decode_window",
    "encode_checkpoint",
    "encode_window",
    "frame_runs",
    "frame_window",
    "assemble_window",
    "check_keys",
    "check_same",
    "check_version",
    "decode_window_row",
    "encode_window_row",
    "decode_block_row",
    "decode_snapshot_row",
    "encode_block_row",
    "encode_snapshot_row",
    "search_terms",
    "stored_version",
    "utc_now_text",
]


_COMPRESS_FROM: Final = 256
"""Bodies this long or longer are stored zlib-compressed when that saves space."""


def encode_block_row(block: Block) -> bytes:
    """A block as schema-1/2 stores kept it: the versioned record, zlib-compressed when
    that is smaller (a zlib stream starts with ``x``, which no record does). Read by the
    upgrades; the stores now write :mod:`index_store._rows`."""
    raw = encode_record("block", block)
    if len(raw) >= _COMPRESS_FROM:
        packed = zlib.compress(raw, 6)
        if len(packed) < len(raw):
            return packed
    return raw


def _unpack_block_row(data: bytes) -> bytes:
    if data[:1] != b"x":
        return data
    try:
        return zlib.decompress(data)
    except zlib.error as exc:
        raise CodecError(f"compressed block record does not inflate: {exc}") from exc


def encode_snapshot_row(snapshot: TimelineSnapshot) -> bytes:
    return encode_record("snapshot", snapshot)


T = TypeVar("T")


def _decode_row(
    data: Any,
    schema: str,
    type_: type[T],
    conversation_id: str,
    what: str,
    block_id: str | None = None,
) -> T:
    """Decode a stored row; a bad one is a CorruptRecordError naming conversation and row
    (the rest of the store is unaffected)."""
    try:
        return decode_record(data, schema, type_)
    except CodecError as exc:
        raise CorruptRecordError(
            f"stored {what} of conversation {conversation_id!r} is corrupt: {exc}; "
            "the rest of the store is unaffected",
            conversation_id=conversation_id,
            block_id=block_id,
        ) from exc


def decode_block_row(data: Any, conversation_id: str, row: str) -> Block:
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            data = _unpack_block_row(bytes(data))
        except CodecError as exc:
            raise CorruptRecordError(
                f"stored block {row!r} of conversation {conversation_id!r} is corrupt: "
                f"{exc}; the rest of the store is unaffected",
                conversation_id=conversation_id,
                block_id=row,
            ) from exc
    return _decode_row(data, "block", Block, conversation_id, f"block {row!r}", row)


def decode_snapshot_row(data: Any, conversation_id: str, row: str) -> TimelineSnapshot:
    return _decode_row(data, "snapshot", TimelineSnapshot, conversation_id, row)


def encode_window_row(window: TimelineSnapshot) -> bytes:
    """A window as schema-1/2 stores kept it (one reference a block)."""
    refs = [WindowRef(b.id, b.hidden, b.replacement_text) for b in window.blocks]
    return encode_record("window", WindowRecord(window.conversation_id, refs, window.state))


def decode_window_row(data: Any, conversation_id: str) -> WindowRecord:
    return _decode_row(data, "window", WindowRecord, conversation_id, "window")


def encode_window(window: TimelineSnapshot, version: int, *extra: str | int) -> bytes:
    """The framed window row of ``version``: block references, hidden overrides and state,
    checksummed with the conversation, the version (and a backend's ``extra`` keys)."""
    refs = RefRuns.of((b.id, b.hidden, b.replacement_text) for b in window.blocks)
    return frame_runs(WindowRecord(window.conversation_id, refs, window.state), version, *extra)


def frame_window(record: WindowRecord, version: int, *extra: str | int) -> bytes:
    """The framed row of a decoded ``record`` (one reference a block): its references
    joined into runs where ids follow each other."""
    refs = RefRuns.of((r.id, r.hidden, r.replacement_text) for r in expand(record.refs))
    return frame_runs(WindowRecord(record.conversation_id, refs, record.state), version, *extra)


def frame_runs(record: WindowRecord, version: int, *extra: str | int) -> bytes:
    """The framed row of a record whose references are already runs (:class:`RefRuns`)."""
    payload = encode_record("window", record, version=version_of(record.refs))
    return frame(key_bytes(record.conversation_id, version, *extra), payload)


def decode_window(data: Any, conversation_id: str, version: Any, *extra: str | int) -> WindowRecord:
    """The window of a framed row; CorruptRecordError when it, its version or its key
    columns were damaged."""
    try:
        _, payload = unframe(key_bytes(conversation_id, version, *extra), data)
    except ValueError as exc:
        raise _corrupt(conversation_id, "window", str(exc)) from exc
    record = _decode_row(payload, "window", WindowRecord, conversation_id, "window")
    if record.conversation_id != conversation_id:
        raise _corrupt(conversation_id, "window", f"it names {record.conversation_id!r}")
    try:
        return WindowRecord(record.conversation_id, expand(record.refs), record.state)
    except ValueError as exc:
        raise _corrupt(conversation_id, "window", str(exc)) from exc


def encode_checkpoint(
    snapshot: TimelineSnapshot, conversation_id: str, checkpoint_id: str, created_at: str
) -> bytes:
    """A framed checkpoint row, checksummed with its key columns and block count."""
    key = key_bytes(conversation_id, checkpoint_id, created_at, len(snapshot.blocks))
    return frame(key, encode_record("snapshot", snapshot))


def decode_checkpoint(
    data: Any, conversation_id: str, checkpoint_id: str, created_at: str, block_count: Any
) -> TimelineSnapshot:
    what = f"checkpoint {checkpoint_id!r}"
    try:
        _, payload = unframe(
            key_bytes(conversation_id, checkpoint_id, created_at, block_count), data
        )
    except ValueError as exc:
        raise _corrupt(conversation_id, what, str(exc)) from exc
    return _decode_row(payload, "snapshot", TimelineSnapshot, conversation_id, what)


def _corrupt(conversation_id: str, what: str, why: str) -> CorruptRecordError:
    return CorruptRecordError(
        f"stored {what} of conversation {conversation_id!r} is corrupt: {why}; the rest of "
        "the store is unaffected",
        conversation_id=conversation_id,
    )


def stored_version(value: Any, conversation_id: str) -> int:
    """A stored version number; anything but a non-negative int is a corrupt row."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CorruptRecordError(
            f"stored version of conversation {conversation_id!r} is {value!r}, not a "
            "non-negative integer; the rest of the store is unaffected",
            conversation_id=conversation_id,
        )
    return value


def assemble_window(record: WindowRecord, blocks: Mapping[str, Block]) -> TimelineSnapshot:
    """The window's blocks from the store, in order, with their current hidden state."""
    out: list[Block] = []
    for ref in record.refs:
        block = blocks.get(ref.id)
        if block is None:
            raise CorruptRecordError(
                f"window of conversation {record.conversation_id!r} names block {ref.id!r}, "
                "which the store does not hold",
                conversation_id=record.conversation_id,
                block_id=ref.id,
            )
        if (block.hidden, block.replacement_text) != (ref.hidden, ref.replacement_text):
            block = msgspec.structs.replace(
                block, hidden=ref.hidden, replacement_text=ref.replacement_text
            )
        out.append(block)
    return TimelineSnapshot(record.conversation_id, out, record.state)


def check_version(conversation_id: str, expected: int, actual: int) -> None:
    """ConflictError unless the stored version is the one the writer expected."""
    if actual != expected:
        raise ConflictError(
            f"conversation {conversation_id!r} is at version {actual}, this timeline "
            f"expected {expected}; reload it and retry",
            expected=expected,
            actual=actual,
            conversation_id=conversation_id,
        )


def check_keys(**keys: Any) -> None:
    """Store arguments that name rows: str values every backend can hold (no lone
    surrogate, no NUL); None is let through for optional ones."""
    for name, value in keys.items():
        if value is None and name == "turn_id":
            continue
        error = InvalidConversationIdError if name == "conversation_id" else InvalidBlockError
        if not isinstance(value, str):
            raise error(f"{name} must be a str, got {type(value).__name__}")
        check_identifier(value, name, error)


def search_terms(conversation_id: Any, query: Any, limit: Any) -> list[str]:
    """``search`` arguments checked (a str query, an int limit >= 1), then the query's
    terms (:func:`timeline._model.search_text.query_terms`): every distinct content word,
    so user text can never break a backend's query syntax."""
    check_keys(conversation_id=conversation_id)
    if not isinstance(query, str):
        raise InvalidBlockError(f"search query must be a str, got {type(query).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidBlockError(f"search limit must be a positive int, got {limit!r}")
    return query_terms(clean_text(query))


def check_same(conversation_id: str, block: Block, stored: Block) -> None:
    # hidden/replacement may change after a block was first logged; the content may not
    if (stored.type, stored.text, stored.data, stored.call_id, stored.turn_id) != (
        block.type,
        block.text,
        block.data,
        block.call_id,
        block.turn_id,
    ):
        raise DuplicateBlockIdError(
            f"block id {block.id!r} already holds a different block in conversation "
            f"{conversation_id!r}; nothing was written",
            conversation_id=conversation_id,
            block_id=block.id,
        )


def utc_now_text() -> str:
    """Now, as the UTC text stores write (``2026-01-01T00:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
