"""Stored rows: a frame with a checksum around each record, and blocks in their compact form.

Every body a store writes (blocks, windows, checkpoints) is framed::

    0xC1 | flags | crc32 (4 bytes, big-endian) | payload (zlib-compressed when flags & 1)

``0xC1`` never starts a MessagePack value and ``x`` starts a zlib stream, so framed rows
are told from the schema-1/2 bodies (:mod:`index_store._legacy`) by their first byte. The
checksum covers the row's key columns (conversation, block id, kind, turn, path, type) as
well as the payload: a damaged byte anywhere in a row, or a row moved to another key, is
a :class:`CorruptRecordError` naming conversation and row, never a different block.

A block's payload leaves out what its columns hold (id, turn, path, type; and on
PostgreSQL its text, kept in the search pieces, flags & 4): a small block costs what it
says, not its keys twice. A summary's payload may hold its ``meta`` as a
delta (:mod:`index_store._delta`) against the previous summary of the conversation
(flags & 2), at most :data:`MAX_DEPTH` summaries deep: each summary's new part is stored
once and reading one follows a bounded chain.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, NamedTuple

import msgspec

from index_store._delta import DeltaError, apply, diff
from timeline._model import Block, CorruptRecordError

__all__ = [
    "MAX_DEPTH",
    "BlockCodec",
    "Row",
    "body_block",
    "frame",
    "unframe",
]

MARK: Final = 0xC1
ZLIB: Final = 1
DELTA: Final = 2
TEXT: Final = 4
"""The block's text is kept out of the payload, in a column (PostgreSQL's search pieces);
the checksum covers it as part of the key."""
MAX_DEPTH: Final = 8
"""A summary's meta is a delta at most this many summaries deep (then whole again)."""
COMPRESS_FROM: Final = 128
"""Payloads this long or longer are stored zlib-compressed when that saves space."""
_HEAD = struct.Struct(">BBI")

_encode = msgspec.msgpack.Encoder(order="deterministic").encode
_block = msgspec.msgpack.Decoder(Block)


class _Delta(msgspec.Struct, array_like=True, frozen=True):
    """A summary stored against its base: the block without meta, and meta's delta."""

    base: str
    depth: int
    block: Block
    meta: Any


_delta = msgspec.msgpack.Decoder(_Delta)


class Row(NamedTuple):
    """A stored block row: its key columns and its framed body."""

    block_id: str
    kind: str
    turn_id: str
    path: str
    type: str
    body: bytes
    text: str | None = None
    """The block's text when a column holds it (flags & 4), else None."""

    @property
    def columns(self) -> tuple[str, str, str, str, str, bytes]:
        """The stored columns, in ``ROW_COLUMNS`` order."""
        return (self.block_id, self.kind, self.turn_id, self.path, self.type, self.body)


def key_bytes(*parts: str | int) -> bytes:
    """The checksummed key: the columns joined by NUL (which no key may hold). Text that
    came back from a damaged file as lone surrogates turns back into its bytes."""
    return "\x00".join(str(p) for p in parts).encode("utf-8", "surrogateescape")


def frame(key: bytes, payload: bytes, flags: int = 0) -> bytes:
    """``payload`` framed with the checksum of ``key`` and itself, compressed when smaller."""
    if len(payload) >= COMPRESS_FROM:
        packed = zlib.compress(payload, 6)
        if len(packed) < len(payload):
            payload, flags = packed, flags | ZLIB
    crc = zlib.crc32(payload, zlib.crc32(key))
    return _HEAD.pack(MARK, flags, crc) + payload


def unframe(key: bytes, data: Any) -> tuple[int, bytes]:
    """The flags and payload of a framed row; ValueError naming what is wrong."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"a stored row is bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEAD.size or data[0] != MARK:
        raise ValueError("not a framed row (damaged, or written by something else)")
    _, flags, crc = _HEAD.unpack_from(data)
    payload = data[_HEAD.size :]
    if flags & ~(ZLIB | DELTA | TEXT) or zlib.crc32(payload, zlib.crc32(key)) != crc:
        raise ValueError("checksum mismatch: the row or its key columns were changed or damaged")
    if flags & ZLIB:
        try:
            payload = zlib.decompress(payload)
        except zlib.error as exc:
            raise ValueError(f"compressed payload does not inflate: {exc}") from exc
    return flags, payload


def _flags(body: Any) -> int:
    """The flags byte of a framed body (0 when it is too short to have one)."""
    try:
        data = bytes(body)
    except TypeError:
        return 0
    return data[1] if len(data) > 1 else 0


def body_block(body: Any, type_: str = "", text: str | None = None) -> Block | None:
    """The block of a framed body without checking its key (what the search index holds
    for it: its text, tool and mime), ``type_`` filled in, ``text`` when a column holds
    it; None when it does not decode, which the integrity check reports."""
    try:
        data = bytes(body)
        if len(data) < _HEAD.size or data[0] != MARK:
            return None
        flags = data[1]
        payload = data[_HEAD.size :]
        if flags & ZLIB:
            payload = zlib.decompress(payload)
        block = _delta.decode(payload).block if flags & DELTA else _block.decode(payload)
    except (ValueError, TypeError, zlib.error, msgspec.DecodeError):
        return None
    if text is not None:
        return msgspec.structs.replace(block, type=type_, text=text)
    return msgspec.structs.replace(block, type=type_)


def _stripped(block: Block, meta: Any = None, text_apart: bool = False) -> Block:
    """The block without what its columns hold (and with ``meta`` when given)."""
    changes: dict[str, Any] = {"id": "", "turn_id": "", "path": "", "type": ""}
    if meta is not None:
        changes["meta"] = meta
    if text_apart:
        changes["text"] = ""
    return msgspec.structs.replace(block, **changes)


class Base(NamedTuple):
    """The previous summary a new one may be stored against."""

    block_id: str
    depth: int
    meta: Any


Fetch = Callable[[Sequence[str]], Iterable[Row]]
"""Rows of the conversation with these block ids (any order; missing ones left out)."""


class BlockCodec:
    """Encodes and decodes the block rows of one conversation; ``fetch`` reads the base
    rows a summary's delta needs (each decoded once per codec)."""

    def __init__(
        self, conversation_id: str, fetch: Fetch | None = None, *, text_apart: bool = False
    ) -> None:
        self.conversation_id = conversation_id
        self._fetch = fetch
        self._metas: dict[str, tuple[int, Any]] = {}
        self._text_apart = text_apart

    def key(self, block_id: str, kind: str, turn_id: str, path: str, type_: str) -> bytes:
        return key_bytes(self.conversation_id, block_id, kind, turn_id, path, type_)

    def _row_key(self, row: Row, flags: int) -> bytes:
        key = self.key(row.block_id, row.kind, row.turn_id, row.path, row.type)
        if flags & TEXT:
            key += b"\x00" + (row.text or "").encode("utf-8", "surrogatepass")
        return key

    def encode(self, kind: str, block: Block, base: Base | None = None) -> tuple[Row, Base]:
        """The row of ``block``; a summary against ``base`` when its delta is smaller.
        Returns the row and what a next summary may be stored against."""
        # a text a column cannot hold (NUL) stays in the payload; the column then holds
        # what search indexes of it
        apart = self._text_apart and "\x00" not in block.text
        flags = TEXT if apart else 0
        text = block.text.replace("\x00", "") if self._text_apart else None
        row = Row(block.id, kind, block.turn_id, block.path, block.type, b"", text)
        key = self._row_key(row, flags)
        meta: Any = msgspec.msgpack.decode(_encode(block.meta)) if block.meta else {}
        depth, body = 0, b""
        if base is not None and base.depth + 1 < MAX_DEPTH and block.meta:
            change = diff(base.meta, meta)
            whole = _encode(_stripped(block, text_apart=apart))
            plain = _stripped(block, {}, text_apart=apart)
            packed = _encode(_Delta(base.block_id, base.depth + 1, plain, change))
            if len(packed) < len(whole) * 3 // 4:
                depth, body = base.depth + 1, frame(key, packed, DELTA | flags)
        if not body:
            body = frame(key, _encode(_stripped(block, text_apart=apart)), flags)
        return row._replace(body=body), Base(block.id, depth, meta)

    def decode(self, row: Row) -> Block:
        """The block of a stored row; CorruptRecordError naming conversation and row."""
        return self._decode(row, MAX_DEPTH)[0]

    def base_of(self, row: Row) -> Base | None:
        """What a summary after ``row`` may be stored against; None when it does not
        decode (the next summary is then stored whole)."""
        try:
            block, depth = self._decode(row, MAX_DEPTH)
        except CorruptRecordError:
            return None
        meta = msgspec.msgpack.decode(_encode(block.meta)) if block.meta else {}
        return Base(block.id, depth, meta)

    def _decode(self, row: Row, budget: int) -> tuple[Block, int]:
        try:
            flags, payload = unframe(self._row_key(row, _flags(row.body)), row.body)
            if flags & DELTA:
                record = _delta.decode(payload)
                meta = self._meta(record.base, record.depth - 1, budget - 1, row.block_id)
                block, depth = record.block, record.depth
                block = msgspec.structs.replace(block, meta=apply(meta, record.meta))
            else:
                block, depth = _block.decode(payload), 0
            if block.id or block.turn_id or block.path or block.type or not row.type:
                raise ValueError("the payload holds key fields it must leave to the columns")
            if flags & TEXT and block.text:
                raise ValueError("the payload holds a text its column holds")
            block = msgspec.structs.replace(
                block, id=row.block_id, turn_id=row.turn_id, path=row.path, type=row.type
            )
            if flags & TEXT:
                block = msgspec.structs.replace(block, text=row.text or "")
        except (ValueError, TypeError, DeltaError, msgspec.DecodeError) as exc:
            raise self.corrupt(row.block_id, str(exc)) from exc
        # a fresh copy: a meta rebuilt from a delta shares nothing with its base's
        if depth:
            block = msgspec.structs.replace(block, meta=_fresh(block.meta))
        return block, depth

    def _meta(self, block_id: str, depth: int, budget: int, row: str) -> Any:
        """The meta of base ``block_id`` (memoized), which must be ``depth`` deep."""
        known = self._metas.get(block_id)
        if known is None:
            found = [r for r in self._rows([block_id]) if r.block_id == block_id]
            if not found:
                raise ValueError(f"its base summary {block_id!r} is not in the store")
            if budget <= 0:
                raise ValueError("its chain of base summaries is too long")
            block, stored = self._decode(found[0], budget)
            known = self._metas[block_id] = (stored, block.meta)
        if known[0] != depth:
            raise ValueError(f"its base summary {block_id!r} is {known[0]} deep, not {depth}")
        return known[1]

    def _rows(self, ids: Sequence[str]) -> Iterable[Row]:
        if self._fetch is None:
            return ()
        return self._fetch(ids)

    def corrupt(self, block_id: str, why: str) -> CorruptRecordError:
        cid = self.conversation_id
        return CorruptRecordError(
            f"stored block {block_id!r} of conversation {cid!r} is corrupt: {why}; the rest "
            "of the store is unaffected",
            conversation_id=cid,
            block_id=block_id,
        )

    def decode_all(self, rows: Iterable[Row]) -> list[Block]:
        """Blocks of ``rows`` in order; bases among them are decoded once."""
        out = []
        for row in rows:
            block, depth = self._decode(row, MAX_DEPTH)
            if row.kind == "summary":
                self._metas.setdefault(row.block_id, (depth, block.meta))
            out.append(block)
        return out


def _fresh(value: Any) -> Any:
    return msgspec.msgpack.decode(_encode(value))


def as_rows(records: Iterable[Sequence[Any]]) -> list[Row]:
    """Database tuples ``(block_id, kind, turn_id, path, type, body)`` as rows."""
    return [Row(*r) for r in records]
