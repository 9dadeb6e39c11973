"""A provider's opaque call/result pair (a server tool's use and its result, a computer
call and its output) over the budget at the end of a conversation: sent whole, or both
as text, on normal and forced renders alike; never the call exactly and its result as a
truncated note."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.provider_rules import anthropic_errors, responses_errors
from timeline import CompactionPolicy, Timeline
from timeline._io.importers import import_conversation
from timeline._render.context import RenderedContext

RESULTS = [
    {
        "type": "web_search_result",
        "url": f"https://example.com/{i}",
        "title": f"page {i}",
        "encrypted_content": "x" * 3000,
        "page_age": None,
    }
    for i in range(8)
]
ANTHROPIC = {
    "messages": [
        {"role": "user", "content": "find the weather in paris"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "paris weather"},
                },
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": RESULTS},
            ],
        },
    ]
}
RESPONSES = [
    {"role": "user", "content": "open the page"},
    {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_1",
        "action": {"type": "screenshot"},
        "pending_safety_checks": [],
        "status": "completed",
    },
    {
        "type": "computer_call_output",
        "call_id": "call_1",
        "output": {"type": "computer_screenshot", "image_url": "https://example.com/s.png"},
        "acknowledged_safety_checks": [{"id": "sc_1", "code": "x", "message": "y " * 4000}],
    },
]
PAIRS = {
    "anthropic": (ANTHROPIC, ("server_tool_use", "web_search_tool_result")),
    "responses": (RESPONSES, ("computer_call", "computer_call_output")),
}


def _timeline(fmt: str, budget: int) -> Timeline:
    tl = import_conversation(PAIRS[fmt][0], fmt, "pair").timeline
    tl.policy = CompactionPolicy(max_tokens=budget)
    return tl


def _sent_kinds(view: RenderedContext, fmt: str) -> list[str]:
    if fmt == "anthropic":
        return [p["type"] for m in view.to_anthropic()["messages"] for p in m["content"]]
    return [str(i.get("type", "message")) for i in view.to_openai_responses()]


def _check(view: RenderedContext, fmt: str) -> None:
    """The pair's two items are both sent or both absent, and the payload is valid."""
    kinds = _sent_kinds(view, fmt)
    call, result = PAIRS[fmt][1]
    assert (call in kinds) == (result in kinds), kinds
    errors: list[Any] = (
        anthropic_errors(view.to_anthropic())
        if fmt == "anthropic"
        else responses_errors(view.to_openai_responses())
    )
    assert errors == []


@pytest.mark.parametrize("fmt", sorted(PAIRS))
def test_a_pair_over_the_budget_goes_whole_or_as_text(fmt: str) -> None:
    """A render too small for the pair's result sends the call and its result both as
    their text form (the result truncated), never the call alone."""
    tl = _timeline(fmt, 2_000)
    view = tl.render("")
    assert view.tokens <= 2_000
    _check(view, fmt)
    call, _ = PAIRS[fmt][1]
    assert call not in _sent_kinds(view, fmt)


@pytest.mark.parametrize("fmt", sorted(PAIRS))
def test_a_forced_render_keeps_the_pair_together(fmt: str) -> None:
    """A forced render (the provider said too long) of a pair that fitted sends it
    smaller, still never split."""
    tl = _timeline(fmt, 30_000)
    first = tl.render("")
    call, result = PAIRS[fmt][1]
    assert {call, result} <= set(_sent_kinds(first, fmt))
    forced = tl.render("", force_sanitize=True)
    assert forced.tokens < first.tokens
    _check(forced, fmt)


@pytest.mark.parametrize("fmt", sorted(PAIRS))
@pytest.mark.parametrize("which", [0, 1])
def test_hiding_one_item_of_a_pair_hides_the_pair(fmt: str, which: int) -> None:
    """Hiding the call or the result of a pair hides both (its replacement stands for
    the pair); showing either shows both again."""
    tl = _timeline(fmt, 30_000)
    pair = [b for b in tl.blocks if b.call_id and b.type.startswith("provider.")]
    assert len(pair) == 2
    assert tl.hide([pair[which].path], "(the search is hidden)") == 2
    view = tl.render("")
    call, result = PAIRS[fmt][1]
    assert not {call, result} & set(_sent_kinds(view, fmt))
    _check(view, fmt)
    assert "(the search is hidden)" in view.to_text()
    assert tl.unhide([pair[1 - which].path]) == 2
    assert {call, result} <= set(_sent_kinds(tl.render(""), fmt))
