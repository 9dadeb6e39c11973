"""Versioned JSON and MessagePack encoding of blocks and stored records.

Every record is wrapped in an envelope ``{"schema": <name>, "v": <version>, "body": ...}``
so a reader can tell a corrupt record from a foreign one from one written by a newer
library, and say which. Decoding never returns half a record: it raises
:class:`~timeline._model.errors.CodecError` naming what failed.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, Final, Literal, TypeVar

import msgspec

from timeline._model.block import Block
from timeline._model.errors import CodecError
from timeline._model.json_text import check_identifier, check_json
from timeline._model.native import checked_item, holds_item

__all__ = [
    "SCHEMA_VERSION",
    "Format",
    "decode_block",
    "decode_record",
    "encode_block",
    "encode_record",
]

SCHEMA_VERSION: Final = 2
"""The newest version this library reads (and every older one). Records are written at
the oldest version that holds them: 1, except a stored window with a run of ids (2)."""

Format = Literal["json", "msgpack"]

T = TypeVar("T")


class _Envelope(msgspec.Struct, frozen=True):
    schema: str
    v: int
    body: msgspec.Raw


_json_encoder = msgspec.json.Encoder(order="deterministic")
_msgpack_encoder = msgspec.msgpack.Encoder(order="deterministic")
_json_envelope = msgspec.json.Decoder(_Envelope)
_msgpack_envelope = msgspec.msgpack.Decoder(_Envelope)


_DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError, TypeError, ValueError)
"""What a decoder raises on hostile bytes: all of it becomes :class:`CodecError`."""


def _check_format(fmt: Any) -> None:
    if fmt not in ("json", "msgpack"):
        raise CodecError(f"unknown format {fmt!r}; use 'json' or 'msgpack'")


def encode_record(schema: str, body: Any, fmt: Format = "msgpack", version: int = 1) -> bytes:
    """Encode ``body`` (a Struct or builtin data) under the ``schema`` name, marked with
    ``version`` (a reader older than it refuses the record)."""
    _check_format(fmt)
    if not 1 <= version <= SCHEMA_VERSION:
        raise CodecError(f"cannot write a version {version} record (1 to {SCHEMA_VERSION})")
    encoder = _json_encoder if fmt == "json" else _msgpack_encoder
    try:
        raw = msgspec.Raw(encoder.encode(body))
        return encoder.encode(_Envelope(schema, version, raw))
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise CodecError(f"cannot encode this {schema} record as {fmt}: {exc}") from exc


def decode_record(data: bytes, schema: str, type: type[T], fmt: Format = "msgpack") -> T:
    """Decode a record written by :func:`encode_record`, checking schema and version."""
    _check_format(fmt)
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CodecError(f"a {schema} record is bytes, not {builtins.type(data).__name__}")
    try:
        envelope = (_json_envelope if fmt == "json" else _msgpack_envelope).decode(data)
    except _DECODE_ERRORS as exc:
        raise CodecError(f"not a {schema} record ({fmt}): {exc}") from exc
    if envelope.schema != schema:
        raise CodecError(f"expected a {schema!r} record, found {envelope.schema!r}")
    if envelope.v > SCHEMA_VERSION:
        raise CodecError(
            f"{schema} record has schema version {envelope.v}, newer than this library "
            f"understands ({SCHEMA_VERSION}); upgrade block-timeline"
        )
    if envelope.v < 1:
        raise CodecError(f"{schema} record has invalid schema version {envelope.v}")
    try:
        if fmt == "json":
            return msgspec.json.decode(envelope.body, type=type)
        return msgspec.msgpack.decode(envelope.body, type=type)
    except _DECODE_ERRORS as exc:
        raise CodecError(f"corrupt {schema} record (v{envelope.v}, {fmt}): {exc}") from exc


def encode_block(block: Block, fmt: Format = "json") -> bytes:
    """One block as a versioned JSON or MessagePack record (checked like an append)."""
    if not isinstance(block, Block):
        raise CodecError(f"encode_block takes a timeline.Block, not {type(block).__name__}")
    check_block_values(block, CodecError)
    return encode_record("block", block, fmt)


def decode_block(data: bytes, fmt: Format = "json") -> Block:
    """The block in a record written by :func:`encode_block`; a record whose values could
    not have been appended (meta nested too deep, NaN, a lone surrogate) is refused."""
    block = decode_record(data, "block", Block, fmt)
    check_block_values(block, CodecError)
    return block


def check_block_values(block: Block, error: Callable[[str], Exception]) -> None:
    """The JSON and identifier checks of an append, raising ``error``: a block no
    ``append`` would take (an empty or padded type, NaN in meta, a lone surrogate in an
    id, a provider item that is not a UTF-8 JSON object) never goes into or comes out of
    the codec."""
    if not block.type or block.type != block.type.strip():
        raise error(f"Block.type must be a non-empty name, got {block.type!r}")
    check_json(block.meta, "meta", error)
    for name in ("type", "id", "turn_id", "path", "call_id", "tool_id"):
        value = getattr(block, name)
        if isinstance(value, str):
            check_identifier(value, f"Block.{name}", error)
    if holds_item(block):
        checked_item(block, error)
