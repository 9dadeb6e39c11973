"""Recall: compacted blocks relevant to the newest prompt come back into the prompt, in
one labelled block after the stable stream, from memory and from the store."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from typing import Any

import pytest

import index_store
from timeline import (
    Block,
    ClearingPolicy,
    CompactionPolicy,
    PolicyError,
    RecallPolicy,
    StoreError,
    Timeline,
    blocks,
)

SYSTEM = "You remember what the two friends said."
FACT = "Caroline: I've been researching adoption agencies lately."
QUESTION = "What has Caroline been researching?"
WORDS = [f"w{i}" for i in range(2_000)]
Make = Callable[..., Timeline]


def policy(
    budget: int = 2_000, clearing: ClearingPolicy | None = None, **recall: Any
) -> CompactionPolicy:
    return CompactionPolicy(max_tokens=budget, clearing=clearing, recall=RecallPolicy(**recall))


def chat(tl: Timeline, turns: int = 12, per_turn: int = 10, store: Any = None) -> Block:
    """Two friends talking, a render after each message (persisted after each turn when
    ``store`` is given); the fact is said in the second turn. Returns the fact's block."""
    rng = random.Random(7)
    fact: Block | None = None
    for t in range(turns):
        if store is not None and t:
            tl.persist(store)
        tl.begin_turn()
        for i in range(per_turn):
            who = "Caroline" if i % 2 else "Melanie"
            text = f"{who}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
            if (t, i) == (1, 3):
                text = FACT
            made = blocks.user_prompt(text) if i % 2 else blocks.assistant_completion(text)
            stored = tl.append(made)
            fact = stored if text == FACT else fact
            tl.render(SYSTEM)
    assert fact is not None
    return fact


def ask(tl: Timeline, question: str = QUESTION) -> Any:
    tl.append(blocks.user_prompt(question))
    return tl.render(SYSTEM)


def ids(items: Any) -> list[str]:
    return [b.id for b in items]


class CountingStore:
    """A store that counts its searches (sync and async) and may fail them."""

    def __init__(self, inner: Any, fail: bool = False) -> None:
        self.inner = inner
        self.fail = fail
        self.searches: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, conversation_id: str, query: str, limit: int = 10) -> Any:
        self.searches.append("sync")
        if self.fail:
            raise StoreError("the store is down", conversation_id=conversation_id)
        return self.inner.search(conversation_id, query, limit)

    async def asearch(self, conversation_id: str, query: str, limit: int = 10) -> Any:
        self.searches.append("async")
        return self.inner.search(conversation_id, query, limit)


class TestWhatComesBack:
    def test_a_compacted_fact_comes_back_when_asked(self, make_tl: Make) -> None:
        """The fact said early and compacted away is back in the prompt when a question
        names it: in view.recalled, quoted in the last block with its path and turn."""
        tl = make_tl(policy=policy())
        fact = chat(tl)
        assert fact.id not in ids(tl.render(SYSTEM).blocks)
        view = ask(tl)
        assert fact.id in ids(view.recalled)
        last = view.blocks[-1]
        assert last.type == "conv.recalled"
        assert last.text.startswith("Earlier parts of this conversation")
        heading = f"--- {fact.path} | turn {fact.turn_id} | Thursday 1 January 2026 | user ---"
        assert f"{heading}\n{FACT}" in last.text
        assert FACT in view.to_text()
        assert view.tokens <= 2_000

    def test_recall_is_on_by_default(self, make_tl: Make) -> None:
        """A policy that says nothing about recall recalls the compacted fact."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000))
        fact = chat(tl)
        assert fact.id in ids(ask(tl).recalled)

    def test_without_recall_nothing_comes_back(self, make_tl: Make) -> None:
        """recall=None: no recalled block, view.recalled empty."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=2_000, recall=None))
        chat(tl)
        view = ask(tl)
        assert view.recalled == ()
        assert "conv.recalled" not in [b.type for b in view.blocks]
        assert FACT not in view.to_text()

    def test_what_is_shown_is_never_recalled(self, make_tl: Make) -> None:
        """A question about a message still in view recalls other blocks, not that one."""
        tl = make_tl(policy=policy())
        chat(tl, turns=4)
        tl.begin_turn()
        said = tl.append(blocks.user_prompt("Melanie: my sister adopted a greyhound"))
        view = ask(tl, "Who adopted a greyhound?")
        assert said.id in ids(view.blocks)
        assert said.id not in ids(view.recalled)

    def test_nothing_comes_back_for_words_already_in_view(self, make_tl: Make) -> None:
        """When every word of the question is in view (the fact was said again lately),
        nothing is recalled and the store is not searched: recall only brings back what
        the prompt does not show."""
        store = CountingStore(index_store.open("memory://"))
        tl = make_tl(policy=policy())
        fact = chat(tl, store=store)
        tl.append(blocks.assistant_completion("Melanie: Caroline is still researching."))
        store.searches.clear()
        view = ask(tl)
        assert (view.recalled, store.searches) == ((), [])
        assert fact.id not in ids(view.blocks)

    def test_a_question_of_stop_words_only_recalls_nothing(self, make_tl: Make) -> None:
        """A prompt without a content word ("What is it?") searches nothing."""
        tl = make_tl(policy=policy())
        chat(tl)
        assert ask(tl, "What is it?").recalled == ()

    def test_the_agents_newest_call_joins_the_query(self, make_tl: Make) -> None:
        """After the prompt, the agent's newest tool call is part of the query: what was
        said about the file it opens comes back."""
        tl = make_tl(policy=policy())
        chat(tl, turns=2)
        note = tl.append(blocks.assistant_completion("Noted: billing.py rounds half-up."))
        chat(tl, turns=10)
        tl.append(blocks.user_prompt("Fix the failing test"))
        tl.append(blocks.tool_call("read_file", {"path": "src/billing.py"}))
        view = tl.render(SYSTEM)
        assert note.id in ids(view.recalled)

    def test_an_answered_call_leaves_the_query(self, make_tl: Make) -> None:
        """Once the call has its result, the result is in view and the query is the
        prompt again: what was said about the file the agent opened is not brought back
        for the call alone."""
        tl = make_tl(policy=policy())
        chat(tl, turns=2)
        note = tl.append(blocks.assistant_completion("Noted: billing.py rounds half-up."))
        chat(tl, turns=10)
        tl.append(blocks.user_prompt("Fix the failing test"))
        call = tl.append(blocks.tool_call("read_file", {"path": "src/billing.py"}))
        tl.append(blocks.tool_result(call.call_id or "", "def total(): ..."))
        view = tl.render(SYSTEM)
        assert note.id not in ids(view.recalled)

    def test_a_long_result_comes_back_by_its_matching_lines(self, make_tl: Make) -> None:
        """A long tool result is quoted by the lines that match the question, gaps
        marked, under a heading naming the call; view.recalled has the call and result."""
        tl = make_tl(policy=policy(budget=4_000))
        tl.begin_turn()
        tl.append(blocks.user_prompt("Look at the module"))
        call = tl.append(blocks.tool_call("read_file", {"path": "src/settings.py"}))
        lines = [f"OPTION_{n} = {n}  # w{n} w{n + 1}" for n in range(200)]
        lines[120] = "MAX_RETRIES = 7  # how often a request is tried"
        result = tl.append(blocks.tool_result(call.call_id or "", "\n".join(lines)))
        chat(tl, turns=8)
        view = ask(tl, "What is MAX_RETRIES set to?")
        assert ids(view.recalled) == [call.id, result.id]
        text = view.blocks[-1].text
        assert 'result of read_file(path="src/settings.py")' in text
        assert "[...]\nMAX_RETRIES = 7  # how often a request is tried\n[...]" in text
        assert "OPTION_3 = 3" not in text

    def test_a_cleared_result_comes_back(self, make_tl: Make) -> None:
        """A tool result the clearing tier shows as a one-line placeholder is part of the
        archive too: asked about, its matching lines come back."""
        clearing = ClearingPolicy(keep_tool_results=1, dedupe_reads=False)
        tl = make_tl(policy=policy(budget=3_000, clearing=clearing))
        tl.begin_turn()
        tl.append(blocks.user_prompt("Read the modules"))
        results = []
        for n in range(7):
            call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{n}.py"}))
            body = "\n".join(f"LIMIT_{n}_{k} = {k}" for k in range(120))
            results.append(tl.append(blocks.tool_result(call.call_id or "", body)))
            tl.render(SYSTEM)
        assert results[0].id in tl.cleared_ids
        view = ask(tl, "What is LIMIT_0_17?")
        assert results[0].id in ids(view.recalled)
        assert "LIMIT_0_17 = 17" in view.blocks[-1].text

    def test_hidden_blocks_are_never_recalled(self, make_tl: Make) -> None:
        """A block the caller hid stays out of recall once compacted too."""
        tl = make_tl(policy=policy())
        fact = chat(tl, turns=2)
        tl.hide([fact.path])
        chat(tl, turns=10)
        assert fact.id not in ids(ask(tl).recalled)


class TestPlacementAndBudget:
    def test_the_recalled_block_follows_the_cached_prefix(self, make_tl: Make) -> None:
        """The recalled block opens the tail: after every cache checkpoint, outside the
        stable stream; the payload before it is the one a render without recall sends."""
        with_recall = make_tl(policy=policy())
        without = make_tl(policy=CompactionPolicy(max_tokens=2_000, recall=None))
        chat(with_recall)
        chat(without)
        view, plain = ask(with_recall), ask(without)
        at = len(view.blocks) - 1
        assert view.stable_count == at and max(view.cache_points) < at
        assert view.cache_points == plain.cache_points
        messages, sent = view.to_anthropic()["messages"], plain.to_anthropic()["messages"]
        *content, recalled = messages[-1]["content"]
        assert recalled["text"].startswith("[RECALLED FROM EARLIER IN THE CONVERSATION]\n")
        assert "cache_control" not in recalled
        assert [*messages[:-1], {**messages[-1], "content": content}] == sent

    def test_every_payload_fits_and_is_counted(self, make_tl: Make) -> None:
        """With a third of the budget for recall, every payload is within view.tokens,
        and view.tokens (the recalled block included) within the budget."""
        from timeline._tokens.payload import payload_tokens

        tl = Timeline("c1", policy=policy(budget=1_500, share=0.3))
        chat(tl)
        view = ask(tl)
        assert view.recalled
        sizes = [payload_tokens(view.to_anthropic()), payload_tokens(view.to_openai())]
        sizes += [payload_tokens(view.to_openai_responses()), payload_tokens(view.to_text())]
        assert max(sizes) <= view.tokens <= 1_500
        assert view.block_tokens[-1] <= 0.3 * 1_500

    def test_a_forced_render_recalls_nothing(self, make_tl: Make) -> None:
        """force_sanitize (the provider said the prompt was too long) leaves recall out."""
        tl = make_tl(policy=policy())
        chat(tl)
        tl.append(blocks.user_prompt(QUESTION))
        assert tl.render(SYSTEM).recalled
        assert tl.render(SYSTEM, force_sanitize=True).recalled == ()

    def test_renders_are_deterministic(self, make_tl: Make) -> None:
        """The same conversation recalls the same blocks, byte for byte."""
        views = []
        for _ in range(2):
            tl = make_tl(policy=policy())
            chat(tl)
            views.append(ask(tl))
        assert views[0].to_anthropic() == views[1].to_anthropic()
        assert views[0].recalled == views[1].recalled


class TestArchive:
    def test_recalled_from_the_store_after_load(self, store: Any) -> None:
        """Persisted after every turn and loaded back, the timeline holds only its window:
        the fact comes back from the store's turn log (memory, SQLite, PostgreSQL)."""
        tl = Timeline("c1", policy=policy())
        fact = chat(tl, store=store)
        tl.persist(store)
        again = Timeline.load(store, "c1", policy=policy())
        assert again.blocks[0].type == "conv.range.summary"
        view = ask(again)
        assert fact.id in ids(view.recalled)
        assert FACT in view.blocks[-1].text

    def test_the_async_render_awaits_the_async_search(self) -> None:
        """arender searches the store with asearch, never the blocking search."""
        store = CountingStore(index_store.open("memory://"))
        tl = Timeline("c1", policy=policy())
        fact = chat(tl, store=store)
        tl.append(blocks.user_prompt(QUESTION))
        store.searches.clear()
        view = asyncio.run(tl.arender(SYSTEM))
        assert store.searches == ["async"]
        assert fact.id in ids(view.recalled)

    def test_nothing_is_searched_again_while_nothing_changed(self) -> None:
        """Renders with the same question and archive reuse the search: a reply appended
        changes nothing; a new question searches again."""
        store = CountingStore(index_store.open("memory://"))
        tl = Timeline("c1", policy=policy())
        chat(tl, store=store)
        tl.append(blocks.user_prompt(QUESTION))
        store.searches.clear()
        first = tl.render(SYSTEM)
        again = tl.render(SYSTEM)
        tl.append(blocks.assistant_completion("Let me think."))
        third = tl.render(SYSTEM)
        assert store.searches == ["sync"]
        assert first.recalled == again.recalled == third.recalled
        ask(tl, "What did Melanie say about w5?")
        assert store.searches == ["sync", "sync"]

    def test_a_failing_store_search_recalls_from_memory(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A store error during recall is logged; the render goes on with what memory
        holds (recall never stops the agent)."""
        store = CountingStore(index_store.open("memory://"), fail=True)
        tl = Timeline("c1", policy=policy())
        chat(tl, store=store)
        store.searches.clear()
        with caplog.at_level(logging.WARNING, logger="timeline"):
            view = ask(tl)
        assert store.searches == ["sync"]
        assert "the store search failed (StoreError)" in caplog.text
        assert view.tokens <= 2_000


class TestPolicy:
    def test_loaded_from_a_mapping(self) -> None:
        """from_mapping reads a recall section like clearing; errors name the field."""
        loaded = CompactionPolicy.from_mapping({"max_tokens": 8_000, "recall": {"share": 0.2}})
        assert loaded.recall == RecallPolicy(share=0.2)
        assert CompactionPolicy.from_mapping({"max_tokens": 8_000}).recall == RecallPolicy()
        assert CompactionPolicy.from_mapping({"max_tokens": 8_000, "recall": None}).recall is None
        with pytest.raises(PolicyError, match=r"compaction\.recall\.share: must be in \(0, 1\)"):
            CompactionPolicy.from_mapping({"max_tokens": 8_000, "recall": {"share": 1.5}})
        with pytest.raises(PolicyError, match=r"max_blocks: must be a positive integer"):
            RecallPolicy(max_blocks=0)
        with pytest.raises(PolicyError, match="recall: must be a RecallPolicy or None"):
            CompactionPolicy(max_tokens=8_000, recall={"share": 0.2})  # type: ignore[arg-type]
