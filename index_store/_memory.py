"""``memory://``: an in-process store for tests, with the same semantics as the others."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import partial

import attrs

from index_store._async import InlineAsync
from index_store._common import (
    assemble_window,
    check_keys,
    check_same,
    check_version,
    decode_checkpoint,
    decode_window,
    encode_checkpoint,
    encode_window,
    search_terms,
    stored_version,
)
from index_store._memory_search import MemoryIndex
from index_store._rows import Base, BlockCodec, Row
from index_store._search import hit_of, select
from index_store._vectors import (
    DEPTH,
    embeddable,
    fused,
    model_of,
    nearest,
    query_vector,
    try_vectors,
)
from timeline._model import (
    CONV_RANGE_SUMMARY,
    PLAN_LATEST,
    REACT_PLAN,
    Block,
    CheckpointInfo,
    CorruptRecordError,
    DuplicateBlockIdError,
    Embedder,
    NotFoundError,
    SearchHit,
    TimelineSnapshot,
    TimelineState,
    clean_text,
    searched,
)

__all__ = ["MemoryStore"]


@attrs.define
class _Conversation:
    version: int = 0
    window: bytes | None = None
    rows: dict[str, Row] = attrs.field(factory=dict)
    """block id -> stored row (:mod:`index_store._rows`), in insertion order."""
    checkpoints: dict[str, tuple[str, int, bytes]] = attrs.field(factory=dict)
    index: MemoryIndex = attrs.field(factory=MemoryIndex)

    def codec(self, conversation_id: str) -> BlockCodec:
        """A codec reading a summary's bases from this conversation's rows."""
        rows = self.rows
        return BlockCodec(conversation_id, lambda ids: [rows[i] for i in ids if i in rows])


@attrs.define
class MemoryStore(InlineAsync):
    """Dict-backed store; rows are kept encoded so aliasing bugs cannot hide. The async
    API (``acommit``, ``asearch`` ...) answers inline."""

    url: str = "memory://"
    embedder: Embedder | None = attrs.field(default=None, kw_only=True)
    """Ranks by meaning as well as by words (:mod:`index_store._vectors`)."""
    _data: dict[str, _Conversation] = attrs.field(factory=dict, init=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)

    def commit(
        self,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int:
        check_keys(conversation_id=conversation_id)
        with self._lock:
            conv = self._data.get(conversation_id) or _Conversation()
            check_version(
                conversation_id, expected_version, stored_version(conv.version, conversation_id)
            )
            staged = _stage(conversation_id, conv, log, summaries)
            row = encode_window(window, conv.version + 1)
            conv.rows.update({block.id: r for r, block in staged})
            added = [(conv.index.add(r.kind, block), block) for r, block in staged]
            self._embed(conversation_id, conv, added)
            conv.version += 1
            conv.window = row
            self._data[conversation_id] = conv
            return conv.version

    def commit_stream(
        self,
        conversation_id: str,
        *,
        blocks: Iterable[Block],
        finish: Callable[[], TimelineState],
    ) -> int:
        """A new conversation whose window is ``blocks`` (see ``SqliteStore.commit_stream``;
        in memory the blocks are all held anyway). Nothing is stored on an error."""
        window = list(blocks)
        summaries = [b for b in window if b.type == CONV_RANGE_SUMMARY]
        log = [b for b in window if b.type != CONV_RANGE_SUMMARY]
        twice = [i for i, n in Counter(b.id for b in window).items() if n > 1][:1]
        if twice:
            raise DuplicateBlockIdError(
                f"block id {twice[0]!r} appears twice in conversation {conversation_id!r}",
                conversation_id=conversation_id,
                block_id=twice[0],
            )
        snapshot = TimelineSnapshot(conversation_id, window, finish())
        return self.commit(
            conversation_id, expected_version=0, log=log, summaries=summaries, window=snapshot
        )

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        check_keys(conversation_id=conversation_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            if conv is None or conv.window is None:
                return None
            return self._assemble(conversation_id, conv)

    def _assemble(self, cid: str, conv: _Conversation) -> tuple[int, TimelineSnapshot]:
        record = decode_window(conv.window, cid, conv.version)
        version = stored_version(conv.version, cid)
        found = [conv.rows[r.id] for r in record.refs if r.id in conv.rows]
        blocks = {b.id: b for b in conv.codec(cid).decode_all(found)}
        return version, assemble_window(record, blocks)

    def _rows(self, conversation_id: str) -> list[tuple[str, Block]]:
        with self._lock:
            conv = self._data.get(conversation_id)
            if conv is None:
                return []
            rows = list(conv.rows.values())
            blocks = conv.codec(conversation_id).decode_all(rows)
        return [(row.kind, b) for row, b in zip(rows, blocks, strict=True)]

    def get_block(self, conversation_id: str, block_id: str) -> Block:
        check_keys(conversation_id=conversation_id, block_id=block_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            row = conv.rows.get(block_id) if conv else None
            if conv is None or row is None:
                raise NotFoundError(
                    f"no block {block_id!r} in conversation {conversation_id!r}",
                    conversation_id=conversation_id,
                    block_id=block_id,
                )
            return conv.codec(conversation_id).decode(row)

    def read(self, conversation_id: str, path: str) -> list[Block]:
        check_keys(conversation_id=conversation_id, path=path)
        if path == PLAN_LATEST:  # the alias: the newest react.plan block
            return [b for _, b in self._rows(conversation_id) if b.type == REACT_PLAN][-1:]
        return [b for _, b in self._rows(conversation_id) if b.path == path]

    def turn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]:
        check_keys(conversation_id=conversation_id, turn_id=turn_id)
        return [
            b
            for kind, b in self._rows(conversation_id)
            if kind == "log" and (turn_id is None or b.turn_id == turn_id)
        ]

    def summaries(self, conversation_id: str) -> list[Block]:
        check_keys(conversation_id=conversation_id)
        return [b for kind, b in self._rows(conversation_id) if kind == "summary"]

    @searched
    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        with self._lock:
            conv = self._data.get(conversation_id)
            if conv is None:
                return []
            near = self._nearest(conversation_id, conv, query)
            if not terms and near is None:
                return []
            ranked, infos = conv.index.rank(terms, max(limit, DEPTH) if near else limit)
            if near is not None:
                ranked = fused(ranked, near)
                infos = {**conv.index.linked(near), **infos}
            chosen = select(ranked, infos, limit)
            codec = conv.codec(conversation_id)

            def block(position: int | None) -> Block | None:
                if position is None:
                    return None
                return codec.decode(conv.rows[conv.index.ids[position]])

            return [
                hit_of(b, c, block(c.partner), terms)
                for c in chosen
                if (b := block(c.ranked.seq)) is not None
            ]

    def _nearest(self, cid: str, conv: _Conversation, query: str) -> list[int] | None:
        """The rows nearest the query's vector (None: no embedder, or it failed)."""
        if self.embedder is None:
            return None
        vector = query_vector(self.embedder, cid, clean_text(query))
        if vector is None:
            return None
        model = model_of(self.embedder)
        return nearest(vector, ((p, v) for p, (m, v) in conv.index.vectors.items() if m == model))

    def _embed(self, cid: str, conv: _Conversation, rows: Sequence[tuple[int, Block]]) -> int:
        """Embed the turn-log rows given (position, block); how many were."""
        if self.embedder is None:
            return 0
        texts = [(p, text) for p, b in rows if (text := embeddable(b)) is not None]
        got = try_vectors(self.embedder, cid, [t for _, t in texts], "storing blocks")
        model = model_of(self.embedder)
        for (position, _), vector in zip(texts, got or (), strict=False):
            conv.index.vectors[position] = (model, vector)
        return len(got or ())

    def embed_missing(self, conversation_id: str) -> int:
        """Embed the conversation's turn-log blocks that have no vector of this store's
        embedder (blocks stored before it was set, or by another model); how many were."""
        check_keys(conversation_id=conversation_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            if conv is None or self.embedder is None:
                return 0
            model, codec = model_of(self.embedder), conv.codec(conversation_id)
            missing = [
                (p, codec.decode(conv.rows[block_id]))
                for p, block_id in enumerate(conv.index.ids)
                if conv.index.vectors.get(p, ("", b""))[0] != model
                and conv.rows[block_id].kind == "log"
            ]
            return self._embed(conversation_id, conv, missing)

    def save_checkpoint(
        self, conversation_id: str, checkpoint_id: str, snapshot: TimelineSnapshot
    ) -> None:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        body = encode_checkpoint(snapshot, conversation_id, checkpoint_id, now)
        with self._lock:
            conv = self._data.setdefault(conversation_id, _Conversation())
            conv.checkpoints[checkpoint_id] = (now, len(snapshot.blocks), body)

    def load_checkpoint(self, conversation_id: str, checkpoint_id: str) -> TimelineSnapshot:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            entry = conv.checkpoints.get(checkpoint_id) if conv else None
        if entry is None:
            raise NotFoundError(
                f"no checkpoint {checkpoint_id!r} for conversation {conversation_id!r}",
                conversation_id=conversation_id,
            )
        return decode_checkpoint(entry[2], conversation_id, checkpoint_id, entry[0], entry[1])

    def list_checkpoints(self, conversation_id: str) -> list[CheckpointInfo]:
        check_keys(conversation_id=conversation_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            items = sorted(conv.checkpoints.items()) if conv else []
        return [CheckpointInfo(cid, created, count) for cid, (created, count, _) in items]

    def delete_checkpoint(self, conversation_id: str, checkpoint_id: str) -> bool:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            return bool(conv and conv.checkpoints.pop(checkpoint_id, None))

    def delete(self, conversation_id: str) -> bool:
        check_keys(conversation_id=conversation_id)
        with self._lock:
            return self._data.pop(conversation_id, None) is not None

    def conversations(self) -> list[str]:
        with self._lock:
            return sorted(k for k, v in self._data.items() if v.window is not None)

    def check_integrity(self) -> list[CorruptRecordError]:
        """Decode every window, row and checkpoint; the problems found (empty: all good)."""
        problems: list[CorruptRecordError] = []
        with self._lock:
            items = list(self._data.items())
        for cid, conv in items:
            checks: list[Callable[[], object]] = []
            if conv.window is not None:
                checks.append(partial(self._assemble, cid, conv))
            codec = conv.codec(cid)
            checks += [partial(codec.decode, row) for row in conv.rows.values()]
            checks += [
                partial(decode_checkpoint, body, cid, name, created, count)
                for name, (created, count, body) in conv.checkpoints.items()
            ]
            for check in checks:
                try:
                    check()
                except CorruptRecordError as exc:
                    problems.append(exc)
        return problems

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stage(
    cid: str, conv: _Conversation, log: Sequence[Block], summaries: Sequence[Block]
) -> list[tuple[Row, Block]]:
    """The rows a commit adds, in order, with their blocks (a summary stored against the
    previous one); an id already stored must hold this very block
    (DuplicateBlockIdError otherwise)."""
    codec = conv.codec(cid)
    latest = [r for r in conv.rows.values() if r.kind == "summary"][-1:]
    base: Base | None = codec.base_of(latest[0]) if latest and summaries else None
    staged: dict[str, tuple[Row, Block]] = {}
    for kind, group in (("log", log), ("summary", summaries)):
        for block in group:
            existing = conv.rows.get(block.id) or staged.get(block.id, (None,))[0]
            if existing is not None:
                check_same(cid, block, codec.decode(existing))
                continue
            row, after = codec.encode(kind, block, base if kind == "summary" else None)
            staged[block.id] = (row, block)
            if kind == "summary":
                base = after
    return list(staged.values())
