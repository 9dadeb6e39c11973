"""Versioned JSON and MessagePack encoding of blocks and stored records.

Every record is wrapped in an envelope ``{"schema": <name>, "v": <version>, "body": ...}``
so a reader can tell a corrupt record from a foreign one from one written by a newer
library, and say which. Decoding never returns half a record: it raises
:class:`~timeline.errors.CodecError` naming what failed.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeVar

import msgspec

from timeline.block import Block
from timeline.errors import CodecError

__all__ = [
    "SCHEMA_VERSION",
    "Format",
    "decode_block",
    "decode_record",
    "encode_block",
    "encode_record",
]

SCHEMA_VERSION: Final = 1
"""Version written by this library; readers accept this and every older version."""

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


def encode_record(schema: str, body: Any, fmt: Format = "msgpack") -> bytes:
    """Encode ``body`` (a Struct or builtin data) under the ``schema`` name."""
    if fmt == "json":
        raw = msgspec.Raw(_json_encoder.encode(body))
        return _json_encoder.encode(_Envelope(schema, SCHEMA_VERSION, raw))
    if fmt == "msgpack":
        raw = msgspec.Raw(_msgpack_encoder.encode(body))
        return _msgpack_encoder.encode(_Envelope(schema, SCHEMA_VERSION, raw))
    raise CodecError(f"unknown format {fmt!r}; use 'json' or 'msgpack'")


def decode_record(data: bytes, schema: str, type: type[T], fmt: Format = "msgpack") -> T:
    """Decode a record written by :func:`encode_record`, checking schema and version."""
    try:
        envelope = (_json_envelope if fmt == "json" else _msgpack_envelope).decode(data)
    except msgspec.DecodeError as exc:
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
    except msgspec.DecodeError as exc:
        raise CodecError(f"corrupt {schema} record (v{envelope.v}, {fmt}): {exc}") from exc


def encode_block(block: Block, fmt: Format = "json") -> bytes:
    """One block as a versioned JSON or MessagePack record."""
    return encode_record("block", block, fmt)


def decode_block(data: bytes, fmt: Format = "json") -> Block:
    """The block in a record written by :func:`encode_block`."""
    return decode_record(data, "block", Block, fmt)
