"""The async API of the PostgreSQL store, on psycopg's async connections.

Each event loop gets its own ``psycopg_pool.AsyncConnectionPool`` (``pool_size``
connections, opened on first use), so many tasks query concurrently without a thread
per call. ``await store.aclose()`` closes the pool of the running loop; ``close()``
drops every pool. Statements and row handling are the sync store's; a summary stored as
a delta reads its bases from the conversation's summaries, fetched with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from index_store._common import (
    assemble_window,
    check_keys,
    check_same,
    check_version,
    decode_window,
    encode_window,
    search_terms,
    stored_version,
)
from index_store._pg_sql import (
    INSERT_BLOCK,
    INSERT_PIECE,
    LOCK_INSERT,
    LOCK_SELECT,
    ROW_SELECT,
    TOP_SQL,
    WRITE_WINDOW,
    failed,
    pieces,
    rank,
    search_sql,
    token,
)
from index_store._rows import DELTA, Base, BlockCodec, Row, as_rows
from timeline.model.block import PLAN_LATEST, REACT_PLAN, Block
from timeline.model.errors import (
    NotFoundError,
    StoreUnavailableError,
    TimelineError,
)
from timeline.model.extras import install_hint
from timeline.model.persistence import SearchHit, TimelineSnapshot
from timeline.model.tracing import asearched

__all__ = ["PostgresAsync"]


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
                hint = install_hint("postgres")
                raise StoreUnavailableError(
                    f"async PostgreSQL needs psycopg_pool; install it with {hint}"
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

    async def _acodec(
        self, cur: Any, cid: str, rows: Iterable[Row] = (), *, all_: bool = False
    ) -> BlockCodec:
        """A codec for ``rows``; when one is a summary stored as a delta (or ``all_``), the
        conversation's summaries are fetched for it to read bases from."""
        summaries: dict[str, Row] = {}
        if all_ or any(len(r.body) > 1 and r.body[1] & DELTA for r in rows):
            await cur.execute(
                f"SELECT {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s "
                "AND kind = 'summary' ORDER BY seq",
                (cid,),
            )
            summaries = {r.block_id: r for r in as_rows(await cur.fetchall())}
        return BlockCodec(
            cid, lambda ids: [summaries[i] for i in ids if i in summaries], text_apart=True
        )

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
        async with self._acursor(conversation_id) as cur:
            await cur.execute(LOCK_INSERT, (conversation_id,))
            await cur.execute(LOCK_SELECT, (conversation_id,))
            actual = stored_version((await cur.fetchone())[0], conversation_id)
            check_version(conversation_id, expected_version, actual)
            await self._aappend(cur, conversation_id, log, summaries)
            row = encode_window(window, actual + 1)
            await cur.execute(WRITE_WINDOW, (actual + 1, row, conversation_id))
        return actual + 1

    async def _aappend(
        self, cur: Any, cid: str, log: Sequence[Block], summaries: Sequence[Block]
    ) -> None:
        """The sync store's ``_append``: a summary stored against the previous one; an id
        already stored must hold this very block."""
        codec = await self._acodec(cur, cid, all_=bool(summaries))
        base: Base | None = None
        if summaries:
            await cur.execute(
                f"SELECT {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s "
                "AND kind = 'summary' ORDER BY seq DESC LIMIT 1",
                (cid,),
            )
            latest = as_rows(await cur.fetchall())
            base = codec.base_of(latest[0]) if latest else None
        for kind, group in (("log", log), ("summary", summaries)):
            for block in group:
                row, after = codec.encode(kind, block, base if kind == "summary" else None)
                await cur.execute(INSERT_BLOCK, (cid, *row.columns))
                found = await cur.fetchone()
                if found is not None:
                    for n, part in enumerate(pieces(row.text or "")):
                        await cur.execute(INSERT_PIECE, (found[0], n, cid, part))
                    base = after if kind == "summary" else base
                    continue
                await cur.execute(
                    f"SELECT {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s "
                    "AND block_id = %s",
                    (cid, block.id),
                )
                check_same(cid, block, codec.decode(as_rows(await cur.fetchall())[0]))

    async def aload_window(self, conversation_id: str) -> tuple[int, TimelineSnapshot] | None:
        check_keys(conversation_id=conversation_id)
        async with self._acursor(conversation_id) as cur:
            await cur.execute(
                "SELECT version, live_window FROM bt_conversations "
                "WHERE conversation_id = %s AND live_window IS NOT NULL",
                (conversation_id,),
            )
            rows = await cur.fetchall()
            if not rows:
                return None
            version, raw = rows[0]
            record = decode_window(raw, conversation_id, version)
            await cur.execute(
                f"SELECT {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s "
                "AND block_id = ANY(%s)",
                (conversation_id, [r.id for r in record.refs]),
            )
            found = as_rows(await cur.fetchall())
            codec = await self._acodec(cur, conversation_id, found)
        blocks = {b.id: b for b in codec.decode_all(found)}
        return stored_version(version, conversation_id), assemble_window(record, blocks)

    async def _ablocks(
        self, conversation_id: str, where: str, params: Sequence[Any]
    ) -> list[Block]:
        async with self._acursor(conversation_id) as cur:
            await cur.execute(
                f"SELECT {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s {where} "
                "ORDER BY seq",
                (conversation_id, *params),
            )
            rows = as_rows(await cur.fetchall())
            codec = await self._acodec(cur, conversation_id, rows)
        return codec.decode_all(rows)

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

    @asearched
    async def asearch(self, conversation_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        terms = search_terms(conversation_id, query, limit)
        if not terms:
            return []
        async with self._acursor(conversation_id) as cur:
            ranked: list[tuple[int, int, float]] = []
            for every in (True, False):
                sql, params = search_sql(terms, every)
                await cur.execute(sql, {**params, "token": token(conversation_id)})
                ranked = rank(list(await cur.fetchall()), terms, limit)
                if ranked or len(terms) == 1:
                    break
            rows: list[Any] = []
            if ranked:
                await cur.execute(TOP_SQL, _top_params(conversation_id, terms, ranked))
                rows = list(await cur.fetchall())
            codec = await self._acodec(cur, conversation_id, as_rows(r[1:8] for r in rows))
        return hits_of(rows, ranked, codec)


def _top_params(cid: str, terms: list[str], ranked: list[tuple[int, int, float]]) -> Any:
    return {
        "any": " | ".join(terms),
        "seqs": [r[0] for r in ranked],
        "best": [r[1] for r in ranked],
        "cid": cid,
    }


def top(cur: Any, cid: str, terms: list[str], limit: int) -> list[tuple[int, int, float]]:
    """The sync search: ranks the matching pieces (all terms, else any), then executes
    :data:`TOP_SQL` for the ranked blocks on ``cur`` (the caller fetches its rows)."""
    ranked: list[tuple[int, int, float]] = []
    for every in (True, False):
        sql, params = search_sql(terms, every)
        cur.execute(sql, {**params, "token": token(cid)})
        ranked = rank(list(cur.fetchall()), terms, limit)
        if ranked or len(terms) == 1:
            break
    if ranked:
        cur.execute(TOP_SQL, _top_params(cid, terms, ranked))
    return ranked


def hits_of(
    rows: Iterable[Sequence[Any]], ranked: list[tuple[int, int, float]], codec: BlockCodec
) -> list[SearchHit]:
    """Search hits of :data:`TOP_SQL`'s rows, in ranked order."""
    by_seq = {r[0]: r for r in rows}
    hits = []
    for seq, _, score in ranked:
        if seq not in by_seq:
            continue
        *columns, snippet = by_seq[seq][1:]
        row = Row(*columns)
        b = codec.decode(row)
        hits.append(SearchHit(b, b.path, b.turn_id, snippet or "", score, row.kind))
    return hits
