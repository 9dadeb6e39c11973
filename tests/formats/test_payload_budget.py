"""Every layout within the budget, counted on its real payload text."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.samples import PNG_1x1
from timeline import BudgetError, CompactionPolicy, RecallPolicy, Timeline, blocks
from timeline._model.errors import EmptyPromptError
from timeline._render.context import RenderedContext
from timeline._tokens.payload import payload_tokens

FORMATS = ("to_anthropic", "to_openai", "to_openai_responses", "to_text", "to_document")

STEP = st.tuples(
    st.sampled_from(["prompt", "tools", "answer", "note", "image", "pin", "hide", "turn"]),
    st.integers(0, 6_000),  # text size
    st.integers(0, 3),  # parallel calls
    st.booleans(),  # render forced
)


def payload_sizes(view: RenderedContext) -> dict[str, int]:
    """Each format's payload tokens (a render with nothing to send has none)."""
    sizes = {}
    for name in FORMATS:
        try:
            sizes[name] = payload_tokens(getattr(view, name)())
        except EmptyPromptError:
            sizes[name] = 0
    return sizes


def test_small_tool_turns_text_layout_within_budget() -> None:
    """60 small tool turns at a 4,000 budget: to_text() and to_document() fit (they were
    5,621 tokens against view.tokens 3,471)."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=4_000))
    for i in range(60):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"please do step {i}"))
        call = tl.append(blocks.tool_call("read", {"path": f"f{i}.py"}, call_id=f"c{i}"))
        tl.append(blocks.tool_result(call.call_id or "", f"x = {i}", tool_id="read"))
        tl.append(blocks.assistant_completion(f"done {i}"))
    view = tl.render("You are helpful.")
    sizes = payload_sizes(view)
    assert max(sizes.values()) <= view.tokens <= 4_000, sizes


def test_pending_call_and_assistant_first_are_counted() -> None:
    """A call with no result yet and a stream opening on the assistant side: the
    synthetic parts the payloads add are within the estimate."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=2_000))
    tl.begin_turn()
    tl.append(blocks.assistant_completion("I will look."))
    tl.append(blocks.tool_call("functions.fs_read", {"p": 1}, call_id="functions.fs_read:0"))
    view = tl.render("")
    sizes = payload_sizes(view)
    assert max(sizes.values()) <= view.tokens, sizes


def test_many_pending_calls_are_counted() -> None:
    """Twenty parallel calls whose results are not recorded yet: every payload carries a
    synthetic "no result recorded" result for each, and the estimate counts them (one
    such result is small enough to hide in the estimate's slack, twenty are not)."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=20_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("read every file"))
    for i in range(20):
        tl.append(blocks.tool_call("read", {"path": f"f{i}.py"}, call_id=f"call_{i}"))
    view = tl.render("sys")
    answered = view.to_anthropic()["messages"][-1]["content"]
    assert sum(1 for part in answered if part["type"] == "tool_result") == 20
    sizes = payload_sizes(view)
    assert max(sizes.values()) <= view.tokens, sizes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(STEP, min_size=1, max_size=20),
    budget=st.integers(250, 6_000),
    recall=st.none() | st.sampled_from((0.1, 0.3)),
)
def test_every_format_within_budget(steps: list[Any], budget: int, recall: float | None) -> None:
    """Random timelines (tool turns, big results, images, pins, hides, forced renders),
    budgets down to a few hundred tokens, with and without recall: each of the five
    payloads, counted with the library's own counter, is within view.tokens, which is
    within the budget."""
    recalling = None if recall is None else RecallPolicy(share=recall)
    tl = Timeline("p", policy=CompactionPolicy(max_tokens=budget, recall=recalling))
    tl.begin_turn()
    tl.append(blocks.user_prompt("Fix the failing test."))
    for kind, size, n_calls, force in steps:
        text = "word " * (size // 5)
        if kind == "turn":
            tl.begin_turn()
        elif kind == "prompt":
            tl.append(blocks.user_prompt(text or "hi"))
        elif kind == "pin" and size < 400:
            tl.append(blocks.user_prompt(f"never break the API {size}"), pin=True)
        elif kind == "tools":
            calls = [
                tl.append(blocks.tool_call("bash", {"i": i, "n": size})) for i in range(n_calls)
            ]
            for c in calls:
                tl.append(blocks.tool_result(c.call_id or "", text, is_error=size % 2 == 1))
        elif kind == "answer":
            tl.append(blocks.assistant_completion(text or "ok"))
        elif kind == "note":
            tl.append(blocks.note(text or "note"))
        elif kind == "image":
            tl.append(blocks.user_attachment(name="shot.png", mime="image/png", data=PNG_1x1))
        elif kind == "hide" and tl.blocks:
            tl.hide([tl.blocks[-1].path], replacement_text="(hidden)" if size % 2 else None)
        try:
            view = tl.render("You are a careful agent.", force_sanitize=force)
        except BudgetError:
            continue  # typed: nothing more could go (pins, the forced ladder's floor)
        assert view.tokens <= budget
        sizes = payload_sizes(view)
        assert max(sizes.values()) <= view.tokens, (sizes, view.tokens)
