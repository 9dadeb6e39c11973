"""``memory://``: an in-process store for tests, with the same semantics as the others."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial

import attrs

from index_store._async import InlineAsync
from index_store._common import (
    assemble_window,
    check_duplicate,
    check_keys,
    decode_block_row,
    decode_snapshot_row,
    decode_window_row,
    encode_block_row,
    encode_snapshot_row,
    encode_window_row,
    make_snippet,
    query_terms_all,
    search_terms,
    stored_version,
)
from timeline.model.block import PLAN_LATEST, REACT_PLAN, Block
from timeline.model.errors import ConflictError, CorruptRecordError, NotFoundError
from timeline.model.persistence import CheckpointInfo, SearchHit, TimelineSnapshot

__all__ = ["MemoryStore"]


@attrs.define
class _Conversation:
    version: int = 0
    window: bytes | None = None
    rows: dict[str, tuple[str, bytes]] = attrs.field(factory=dict)
    """block id -> (kind, encoded block), in insertion order."""
    checkpoints: dict[str, tuple[str, int, bytes]] = attrs.field(factory=dict)


@attrs.define
class MemoryStore(InlineAsync):
    """Dict-backed store; rows are kept encoded so aliasing bugs cannot hide. The async
    API (``acommit``, ``asearch`` ...) answers inline."""

    url: str = "memory://"
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
            if stored_version(conv.version, conversation_id) != expected_version:
                raise ConflictError(
                    f"conversation {conversation_id!r} is at version {conv.version}, this "
                    f"timeline expected {expected_version}; reload it and retry",
                    expected=expected_version,
                    actual=conv.version,
                    conversation_id=conversation_id,
                )
            staged: dict[str, tuple[str, bytes]] = {}
            for kind, group in (("log", log), ("summary", summaries)):
                for block in group:
                    existing = conv.rows.get(block.id) or staged.get(block.id)
                    if check_duplicate(conversation_id, block, existing[1] if existing else None):
                        continue
                    staged[block.id] = (kind, encode_block_row(block))
            conv.rows.update(staged)
            conv.window = encode_window_row(window)
            conv.version += 1
            self._data[conversation_id] = conv
            return conv.version

    def load_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        check_keys(conversation_id=conversation_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            if conv is None or conv.window is None:
                return None
            record = decode_window_row(conv.window, conversation_id)
            rows = {r.id: conv.rows.get(r.id) for r in record.refs}
            version = stored_version(conv.version, conversation_id)
        blocks = {
            bid: decode_block_row(row[1], conversation_id, bid)
            for bid, row in rows.items()
            if row is not None
        }
        return version, assemble_window(record, blocks)

    def _rows(self, conversation_id: str) -> list[tuple[str, Block]]:
        with self._lock:
            conv = self._data.get(conversation_id)
            items = list(conv.rows.items()) if conv else []
        return [(kind, decode_block_row(raw, conversation_id, bid)) for bid, (kind, raw) in items]

    def get_block(self, conversation_id: str, block_id: str) -> Block:
        check_keys(conversation_id=conversation_id, block_id=block_id)
        with self._lock:
            conv = self._data.get(conversation_id)
            row = conv.rows.get(block_id) if conv else None
        if row is None:
            raise NotFoundError(
                f"no block {block_id!r} in conversation {conversation_id!r}",
                conversation_id=conversation_id,
                block_id=block_id,
            )
        return decode_block_row(row[1], conversation_id, block_id)

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

    def search(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        if not terms:
            return []
        rows = self._rows(conversation_id)
        scored: list[tuple[float, int, str, Block]] = []
        for require_all in (True, False):
            for order, (kind, b) in enumerate(rows):
                words = Counter(query_terms_all(b.text))
                counts = [words[t] for t in terms]
                if not (all(counts) if require_all else any(counts)):
                    continue
                score = sum(counts) / (1 + sum(words.values()) / 400)
                scored.append((score, order, kind, b))
            if scored or len(terms) == 1:
                break
        # turn-log hits before summaries (which mention everything), then relevance
        scored.sort(key=lambda s: (s[2] == "summary", -s[0], s[1]))
        return [
            SearchHit(b, b.path, b.turn_id, make_snippet(b.text, terms), round(score, 6), kind)
            for score, _, kind, b in scored[:limit]
        ]

    def save_checkpoint(
        self, conversation_id: str, checkpoint_id: str, snapshot: TimelineSnapshot
    ) -> None:
        check_keys(conversation_id=conversation_id, checkpoint_id=checkpoint_id)
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self._lock:
            conv = self._data.setdefault(conversation_id, _Conversation())
            conv.checkpoints[checkpoint_id] = (
                now,
                len(snapshot.blocks),
                encode_snapshot_row(snapshot),
            )

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
        return decode_snapshot_row(entry[2], conversation_id, f"checkpoint {checkpoint_id!r}")

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
            items = [(cid, conv, list(conv.rows.items())) for cid, conv in self._data.items()]
        for cid, conv, rows in items:
            checks: list[Callable[[], object]] = [partial(self.load_window, cid)]
            checks += [partial(decode_block_row, raw, cid, bid) for bid, (_, raw) in rows]
            checks += [
                partial(decode_snapshot_row, body, cid, f"checkpoint {name!r}")
                for name, (_, _, body) in conv.checkpoints.items()
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
