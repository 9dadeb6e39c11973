"""The async API of the PostgreSQL store, on psycopg's async connections.

Each event loop gets its own ``psycopg_pool.AsyncConnectionPool`` (``pool_size``
connections, opened on first use), so many tasks query concurrently without a thread
per call. ``await store.aclose()`` closes the pool of the running loop; ``close()``
drops every pool. Statements and row handling are the sync store's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from index_store._common import (
    assemble_window,
    check_duplicate,
    check_keys,
    decode_block_row,
    decode_window_row,
    encode_block_row,
    encode_window_row,
    search_terms,
    stored_version,
)
from index_store._pg_sql import (
    LOCK_INSERT,
    LOCK_SELECT,
    SEARCH,
    SEARCH_JOINERS,
    WRITE_WINDOW,
    failed,
    index_text,
    search_hits,
)
from timeline.model.block import PLAN_LATEST, REACT_PLAN, Block
from timeline.model.errors import (
    ConflictError,
    NotFoundError,
    StoreUnavailableError,
    TimelineError,
)
from timeline.model.persistence import SearchHit, TimelineSnapshot

__all__ = ["PostgresAsync"]

_HINT = "install the extra: pip install 'block-timeline[postgres]' (psycopg[pool])"


class PostgresAsync:
    """Mixin for :class:`index_store.postgres.PostgresStore` (which holds ``dsn``,
    ``pool_size``, ``_apools`` and ``_pg``)."""

    dsn: str
    pool_size: int
    _apools: dict[Any, Any]
    _pg: Any

    async def _apool(self) -> Any:
        loop = asyncio.get_running_loop()
        pool = self._apools.get(loop)
        if pool is None:
            try:
                from psycopg_pool import AsyncConnectionPool
            except ImportError as exc:
                raise StoreUnavailableError(
                    f"async PostgreSQL needs psycopg_pool; {_HINT}"
                ) from exc
            for old in [lp for lp in self._apools if lp.is_closed()]:
                del self._apools[old]  # a finished asyncio.run(): its connections died with it
            pool = AsyncConnectionPool(
                self.dsn,
                min_size=1,
                max_size=max(1, self.pool_size),
                open=False,
                check=AsyncConnectionPool.check_connection,
            )
            try:
                await pool.open(wait=True, timeout=30)
            except Exception as exc:
                raise StoreUnavailableError(
                    f"cannot connect to PostgreSQL: {exc}; check the DSN and that the server runs"
                ) from exc
            self._apools[loop] = pool
        return pool

    @asynccontextmanager
    async def _acursor(self, conversation_id: str | None = None) -> AsyncIterator[Any]:
        """A cursor inside one transaction on a pooled connection; psycopg errors,
        ``COMMIT``'s included, become StoreError (the transaction is rolled back)."""
        pool = await self._apool()
        try:
            async with pool.connection() as conn:
                try:
                    async with conn.transaction(), conn.cursor() as cur:
                        yield cur
                except self._pg.Error as exc:
                    if conn.closed or conn.broken:
                        # the pool drops a broken connection and checks the next one
                        raise StoreUnavailableError(
                            f"lost the connection to PostgreSQL ({exc}); the next call reconnects"
                        ) from exc
                    raise
        except TimelineError:
            raise
        except self._pg.Error as exc:
            raise failed(exc, conversation_id) from exc

    async def _arows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        async with self._acursor() as cur:
            await cur.execute(sql, params)
            return list(await cur.fetchall())

    async def aclose(self) -> None:
        """Close the async pool of the running event loop (the sync connection stays)."""
        pool = self._apools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.close()

    def _drop_async_pools(self) -> None:
        self._apools.clear()

    async def acommit(
        self,
        conversation_id: str,
        *,
        expected_version: int,
        log: Sequence[Block],
        summaries: Sequence[Block],
        window: TimelineSnapshot,
    ) -> int:
        check_keys(conversation_id=conversation_id)
        window_row = encode_window_row(window)
        insert = (
            "INSERT INTO bt_blocks (conversation_id, block_id, kind, turn_id, path, type, text,"
            " body) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (conversation_id, block_id) DO NOTHING"
        )
        stored = "SELECT body FROM bt_blocks WHERE conversation_id = %s AND block_id = %s"
        async with self._acursor(conversation_id) as cur:
            await cur.execute(LOCK_INSERT, (conversation_id,))
            await cur.execute(LOCK_SELECT, (conversation_id,))
            actual = stored_version((await cur.fetchone())[0], conversation_id)
            if actual != expected_version:
                raise ConflictError(
                    f"conversation {conversation_id!r} is at version {actual}, this timeline "
                    f"expected {expected_version}; reload it and retry",
                    expected=expected_version,
                    actual=actual,
                    conversation_id=conversation_id,
                )
            for kind, group in (("log", log), ("summary", summaries)):
                for b in group:
                    text = index_text(b.text)
                    row = (conversation_id, b.id, kind, b.turn_id, b.path, b.type, text)
                    await cur.execute(insert, (*row, encode_block_row(b)))
                    if not cur.rowcount:
                        await cur.execute(stored, (conversation_id, b.id))
                        existing = await cur.fetchone()
                        check_duplicate(conversation_id, b, existing[0])
            await cur.execute(WRITE_WINDOW, (actual + 1, window_row, conversation_id))
        return actual + 1

    async def aload_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        check_keys(conversation_id=conversation_id)
        rows = await self._arows(
            "SELECT version, live_window FROM bt_conversations "
            "WHERE conversation_id = %s AND live_window IS NOT NULL",
            (conversation_id,),
        )
        if not rows:
            return None
        version, raw = rows[0]
        record = decode_window_row(raw, conversation_id)
        found = await self._arows(
            "SELECT block_id, body FROM bt_blocks WHERE conversation_id = %s "
            "AND block_id = ANY(%s)",
            (conversation_id, [r.id for r in record.refs]),
        )
        blocks = {bid: decode_block_row(body, conversation_id, bid) for bid, body in found}
        return stored_version(version, conversation_id), assemble_window(record, blocks)

    async def _ablocks(
        self, conversation_id: str, where: str, params: Sequence[Any]
    ) -> list[Block]:
        rows = await self._arows(
            f"SELECT block_id, body FROM bt_blocks WHERE conversation_id = %s {where} ORDER BY seq",
            (conversation_id, *params),
        )
        return [decode_block_row(body, conversation_id, bid) for bid, body in rows]

    async def aget_block(self, conversation_id: str, block_id: str) -> Block:
        check_keys(conversation_id=conversation_id, block_id=block_id)
        found = await self._ablocks(conversation_id, "AND block_id = %s", (block_id,))
        if not found:
            raise NotFoundError(
                f"no block {block_id!r} in conversation {conversation_id!r}",
                conversation_id=conversation_id,
                block_id=block_id,
            )
        return found[0]

    async def aread(self, conversation_id: str, path: str) -> list[Block]:
        check_keys(conversation_id=conversation_id, path=path)
        if path == PLAN_LATEST:  # the alias: the newest react.plan block
            return (await self._ablocks(conversation_id, "AND type = %s", (REACT_PLAN,)))[-1:]
        return await self._ablocks(conversation_id, "AND path = %s", (path,))

    async def aturn_log(self, conversation_id: str, turn_id: str | None = None) -> list[Block]:
        check_keys(conversation_id=conversation_id, turn_id=turn_id)
        if turn_id is None:
            return await self._ablocks(conversation_id, "AND kind = 'log'", ())
        return await self._ablocks(conversation_id, "AND kind = 'log' AND turn_id = %s", (turn_id,))

    async def asearch(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        if not terms:
            return []
        rows: list[Any] = []
        for joiner in SEARCH_JOINERS:
            rows = await self._arows(SEARCH, (joiner.join(terms), conversation_id, limit))
            if rows or len(terms) == 1:
                break
        return search_hits(rows, conversation_id)
