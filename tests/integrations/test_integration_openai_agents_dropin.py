"""TimelineSession as a drop-in for SQLiteSession (#25 items 1-7): every item kept and
given back as stored, concurrent writers and pops serialized, a second instance on the
same id up to date, ``session_settings`` honoured."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, SessionSettings, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

import index_store
from timeline import CompactionPolicy
from timeline.integrations.openai_agents import TimelineSession

POLICY = CompactionPolicy(max_tokens=100_000)


@function_tool
def check(n: str) -> str:
    """Check something."""
    return f"checked {n}"


def texts(items: list[Any]) -> list[str]:
    out = []
    for item in items:
        content = item.get("content")
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content)
        out.append(str(content if content is not None else item.get("output", item.get("type"))))
    return out


def _checking_twice(model: ScriptedModel) -> None:
    """Two identical assistant messages (the SDK's placeholder id) in one run."""
    model.extend(
        [
            [assistant_message("Checking."), function_call("check", {"n": "1"}, call_id="c1")],
            [assistant_message("Checking."), function_call("check", {"n": "2"}, call_id="c2")],
            [assistant_message("Done.")],
        ]
    )


@pytest.mark.parametrize("with_filter", [False, True])
def test_identical_items_in_one_run_are_all_kept(with_filter: bool) -> None:
    """Item 1: the same assistant message twice in a run (same placeholder id) is stored
    twice, with or without the input filter, and the next run's model sees both."""
    model = ScriptedModel()
    agent = Agent(name="a", model=model, tools=[check])
    session = TimelineSession("dup", "memory://", POLICY)
    config = RunConfig(call_model_input_filter=session.input_filter if with_filter else None)

    async def main() -> list[Any]:
        _checking_twice(model)
        await Runner.run(agent, "go", session=session, run_config=config)
        model.enqueue([assistant_message("Again.")])
        await Runner.run(agent, "more", session=session, run_config=config)
        return await session.get_items()

    items = asyncio.run(main())
    assert texts(items).count("Checking.") == 2
    assert [i.get("type", "message") for i in items[:8]] == [
        "message",
        "message",
        "function_call",
        "function_call_output",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert texts(list(model.calls[-1].input)).count("Checking.") == 2


def test_identical_items_added_twice_are_kept_twice() -> None:
    """Item 1: add_items stores every item it is given, equal ones too (as SQLiteSession)."""
    same = {"role": "assistant", "content": "Checking.", "id": "__fake_id__"}
    session = TimelineSession("twice", "memory://", POLICY)

    async def main() -> list[Any]:
        await session.add_items([{"role": "user", "content": "go"}, same, same])
        await session.add_items([same])
        return await session.get_items()

    assert asyncio.run(main())[1:] == [same, same, same]


def test_concurrent_adds_on_one_object_lose_nothing(tmp_path: Path) -> None:
    """Item 2: add_items from asyncio.gather on one session and from threads (each with
    its own event loop) on the same object all land, on a SQLite store."""
    session = TimelineSession("conc", f"sqlite:///{tmp_path / 'c.db'}", POLICY)

    async def gathered() -> None:
        await asyncio.gather(
            *(session.add_items([{"role": "user", "content": f"a{i}"}]) for i in range(12))
        )

    def in_thread(i: int) -> None:
        asyncio.run(session.add_items([{"role": "user", "content": f"t{i}"}]))

    asyncio.run(gathered())
    with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(in_thread, range(12)))
    got = texts(asyncio.run(session.get_items()))
    assert sorted(got) == sorted([f"a{i}" for i in range(12)] + [f"t{i}" for i in range(12)])


def test_concurrent_adds_from_two_instances_lose_nothing(tmp_path: Path) -> None:
    """Item 2: two session objects on one id (two stores on one file, so no shared lock)
    writing from two threads at once: a commit that lost the race reloads and retries."""
    url = f"sqlite:///{tmp_path / 'two.db'}"
    first = TimelineSession("conc", url, POLICY)
    second = TimelineSession("conc", url, POLICY)
    start = threading.Barrier(2)

    def writer(session: TimelineSession, name: str) -> None:
        start.wait()
        for i in range(10):
            asyncio.run(session.add_items([{"role": "user", "content": f"{name}{i}"}]))

    threads = [
        threading.Thread(target=writer, args=(first, "x")),
        threading.Thread(target=writer, args=(second, "y")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = texts(asyncio.run(TimelineSession("conc", url, POLICY).get_items()))
    assert sorted(got) == sorted([f"x{i}" for i in range(10)] + [f"y{i}" for i in range(10)])


def test_concurrent_pops_from_two_instances_pop_each_item_once() -> None:
    """Item 3: two instances on one id popping at once pop every item exactly once, the
    first included, newest first."""
    store = index_store.open("memory://")
    a = TimelineSession("pop", store, POLICY)
    b = TimelineSession("pop", store, POLICY)

    async def main() -> tuple[list[Any], list[Any]]:
        await a.add_items([{"role": "user", "content": f"m{i}"} for i in range(6)])
        await b.get_items()  # b holds the history before the pops start
        popped = await asyncio.gather(*(s.pop_item() for s in (a, b, a, b, a, b, a)))
        return list(popped), await b.get_items()

    popped, left = asyncio.run(main())
    assert popped[-1] is None
    assert texts(popped[:-1]) == ["m5", "m4", "m3", "m2", "m1", "m0"]
    assert left == []


def test_consecutive_user_items_stay_separate() -> None:
    """Item 4: consecutive user items are three items (not one message of three parts),
    so ``limit`` counts them."""
    session = TimelineSession("users", "memory://", POLICY)

    async def main() -> tuple[list[Any], list[Any]]:
        await session.add_items([{"role": "user", "content": f"u{i}"} for i in range(3)])
        return await session.get_items(), await session.get_items(limit=2)

    every, last_two = asyncio.run(main())
    assert every == [{"role": "user", "content": f"u{i}"} for i in range(3)]
    assert last_two == every[1:]


def test_session_settings_limit_is_the_default_limit() -> None:
    """Item 5: ``session_settings`` is accepted (a mapping too) and its limit applies to
    ``get_items()``; an explicit limit wins."""
    session = TimelineSession("settings", "memory://", POLICY, session_settings={"limit": 2})
    assert isinstance(session.session_settings, SessionSettings)

    async def main() -> tuple[list[Any], list[Any]]:
        await session.add_items([{"role": "user", "content": f"u{i}"} for i in range(5)])
        return await session.get_items(), await session.get_items(limit=4)

    default, explicit = asyncio.run(main())
    assert texts(default) == ["u3", "u4"]
    assert texts(explicit) == ["u1", "u2", "u3", "u4"]


def test_runner_uses_session_settings() -> None:
    """Item 5: the Runner reads the session's settings without an error on first use."""
    model = ScriptedModel()
    agent = Agent(name="a", model=model)
    session = TimelineSession(
        "runner-settings", "memory://", POLICY, session_settings=SessionSettings(limit=1)
    )

    async def main() -> None:
        await session.add_items([{"role": "user", "content": f"old {i}"} for i in range(4)])
        model.enqueue([assistant_message("ok")])
        await Runner.run(agent, "new", session=session)

    asyncio.run(main())
    assert texts(list(model.calls[-1].input)) == ["old 3", "new"]


def test_second_instance_sees_the_other_ones_writes() -> None:
    """Item 6: an instance that already read the history sees another instance's later
    writes, pops and clears on its next call."""
    store = index_store.open("memory://")
    a = TimelineSession("shared", store, POLICY)
    b = TimelineSession("shared", store, POLICY)

    async def main() -> list[list[str]]:
        seen = [texts(await b.get_items())]
        await a.add_items([{"role": "user", "content": "from a"}])
        seen.append(texts(await b.get_items()))
        await b.add_items([{"role": "assistant", "content": "from b"}])
        seen.append(texts(await a.get_items()))
        await a.pop_item()
        seen.append(texts(await b.get_items()))
        await b.clear_session()
        seen.append(texts(await a.get_items()))
        return seen

    assert asyncio.run(main()) == [[], ["from a"], ["from a", "from b"], ["from a"], []]


def test_items_round_trip_as_stored() -> None:
    """Item 7: get_items gives back what add_items got: string content, ids, status,
    output-only fields, a leading output without its call, hosted-tool items; no
    ``[conversation start]`` item."""
    items: list[dict[str, Any]] = [
        {"type": "function_call_output", "call_id": "gone", "output": "orphan"},
        {"role": "user", "content": "hi"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hello.", "annotations": []}],
        },
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "id": "fc_1"},
        {"type": "function_call_output", "call_id": "c1", "output": "out"},
        {"role": "user", "content": [{"type": "input_text", "text": "again"}]},
    ]
    session = TimelineSession("round", "memory://", POLICY)

    async def main() -> list[Any]:
        await session.add_items(items)
        return await session.get_items()

    assert asyncio.run(main()) == items


def test_summary_takes_the_place_of_compacted_items() -> None:
    """Item 7: once compaction ran, the summary comes first and the kept items follow as
    stored; a new instance on the store gives the same items."""
    store = index_store.open("memory://")
    session = TimelineSession("compact", store, CompactionPolicy(max_tokens=600))
    filler = " lorem ipsum dolor" * 20
    items = []
    for i in range(12):
        items.append({"role": "user", "content": f"question {i}{filler}"})
        items.append({"id": f"msg_{i}", "role": "assistant", "content": f"answer {i}"})

    async def main() -> tuple[list[Any], list[Any]]:
        for i in range(0, len(items), 2):
            await session.add_items(items[i : i + 2])
        return await session.get_items(), await TimelineSession("compact", store).get_items()

    got, again = asyncio.run(main())
    assert "CONVERSATION SUMMARY" in json.dumps(got[0])
    kept = got[1:]
    assert kept and kept == items[-len(kept) :]
    assert again == got
