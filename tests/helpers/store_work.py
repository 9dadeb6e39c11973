"""A timeline's work on a store, and running a coroutine, for the store tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tests.helpers.clock import FixedClock
from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    Timeline,
    blocks,
)

POLICY = CompactionPolicy(max_tokens=2_500, keep_recent_turns=1)


def new_tl(cid: str = "c1") -> Timeline:
    return Timeline(cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())


def load(store: Any, cid: str = "c1") -> Timeline:
    return Timeline.load(
        store, cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock()
    )


def work(tl: Timeline, turns: int, start: int = 0) -> None:
    for i in range(start, start + turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {i}: investigate the flaky retry logic in worker {i}"))
        c = tl.append(blocks.tool_call("read_file", {"path": f"src/worker_{i}.py"}))
        tl.append(blocks.tool_result(c.call_id or "", f"def retry_{i}():\n    pass\n" * 25))
        tl.append(blocks.assistant_completion(f"Worker {i} retries without backoff."))
        tl.render("sys")


T = TypeVar("T")


def arun(store: Any, main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main`` on a fresh loop and close the store's async pool before it ends."""

    async def wrapped() -> T:
        try:
            return await main()
        finally:
            aclose = getattr(store, "aclose", None)
            if aclose is not None:
                await aclose()

    return asyncio.run(wrapped())
