"""Tool-call ids a model or caller chose never stop an agent: a reused id, an id the
library would generate next, two in one reply; every payload gets unique ids."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import index_store
from tests.helpers.provider_rules import CALL_ID_RE, anthropic_errors, chat_errors, responses_errors
from timeline import (
    HeuristicCounter,
    OrphanToolResultError,
    Timeline,
    blocks,
    provider_call_id,
)
from timeline._driver import ModelReply, ReactDriver, ToolCallRequest
from timeline._model.call_ids import given_call_id
from timeline._render.context import RenderedContext


def _tl() -> Timeline:
    tl = Timeline("ids", token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("go"))
    return tl


def _payload_ids(view: RenderedContext) -> dict[str, list[str]]:
    """The call ids each payload sends, in order (tool_use / tool_calls / function_call)."""
    anthropic = [
        p["id"]
        for m in view.to_anthropic()["messages"]
        for p in m["content"]
        if isinstance(p, dict) and p.get("type") == "tool_use"
    ]
    chat = [c["id"] for m in view.to_openai() for c in m.get("tool_calls") or []]
    responses = [
        i["call_id"] for i in view.to_openai_responses() if i.get("type") == "function_call"
    ]
    return {"anthropic": anthropic, "openai": chat, "responses": responses}


def _valid(view: RenderedContext) -> None:
    assert anthropic_errors(view.to_anthropic()) == []
    assert chat_errors(view.to_openai()) == []
    assert responses_errors(view.to_openai_responses()) == []
    for ids in _payload_ids(view).values():
        assert len(ids) == len(set(ids)), ids


class TestReusedIds:
    def test_a_reused_id_is_appended_and_its_result_answers_the_new_call(self) -> None:
        """A second call with a used id gets a free internal id (the given one kept);
        a result naming the id answers the call that reused it."""
        tl = _tl()
        first = tl.append(blocks.tool_call("get", {"n": 1}, call_id="call_0"))
        tl.append(blocks.tool_result("call_0", "one"))
        tl.append(blocks.assistant_completion("got one"))
        tl.begin_turn()
        tl.append(blocks.user_prompt("again"))
        second = tl.append(blocks.tool_call("get", {"n": 2}, call_id="call_0"))
        result = tl.append(blocks.tool_result("call_0", "two"))
        assert first.call_id == "call_0"
        assert second.call_id == "call_0#2"
        assert given_call_id(second) == "call_0"
        assert result.call_id == second.call_id
        assert given_call_id(result) == "call_0"
        _valid(tl.render("sys"))

    def test_two_calls_with_one_id_in_one_reply_each_get_their_result(self) -> None:
        """Parallel calls sharing an id: results naming each call's stored id (or the
        shared id, in order) answer each call once."""
        tl = _tl()
        a = tl.append(blocks.tool_call("get", {"n": 1}, call_id="dup"))
        b = tl.append(blocks.tool_call("get", {"n": 2}, call_id="dup"))
        ra = tl.append(blocks.tool_result("dup", "one"))
        rb = tl.append(blocks.tool_result("dup", "two"))
        assert (ra.call_id, rb.call_id) == (a.call_id, b.call_id)
        assert a.call_id != b.call_id
        _valid(tl.render("sys"))

    def test_a_model_chosen_id_equal_to_the_next_generated_one(self) -> None:
        """A model's id equal to the id the library would generate next does not break
        the library's next call: that call gets another free id."""
        tl = _tl()
        taken = tl.append(blocks.tool_call("x", {}, call_id="call_b5"))
        tl.append(blocks.tool_result(taken.call_id, "x done"))
        generated = tl.append(blocks.tool_call("y", {}))
        assert generated.id == "b5"  # the id whose generated call id the model took
        tl.append(blocks.tool_result(generated.call_id, "y done"))
        assert generated.call_id not in (None, "call_b5")
        assert given_call_id(generated) == generated.call_id  # generated: no other name
        results = [b for b in tl.blocks if b.type == "react.tool.result"]
        assert [r.text for r in results] == ["x done", "y done"]
        _valid(tl.render("sys"))

    def test_an_orphan_result_is_still_refused(self) -> None:
        """A result naming no call at all is refused and changes nothing."""
        tl = _tl()
        before = list(tl.blocks)
        with pytest.raises(OrphanToolResultError):
            tl.append(blocks.tool_result("nobody", "x"))
        assert list(tl.blocks) == before

    def test_reuse_is_known_after_persist_and_load(self) -> None:
        """A reloaded timeline knows the ids calls were given: a result naming a reused
        id answers the call that reused it."""
        store = index_store.open("memory://")
        tl = _tl()
        tl.append(blocks.tool_call("get", {}, call_id="call_0"))
        tl.append(blocks.tool_result("call_0", "one"))
        tl.append(blocks.tool_call("get", {}, call_id="call_0"))
        tl.persist(store)
        again = Timeline.load(store, "ids", token_counter=HeuristicCounter())
        result = again.append(blocks.tool_result("call_0", "two"))
        assert result.call_id == "call_0#2"
        _valid(again.render("sys"))

    def test_extend_sees_the_calls_of_its_own_batch(self) -> None:
        """One ``extend`` holding a reused call and its result pairs them too."""
        tl = _tl()
        tl.append(blocks.tool_call("get", {}, call_id="c"))
        tl.append(blocks.tool_result("c", "one"))
        stored = tl.extend([blocks.tool_call("get", {}, call_id="c"), blocks.tool_result("c", "2")])
        assert stored[1].call_id == stored[0].call_id == "c#2"


def _reusing_model() -> Any:
    """Every turn: one call with id ``call_0`` (as some OpenAI-compatible servers and
    models number calls per turn), then an answer."""

    def model(view: RenderedContext) -> ModelReply:
        last = view.blocks[-1]
        if last.type == "react.tool.result":
            return ModelReply(text=f"done: {last.text}")
        return ModelReply(tool_calls=(ToolCallRequest("get", {"n": 1}, "call_0"),))

    return model


def test_react_driver_runs_turns_whose_model_reuses_call_ids() -> None:
    """ReactDriver: a model using ``call_0`` in every turn finishes every turn, each
    result with its own call, and every payload valid with unique ids."""
    tl = Timeline("drv", token_counter=HeuristicCounter())
    driver = ReactDriver(tl, _reusing_model(), {"get": lambda p: "value"})
    answers = [driver.run_turn(f"turn {i}").stopped for i in range(3)]
    assert answers == ["answer"] * 3
    calls = [b for b in tl.blocks if b.type == "react.tool.call"]
    results = [b for b in tl.blocks if b.type == "react.tool.result"]
    assert [r.call_id for r in results] == [c.call_id for c in calls]
    assert [given_call_id(c) for c in calls] == ["call_0"] * 3
    _valid(tl.render("sys"))


def test_react_driver_answers_two_calls_sharing_an_id_in_one_reply() -> None:
    """ReactDriver: two calls with one id in one reply each get their own result."""
    replies = iter(
        [
            ModelReply(
                tool_calls=(
                    ToolCallRequest("get", {"n": 1}, "same"),
                    ToolCallRequest("get", {"n": 2}, "same"),
                )
            ),
            ModelReply(text="done"),
        ]
    )
    tl = Timeline("drv2", token_counter=HeuristicCounter())
    ReactDriver(tl, lambda v: next(replies), {"get": lambda p: f"n={p['n']}"}).run_turn("go")
    calls = [b for b in tl.blocks if b.type == "react.tool.call"]
    results = {b.call_id: b.text for b in tl.blocks if b.type == "react.tool.result"}
    assert [results[c.call_id] for c in calls] == ["n=1", "n=2"]
    _valid(tl.render("sys"))


class TestProviderForms:
    def test_an_id_equal_to_the_mapped_form_of_another_stays_apart(self) -> None:
        """``a.b`` and the literal mapped form of ``a.b`` are two calls in every
        payload, each result with its own call."""
        tl = _tl()
        mapped = provider_call_id("a.b")
        tl.append(blocks.tool_call("f", {}, call_id="a.b"))
        tl.append(blocks.tool_call("g", {}, call_id=mapped))
        tl.append(blocks.tool_result("a.b", "from f"))
        tl.append(blocks.tool_result(mapped, "from g"))
        view = tl.render("sys")
        _valid(view)
        results = {m["tool_call_id"]: m["content"] for m in view.to_openai() if m["role"] == "tool"}
        calls = {
            c["id"]: c["function"]["name"]
            for m in view.to_openai()
            for c in m.get("tool_calls") or []
        }
        assert {calls[i]: results[i] for i in calls} == {"f": "from f", "g": "from g"}

    @given(
        st.lists(
            st.sampled_from(["a.b", "a:b", "a_b", "call_0", "x" * 45, "y" * 45, None]),
            min_size=1,
            max_size=8,
        ),
        st.data(),
    )
    def test_no_two_calls_share_an_id_in_a_payload(
        self, given_ids: list[str | None], data: st.DataObject
    ) -> None:
        """Ids given again, their safe forms given as ids, ids whose safe forms collide,
        generated ids: every payload gets one id per call, each result with its call."""
        tl = _tl()
        for given_id in given_ids:
            taken = [c.call_id or "" for c in tl.blocks if c.type == "react.tool.call"]
            if taken and given_id is None and data.draw(st.booleans()):
                given_id = provider_call_id(data.draw(st.sampled_from(taken)))
            call = tl.append(blocks.tool_call("f", {}, call_id=given_id))
            tl.append(blocks.tool_result(call.call_id or "", f"result of {call.id}"))
        view = tl.render("sys")
        _valid(view)
        chat = view.to_openai()
        calls = [c["id"] for m in chat for c in m.get("tool_calls") or []]
        answers = [m["tool_call_id"] for m in chat if m["role"] == "tool"]
        assert calls == answers and len(set(calls)) == len(given_ids)
        assert all(CALL_ID_RE.fullmatch(i) for i in calls)

    def test_a_payload_imports_and_renders_back_with_its_ids(self) -> None:
        """Safe ids map to themselves: a payload holding an id shaped like a mapped one
        imports and renders back with the same ids."""
        mapped = provider_call_id("a.b")
        data = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": mapped, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": mapped, "content": "done"},
        ]
        from timeline._io.importers import import_conversation

        view = import_conversation(data, "openai", "i").timeline.render("")
        sent = view.to_openai()
        assert sent[1]["tool_calls"][0]["id"] == sent[2]["tool_call_id"] == mapped


def test_a_call_id_with_a_lone_surrogate_gets_a_safe_form() -> None:
    """The hash encodes with ``surrogatepass``: without it a lone surrogate (which JSON
    decoders can produce) would raise UnicodeEncodeError."""
    safe = provider_call_id("call\ud800x")
    assert re.fullmatch(r"call_x_[0-9a-f]{12}", safe)
