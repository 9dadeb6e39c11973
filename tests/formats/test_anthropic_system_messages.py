"""Anthropic's beta ``role: "system"`` messages inside ``messages`` (a mid-conversation
instruction, a tool made available from a point on): imported as ``provider.message``
blocks, sent back to Anthropic exactly and in their place as messages of their own, shown
to other providers as a user-side text note, checkpointed, counted, compacted, persisted,
and planned incrementally as from scratch (issue #24)."""

from __future__ import annotations

from typing import Any

import pytest

import index_store
from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import CompactionPolicy, HeuristicCounter, InvalidBlockError, Timeline, blocks
from timeline._formats.anthropic import to_anthropic
from timeline._io.importers import import_conversation
from timeline._model.block import Block
from timeline._model.native import PROVIDER_MESSAGE, native_item
from timeline._tokens.payload import payload_tokens

RULE = "From now on, every suggestion must include explicit type annotations."
SYSTEM = {"role": "system", "content": [{"type": "text", "text": RULE}]}
ADD_TOOL = {
    "content": [{"tool": {"name": "lookup", "type": "tool_reference"}, "type": "tool_addition"}],
    "role": "system",
}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def _imported(messages: list[dict[str, Any]]) -> Timeline:
    return import_conversation({"messages": messages}, "anthropic", "s").timeline


def _sent(tl: Timeline) -> list[dict[str, Any]]:
    payload = tl.render("").to_anthropic()
    assert anthropic_errors(payload) == []
    messages: list[dict[str, Any]] = payload["messages"]
    return messages


def _plain(value: Any) -> Any:
    """``value`` without its cache checkpoints (the renderer places its own)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class TestImport:
    def test_a_system_message_becomes_a_provider_message_in_its_place(self) -> None:
        """The message is kept whole (its content blocks' ``cache_control`` dropped), as a
        system-authored block between the blocks it was recorded between."""
        marked = {
            **SYSTEM,
            "content": [{**SYSTEM["content"][0], "cache_control": {"type": "ephemeral"}}],
        }  # type: ignore[dict-item]
        tl = _imported([_user("Review it."), marked, _assistant("def f(a: int) -> int: ...")])
        shown = [b for b in tl.blocks if b.type != "turn.header"]
        assert [b.type for b in shown] == ["user.prompt", PROVIDER_MESSAGE, "assistant.completion"]
        block = shown[1]
        assert native_item(block) == SYSTEM
        assert block.author == "system"
        assert block.meta == {"provider": "anthropic", "kind": "system"}
        assert block.text == f"[system message]\n{RULE}"

    def test_the_text_form_names_the_tools_added_or_removed(self) -> None:
        removed = {
            "role": "system",
            "content": [{**ADD_TOOL["content"][0], "type": "tool_removal"}],
        }  # type: ignore[dict-item]
        assert blocks.anthropic_system_message(ADD_TOOL).text == (
            "[system message]\n[tool added: lookup]"
        )
        assert blocks.anthropic_system_message(removed).text == (
            "[system message]\n[tool removed: lookup]"
        )
        assert blocks.anthropic_system_message({"role": "system", "content": "Be brief."}).text == (
            "[system message]\nBe brief."
        )

    @pytest.mark.parametrize(
        ("message", "field"),
        [
            ({"role": "system", "content": 5}, r"messages\[1\].*content"),
            ({"role": "system", "content": [3]}, r"messages\[1\].*content\[0\]"),
            ({"role": "system"}, r"messages\[1\].*content"),
            ({"role": "developer", "content": "x"}, r"messages\[1\].*role"),
        ],
    )
    def test_a_malformed_system_message_is_refused_naming_the_field(
        self, message: dict[str, Any], field: str
    ) -> None:
        with pytest.raises(InvalidBlockError, match=field):
            _imported([_user("hi"), message])


class TestAnthropicPayload:
    def test_sent_back_exactly_in_its_place(self) -> None:
        """A recorded conversation with a system message mid-history comes back as it was
        (the request's key order aside: the timeline builds its own message dicts)."""
        recorded = [
            _user("Review `def add(a, b)`."),
            _assistant("Looks fine."),
            _user("Review it again."),
            SYSTEM,
            _assistant("def add(a: int, b: int) -> int: ..."),
            _user("Now do `mul`."),
        ]
        sent = _sent(_imported(recorded))
        assert _plain(sent) == recorded
        assert sent[3] == SYSTEM  # the kept message itself, key order included

    def test_between_two_user_texts_the_user_message_splits_around_it(self) -> None:
        recorded = [_user("one"), SYSTEM, _user("two")]
        assert _plain(_sent(_imported(recorded))) == recorded

    def test_two_system_messages_stay_two_and_keep_their_order(self) -> None:
        second = {"role": "system", "content": [{"type": "text", "text": "State the cost."}]}
        recorded = [_user("one"), SYSTEM, second]
        assert _plain(_sent(_imported(recorded))) == recorded

    def test_after_a_tool_result_before_the_next_call(self) -> None:
        """A tool made available after a result: the result stays right after its call,
        the system message after the result, as recorded."""
        call = {"type": "tool_use", "id": "toolu_1", "name": "load", "input": {"id": "x"}}
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{}"}
        call2 = {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {}}
        recorded = [
            _user("load it"),
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
            ADD_TOOL,
            {"role": "assistant", "content": [call2]},
            {"role": "user", "content": [{**result, "tool_use_id": "toolu_2"}]},
        ]
        sent = _sent(_imported(recorded))
        assert [m["role"] for m in sent] == [
            "user",
            "assistant",
            "user",
            "system",
            "assistant",
            "user",
        ]
        assert sent[3] == ADD_TOOL

    def test_a_leading_system_message_follows_a_conversation_start_marker(self) -> None:
        """The first message of a payload is a user message: a system message opening the
        conversation comes right after a ``[conversation start]`` user message."""
        sent = _sent(_imported([SYSTEM, _user("hi")]))
        assert [m["role"] for m in sent] == ["user", "system", "user"]
        assert sent[0]["content"] == [{"type": "text", "text": "[conversation start]"}]

    def test_between_assistant_messages(self) -> None:
        recorded = [_user("hi"), _assistant("a"), SYSTEM, _assistant("b")]
        assert _plain(_sent(_imported(recorded))) == recorded


class TestOtherProviders:
    def test_chat_and_responses_get_a_user_side_note_in_its_place(self) -> None:
        tl = _imported([_user("Review it."), SYSTEM, _assistant("ok"), _user("next")])
        view = tl.render("sys")
        chat = view.to_openai()
        assert chat_errors(chat) == []
        assert chat[1] == {
            "role": "user",
            "content": [
                {"type": "text", "text": "Review it."},
                {"type": "text", "text": f"[system message]\n{RULE}"},
            ],
        }
        items = view.to_openai_responses()
        assert responses_errors(items) == []
        assert {"type": "input_text", "text": f"[system message]\n{RULE}"} in items[1]["content"]
        assert f"[system message]\n{RULE}" in view.to_text()


def _stream() -> tuple[Block, ...]:
    tl = _imported(
        [_user("one"), _assistant("a"), _user("two"), SYSTEM, _assistant("b"), _user("three")]
    )
    return tuple(b for b in tl.blocks if b.type != "turn.header")


class TestCheckpoints:
    def test_a_checkpoint_on_a_system_message_marks_its_last_content_block(self) -> None:
        shown = _stream()
        at = [b.type for b in shown].index(PROVIDER_MESSAGE)
        payload = to_anthropic("", shown, [at, len(shown) - 1], False)
        assert payload["messages"][3]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" in payload["messages"][5]["content"][-1]
        assert anthropic_errors(payload) == []
        plain = blocks.anthropic_system_message({"role": "system", "content": "Be brief."})
        payload = to_anthropic("", (blocks.user_prompt("hi"), plain), [1], False)
        assert payload["messages"][1]["content"] == [
            {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
        ]

    def test_a_checkpoint_on_a_system_message_takes_its_ttl(self) -> None:
        shown = _stream()
        at = [b.type for b in shown].index(PROVIDER_MESSAGE)
        payload = to_anthropic("", shown, [at, len(shown) - 1], False, cache_ttl="1h")
        assert payload["messages"][3]["content"][-1]["cache_control"] == {
            "type": "ephemeral",
            "ttl": "1h",
        }


class TestBudgetCompactionStore:
    def test_counted_in_the_estimate(self) -> None:
        tl = Timeline("b", token_counter=HeuristicCounter())
        tl.begin_turn()
        tl.append(blocks.user_prompt("hi"))
        tl.append(blocks.anthropic_system_message({"role": "system", "content": "x " * 2000}))
        view = tl.render("sys")
        assert view.tokens > 1_000
        for payload in (view.to_anthropic(), view.to_openai(), view.to_openai_responses()):
            assert payload_tokens(payload, HeuristicCounter()) <= view.tokens

    def test_compaction_summarizes_it_with_the_blocks_around_it(self) -> None:
        """Under a small budget a system message in an old turn goes into the summary
        like its neighbours, and every payload stays valid; in a kept turn it is sent."""
        tl = Timeline(
            "c", policy=CompactionPolicy(max_tokens=900), token_counter=HeuristicCounter()
        )
        for i in range(12):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"question {i} " + "w " * 40))
            rule = {"role": "system", "content": [{"type": "text", "text": f"Rule {i}."}]}
            tl.append(blocks.anthropic_system_message(rule))
            tl.append(blocks.assistant_completion(f"answer {i} " + "x " * 40))
            view = tl.render("sys")
            payload = view.to_anthropic()
            assert anthropic_errors(payload) == []
            assert chat_errors(view.to_openai()) == []
            kept = [m for m in payload["messages"] if m["role"] == "system"]
            assert {"role": "system", "content": [{"type": "text", "text": f"Rule {i}."}]} in kept
        assert any(b.type == "conv.range.summary" for b in tl.blocks)
        assert len(kept) < 12

    def test_persisted_and_reloaded_exactly(self) -> None:
        store = index_store.open("memory://")
        tl = _imported([_user("one"), ADD_TOOL, SYSTEM, _user("two")])
        tl.persist(store)
        again = Timeline.load(store, "s")
        assert list(again.blocks) == list(tl.blocks)
        assert again.render("").to_anthropic() == tl.render("").to_anthropic()
        hits = store.search("s", "annotations", limit=3)
        assert [h.block.type for h in hits] == [PROVIDER_MESSAGE]


@pytest.mark.parametrize(
    ("provider", "item"),
    [("chat", {"role": "system", "content": "x"}), ("anthropic", {"role": "user", "content": "x"})],
)
def test_a_provider_message_block_is_an_anthropic_system_message(
    provider: Any, item: dict[str, Any]
) -> None:
    """Only Anthropic has a message of a role the plan lacks: any other provider.message
    is refused on append, naming what it holds, and the timeline is unchanged."""
    tl = _imported([_user("hi")])
    before = tl.snapshot()
    block = blocks.provider_block(provider, item, kind="system", type=PROVIDER_MESSAGE)
    with pytest.raises(InvalidBlockError, match="role 'system' message"):
        tl.append(block)
    assert tl.snapshot() == before
