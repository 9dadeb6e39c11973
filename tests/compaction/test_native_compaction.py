"""Provider-native compaction as a policy mode (#26 item 5): the request asks the provider
to compact, the returned compaction block or item is recorded as the conversation's
summary and sent back exactly, and the library keeps its archive, search, read-back,
digest, cache checkpoints and budget ladder."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

import index_store
from timeline import (
    CompactionPolicy,
    NativeCompaction,
    PolicyError,
    TiktokenCounter,
    Timeline,
    blocks,
)
from timeline._model.block import CONV_RANGE_SUMMARY
from timeline._model.native import PROVIDER_COMPACTION

SYSTEM = "You are a coding agent."
Make = Callable[..., Timeline]
ANTHROPIC_ITEM = {
    "type": "compaction",
    "content": "Modules 0-3 are fixed; next: module 4.",
    "signature": "sig-1",
}
RESPONSES_ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA-opaque"}


def native(provider: str = "anthropic", budget: int = 20_000, **kw: Any) -> CompactionPolicy:
    return CompactionPolicy(max_tokens=budget, native=NativeCompaction(provider=provider, **kw))


def session(tl: Timeline, turns: int, chars: int = 400) -> list[str]:
    """Turns of a coding session; the tool results' paths."""
    paths = []
    for t in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t}: fix module {t}"))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{t}.py"}))
        body = f"contents of src/m{t}.py\n" + "x" * chars
        paths.append(
            tl.append(blocks.tool_result(call.call_id or "", body, tool_id="read_file")).path
        )
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    return paths


def compacted(tl: Timeline, item: dict[str, Any], provider: str = "anthropic") -> None:
    """A new turn whose reply starts with the provider's compaction."""
    tl.begin_turn()
    tl.append(blocks.user_prompt("turn 4: go on with module 4"))
    block = blocks.anthropic_compaction(item) if provider == "anthropic" else None
    if block is None:
        block = blocks.openai_compaction(item)
    tl.append(block)
    tl.append(blocks.assistant_completion("Continuing with module 4."))


class TestRequest:
    def test_anthropic_params_ask_for_the_compaction_edit(self, make_tl: Make) -> None:
        """The compaction edit with the policy's trigger (trigger_ratio of the budget),
        and the beta it needs; instructions and pausing passed as given."""
        policy = native(
            budget=100_000, instructions="Keep file paths.", pause_after_compaction=True
        )
        tl = make_tl(policy=policy)
        session(tl, 1)
        assert tl.render(SYSTEM).native_params == {
            "betas": ["compact-2026-01-12"],
            "context_management": {
                "edits": [
                    {
                        "type": "compact_20260112",
                        "trigger": {"type": "input_tokens", "value": 90_000},
                        "instructions": "Keep file paths.",
                        "pause_after_compaction": True,
                    }
                ]
            },
        }

    def test_anthropic_trigger_never_below_its_minimum(self) -> None:
        """Anthropic takes no trigger under 50,000 tokens: a smaller budget asks for
        50,000 (the library's own compaction at the budget comes first)."""
        edit = native(budget=20_000).native_params()["context_management"]["edits"][0]
        assert edit["trigger"] == {"type": "input_tokens", "value": 50_000}

    def test_responses_params_and_an_own_trigger(self, make_tl: Make) -> None:
        tl = make_tl(policy=native("responses", trigger_tokens=12_345))
        session(tl, 1)
        assert tl.render(SYSTEM).native_params == {
            "context_management": [{"type": "compaction", "compact_threshold": 12_345}]
        }

    def test_no_params_without_native_mode(self, make_tl: Make) -> None:
        tl = make_tl(policy=CompactionPolicy(max_tokens=20_000))
        session(tl, 1)
        assert tl.render(SYSTEM).native_params == {}

    def test_params_are_the_callers_own(self, make_tl: Make) -> None:
        tl = make_tl(policy=native())
        session(tl, 1)
        view = tl.render(SYSTEM)
        view.native_params["context_management"]["edits"].clear()
        assert view.native_params["context_management"]["edits"]

    @pytest.mark.parametrize(
        ("native_config", "message"),
        [
            ({"provider": "gemini"}, "compaction.native.provider: must be one of"),
            ({"provider": "anthropic", "trigger_tokens": 0}, "compaction.native.trigger_tokens"),
            ({"provider": "anthropic", "pause_after_compaction": "yes"}, "pause_after_compaction"),
        ],
    )
    def test_bad_settings_name_their_path(self, native_config: Any, message: str) -> None:
        with pytest.raises(PolicyError, match=message.replace(".", r"\.")):
            CompactionPolicy.from_mapping({"max_tokens": 20_000, "native": native_config})

    def test_loaded_from_a_mapping(self) -> None:
        policy = CompactionPolicy.from_mapping(
            {"max_tokens": 20_000, "native": {"provider": "responses", "trigger_tokens": 9_000}}
        )
        assert policy.native == NativeCompaction(provider="responses", trigger_tokens=9_000)


class TestRoundTrip:
    def test_the_anthropic_block_becomes_the_summary_and_is_sent_back_exactly(
        self, make_tl: Make
    ) -> None:
        """Everything before the compaction block is compacted (tier 'provider', no model
        called); the payload is our digest, then the block exactly as received."""
        tl = make_tl(policy=native())
        session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        view = tl.render(SYSTEM)
        stats = view.compaction
        assert stats is not None
        assert (stats.reason, stats.tier, stats.summarizer) == (
            "native",
            "provider",
            "native (anthropic)",
        )
        assert [b.type for b in view.blocks] == [
            CONV_RANGE_SUMMARY,
            PROVIDER_COMPACTION,
            "assistant.completion",
        ]
        messages = view.to_anthropic()["messages"]
        assert messages[1]["role"] == "assistant"
        assert messages[1]["content"][0] == ANTHROPIC_ITEM
        assert list(messages[1]["content"][0]) == list(ANTHROPIC_ITEM)  # key order kept

    def test_async_render_records_it_the_same_way(self, make_tl: Make) -> None:
        """``arender`` (with an async summarizer that must not be called) records it too."""
        called: list[Any] = []

        class Model:
            async def asummarize(self, request: Any) -> str:
                called.append(request)
                return "never"

        sync = make_tl(policy=native())
        session(sync, 4)
        compacted(sync, ANTHROPIC_ITEM)
        tl = make_tl(policy=native(), summarizer=Model())
        session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        view = asyncio.run(tl.arender(SYSTEM))
        assert view.compaction is not None and view.compaction.tier == "provider"
        assert not called
        assert view.to_anthropic() == sync.render(SYSTEM).to_anthropic()

    def test_the_responses_item_is_sent_back_exactly(self, make_tl: Make) -> None:
        tl = make_tl(policy=native("responses"))
        session(tl, 4)
        compacted(tl, RESPONSES_ITEM, "responses")
        view = tl.render(SYSTEM)
        assert view.compaction is not None and view.compaction.tier == "provider"
        assert RESPONSES_ITEM in view.to_openai_responses()

    def test_the_archive_stays_searchable_and_readable(self, make_tl: Make) -> None:
        """The compacted blocks stay in the timeline and the store; search finds them and
        read(path) brings them back; the summary names the paths to read; a loaded
        timeline renders the same payload."""
        tl = make_tl(policy=native())
        paths = session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        view = tl.render(SYSTEM)
        before = view.to_anthropic()
        assert all(tl.get(b.id) is b for b in tl.blocks)
        assert {p for p in paths} <= {b.path for b in tl.blocks}
        summary = view.blocks[0]
        assert "Read back:" in summary.text and "turn 0: fix module 0" in summary.text
        assert summary.meta["provider_compaction_id"] == view.blocks[1].id
        assert summary.meta["compaction_digest"]
        store = index_store.open("memory://")
        tl.persist(store)
        [stored] = store.read(tl.conversation_id, paths[0])
        assert stored.text.startswith("contents of src/m0.py")
        assert [h.path for h in store.search(tl.conversation_id, "src/m0.py contents")][:1] == [
            paths[0]
        ]
        again = Timeline.load(
            store, tl.conversation_id, policy=tl.policy, token_counter=tl.token_counter
        )
        assert again.render(SYSTEM).to_anthropic() == before

    def test_other_formats_see_the_digest_and_the_providers_summary(self, make_tl: Make) -> None:
        """Chat Completions and the text layout get both as text (the block is
        Anthropic's own)."""
        tl = make_tl(policy=native())
        session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        chat = json.dumps(tl.render(SYSTEM).to_openai())
        assert "[CONVERSATION SUMMARY]" in chat and ANTHROPIC_ITEM["content"] in chat
        assert '"type": "compaction"' not in chat

    def test_recorded_once(self, make_tl: Make) -> None:
        """The next render does not compact again, and later turns extend the stream
        after the provider's block (cache checkpoints on it as usual)."""
        tl = make_tl(policy=native())
        session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        tl.render(SYSTEM)
        session(tl, 1)
        view = tl.render(SYSTEM)
        assert view.compaction is None
        assert view.blocks[1].type == PROVIDER_COMPACTION
        marked = [
            p for m in view.to_anthropic()["messages"] for p in m["content"] if "cache_control" in p
        ]
        assert marked

    def test_without_native_mode_the_block_is_just_content(self, make_tl: Make) -> None:
        """The default policy records nothing: the block is sent in its place."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=20_000))
        session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        view = tl.render(SYSTEM)
        assert view.compaction is None
        assert view.blocks[0].type != CONV_RANGE_SUMMARY

    @pytest.mark.parametrize("incremental", [True, False])
    def test_never_between_a_call_and_its_result(self, make_tl: Make, incremental: bool) -> None:
        """A compaction block after a call still waiting for its result is not a valid
        cut: it stays content (found by the differential harness)."""
        tl = make_tl(policy=native("responses", budget=1_000), incremental=incremental)
        tl.begin_turn()
        tl.append(blocks.user_prompt("Fix the failing test in a.py"))
        tl.append(blocks.tool_call("read_file", {"path": "a.py"}))
        tl.render(SYSTEM)
        tl.append(blocks.openai_compaction(RESPONSES_ITEM))
        view = tl.render(SYSTEM)
        assert view.compaction is None
        assert [b.type for b in view.blocks][-1] == PROVIDER_COMPACTION

    def test_another_providers_block_is_not_recorded(self, make_tl: Make) -> None:
        tl = make_tl(policy=native("responses"))
        session(tl, 4)
        compacted(tl, ANTHROPIC_ITEM)
        assert tl.render(SYSTEM).compaction is None


class TestBudgetLadder:
    def test_the_provider_compacts_first_the_library_past_the_budget(self, make_tl: Make) -> None:
        """Between the provider's trigger and the budget the library leaves the prompt to
        the provider; past the budget it compacts on its own (the usual summary)."""
        budget = 6_000

        def run(policy: CompactionPolicy) -> list[Any]:
            tl = make_tl(policy=policy, token_counter=TiktokenCounter())
            out = []
            for _ in range(40):
                session(tl, 1, chars=1_200)
                view = tl.render(SYSTEM)
                out.append((view.tokens, view.compaction))
                if view.compaction is not None:
                    break
            return out

        ours = run(CompactionPolicy(max_tokens=budget))
        first = ours[-1]
        assert first[1] is not None and first[1].tokens_before <= budget
        assert first[1].tokens_before > 0.9 * budget
        theirs = run(native(budget=budget))
        done = theirs[-1][1]
        assert done is not None and done.tier == "summarize" and done.reason == "tokens"
        assert done.tokens_before > budget
        assert all(tokens <= budget for tokens, _ in theirs)
        assert len(theirs) > len(ours)
