"""TimelineSession's items: ``get_items`` gives back what was added (nothing invented,
no rendering in an item's place), the model call through the input filter stays within
the budget, and an item the session cannot store is refused with a typed error before
anything is written."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent
from agents.run_config import CallModelData, ModelInputData

from timeline import CompactionPolicy, TimelineError
from timeline.integrations import InvalidItemError
from timeline.integrations.openai_agents import TimelineSession

SMALL = CompactionPolicy(max_tokens=4000)
BIG_BODY = "lorem ipsum dolor " * 5000  # about 15,000 tokens: over any render's budget


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_an_unknown_item_over_the_budget_comes_back_as_added() -> None:
    """An item of a type the library does not model, too big for the budget, is what
    ``get_items`` gives back: no ``[conversation start]`` item before it, no text
    rendering in its place."""
    session = TimelineSession("s", "memory://", SMALL)
    item = {"type": "vendor_trace", "id": "vt_1", "blob": BIG_BODY}
    run(session.add_items([item]))
    assert run(session.get_items()) == [item]


def test_after_a_compaction_the_kept_items_come_back_as_added() -> None:
    """When a compaction replaced the older items, ``get_items`` gives the summary first
    and then the kept items as added, the oversized one included."""
    session = TimelineSession("s", "memory://", SMALL)
    trace = {"type": "vendor_trace", "id": "vt_1", "blob": BIG_BODY}
    older = [
        {"role": "user", "content": "what failed?"},
        {"role": "assistant", "content": "the nightly build"},
    ]
    added = [*older, {"role": "user", "content": "show the trace"}, trace]
    run(session.add_items(added))
    summary, *kept = run(session.get_items())
    assert "what failed?" in str(summary["content"])
    assert kept == added[len(added) - len(kept) :]
    assert kept[-2:] == [{"role": "user", "content": "show the trace"}, trace]


def test_the_model_call_still_gets_the_history_within_the_budget() -> None:
    """Through the input filter the model gets the oversized item truncated in its
    place (nothing can be compacted before it), and no invented user item before it."""
    session = TimelineSession("s", "memory://", SMALL)
    trace = {"type": "vendor_trace", "id": "vt_1", "blob": BIG_BODY}
    run(session.add_items([trace]))
    agent = Agent(name="a", instructions="Be brief.")
    data = CallModelData(ModelInputData(input=[trace], instructions="Be brief."), agent, None)
    sent = run(session.input_filter(data)).input
    assert len(sent) == 1 and sent[0]["role"] == "assistant"
    assert sent[0]["content"].startswith("[OpenAI Responses vendor_trace]")
    assert len(sent[0]["content"]) < len(BIG_BODY) // 2


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"role": "user", "content": "broken \ud800"}, r"items\[1\]\.content"),
        ("not an item", r"items\[1\]: a session item must be a mapping, not str"),
        (b'{"role": "user"}', r"items\[1\]: a session item must be a mapping, not bytes"),
        ({"role": "user", "content": b"raw"}, r"items\[1\] is not JSON"),
        ({"role": "user", "content": "x", "score": float("nan")}, r"items\[1\]\.score"),
    ],
    ids=["lone surrogate", "a string", "bytes", "bytes inside", "NaN"],
)
def test_an_item_the_session_cannot_store_is_refused(bad: Any, where: str) -> None:
    """``add_items`` refuses the batch with an InvalidItemError (a TimelineError and a
    TypeError) naming the item, and writes none of it: the good item before the bad one
    is not added either."""
    session = TimelineSession("s", "memory://", SMALL)
    run(session.add_items([{"role": "user", "content": "first"}]))
    with pytest.raises(InvalidItemError, match=where) as caught:
        run(session.add_items([{"role": "user", "content": "second"}, bad]))
    assert isinstance(caught.value, TimelineError) and isinstance(caught.value, TypeError)
    assert run(session.get_items()) == [{"role": "user", "content": "first"}]
    run(session.add_items([{"role": "user", "content": "third"}]))
    assert [i["content"] for i in run(session.get_items())] == ["first", "third"]


def test_an_item_nested_deeper_than_a_block_takes_is_refused() -> None:
    """A nesting the block model would refuse is refused at ``add_items``, naming it."""
    session = TimelineSession("s", "memory://", SMALL)
    deep: dict[str, Any] = {"type": "vendor_trace"}
    node = deep
    for _ in range(80):
        node["child"] = {}
        node = node["child"]
    with pytest.raises(InvalidItemError, match=r"items\[0\]\.child.*nested deeper than"):
        run(session.add_items([deep]))
    assert run(session.get_items()) == []
