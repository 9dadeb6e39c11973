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
from typing import TYPE_CHECKING, Any, ClassVar

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
from index_store._pg_search import (
    SEARCHED,
    Flow,
    Pending,
    index_flow,
    search_flow,
    totals_flow,
)
from index_store._pg_sql import (
    INSERT_BLOCK,
    INSERT_PIECE,
    LOCK_INSERT,
    LOCK_SELECT,
    ROW_SELECT,
    WRITE_WINDOW,
    failed,
    pieces,
)
from index_store._rows import DELTA, Base, BlockCodec, Row, as_rows
from index_store._search import Chosen, hit_of
from index_store._vectors import model_of, query_vector
from timeline._model import (
    PLAN_LATEST,
    REACT_PLAN,
    Block,
    Embedder,
    NotFoundError,
    SearchHit,
    StoreUnavailableError,
    TimelineError,
    TimelineSnapshot,
    asearched,
    clean_text,
    install_hint,
)

__all__ = ["PostgresAsync"]


class PostgresAsync:
    """Mixin for :class:`index_store._postgres.PostgresStore` (which holds ``dsn``,
    ``pool_size``, ``_apools`` and ``_pg``)."""

    dsn: str
    pool_size: int
    embedder: Embedder | None
    _apools: dict[Any, Any]
    _pg: Any

    VECTOR_PUT: ClassVar[str]

    if TYPE_CHECKING:  # provided by the store (SqlStore, SqlVectors)

        def _sql(self, sql: str) -> str: ...

        def _vectors_of(
            self, conversation_id: str, blocks: Sequence[Block]
        ) -> dict[str, bytes]: ...

        def _put_vectors(
            self, db: Any, conversation_id: str, rows: list[tuple[int, bytes]]
        ) -> None: ...

    def _near(self, conversation_id: str, query: str) -> tuple[str, bytes] | None:
        """The embedder's name and the query's vector (None: no embedder, or it failed)."""
        if self.embedder is None:
            return None
        vector = query_vector(self.embedder, conversation_id, clean_text(query))
        return None if vector is None else (model_of(self.embedder), vector)

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
    async def _acursor(
        self, conversation_id: str | None = None, *, read: bool = False
    ) -> AsyncIterator[Any]:
        """A cursor inside one transaction on a pooled connection; psycopg errors,
        ``COMMIT``'s included, become StoreError (the transaction is rolled back).
        ``read``: no transaction, each statement its own (autocommit), as the sync
        store's reads (``_tx``)."""
        pool = await self._apool()
        try:
            async with pool.connection() as conn:
                try:
                    if read:
                        await conn.set_autocommit(True)
                        try:
                            async with conn.cursor() as cur:
                                yield cur
                        finally:
                            if not (conn.closed or conn.broken):
                                await conn.set_autocommit(False)
                    else:
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
        vectors = (
            await asyncio.to_thread(self._vectors_of, conversation_id, log) if self.embedder else {}
        )
        async with self._acursor(conversation_id) as cur:
            await cur.execute(LOCK_INSERT, (conversation_id,))
            await cur.execute(LOCK_SELECT, (conversation_id,))
            actual = stored_version((await cur.fetchone())[0], conversation_id)
            check_version(conversation_id, expected_version, actual)
            await self._aappend(cur, conversation_id, log, summaries, vectors)
            row = encode_window(window, actual + 1)
            await cur.execute(WRITE_WINDOW, (actual + 1, row, conversation_id))
        return actual + 1

    async def _aappend(
        self,
        cur: Any,
        cid: str,
        log: Sequence[Block],
        summaries: Sequence[Block],
        vectors: dict[str, bytes],
    ) -> None:
        """The sync store's ``_append``: a summary stored against the previous one; an id
        already stored must hold this very block."""
        codec = await self._acodec(cur, cid, all_=bool(summaries))
        pending = Pending()
        embedded: list[tuple[int, bytes]] = []
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
                    await _arun(cur, index_flow(cid, found[0], kind, block, pending))
                    base = after if kind == "summary" else base
                    if block.id in vectors and kind == "log":
                        embedded.append((found[0], vectors[block.id]))
                    continue
                await cur.execute(
                    f"SELECT {ROW_SELECT} FROM bt_blocks WHERE conversation_id = %s "
                    "AND block_id = %s",
                    (cid, block.id),
                )
                check_same(cid, block, codec.decode(as_rows(await cur.fetchall())[0]))
        await _arun(cur, totals_flow(cid, pending))
        if embedded and self.embedder is not None:
            model = model_of(self.embedder)
            await cur.executemany(
                self._sql(self.VECTOR_PUT), [(seq, cid, model, v) for seq, v in embedded]
            )

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
        near = (
            await asyncio.to_thread(self._near, conversation_id, query) if self.embedder else None
        )
        if not terms and near is None:
            return []
        async with self._acursor(conversation_id, read=near is None) as cur:
            chosen, rows = await _arun(
                cur, search_flow(conversation_id, terms, limit, near), SEARCHED, binary=True
            )
            codec = await self._acodec(cur, conversation_id, rows.values())
        return hits_of(chosen, rows, codec, terms)


async def _arun(
    cur: Any, flow: Flow, prepare: bool | None = None, binary: bool | None = None
) -> Any:
    """:func:`index_store._pg_search.run` on an async cursor."""
    try:
        query = next(flow)
        while True:
            await cur.execute(*query, prepare=prepare, binary=binary)
            query = flow.send(await cur.fetchall() if cur.description else [])
    except StopIteration as stop:
        return stop.value


def hits_of(
    chosen: list[Chosen], rows: dict[int, Row], codec: BlockCodec, terms: list[str]
) -> list[SearchHit]:
    """Search hits of the chosen rows, in ranked order (a row gone since it was ranked
    is left out)."""
    blocks = {seq: codec.decode(row) for seq, row in rows.items()}
    return [
        hit_of(blocks[c.ranked.seq], c, blocks.get(c.partner or -1), terms)
        for c in chosen
        if c.ranked.seq in blocks
    ]
