"""The cache-warm LLM summary (#26 item 4): the summary request is the conversation's own
prompt as last sent plus one instruction, so the provider serves it from its cache."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.cache_sim import CacheBlock, CacheSimulator
from timeline import (
    AsyncCacheWarmSummarizer,
    Block,
    CacheWarmSummarizer,
    CompactionPolicy,
    LLMSummarizer,
    SummaryRequest,
    TiktokenCounter,
    Timeline,
    blocks,
)
from timeline._compaction.summarizers.cache_warm import Provider, instruction

SYSTEM = "You are a coding agent. " + "Follow the house style and test every change. " * 150
SUMMARY = "## Goal\nFix the retry loop.\n## Next Steps\n1. Run the tests."
Make = Callable[..., Timeline]


def session(tl: Timeline, turns: range, render: bool = True) -> list[dict[str, Any]]:
    """Turns of a coding session, rendered after every result (the payloads sent)."""
    sent = []
    for t in turns:
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t}: please fix module {t} " + "detail " * 60))
        for k in range(2):
            call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{t}_{k}.py"}))
            body = "\n".join(f"def f{t}_{k}_{i}(x): return x + {i}" for i in range(60))
            tl.append(blocks.tool_result(call.call_id or "", body, tool_id="read_file"))
            if render:
                sent.append(tl.render(SYSTEM).to_anthropic())
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    return sent


def timeline(make_tl: Make, summarizer: Any) -> Timeline:
    return make_tl(
        policy=CompactionPolicy(max_tokens=12_000),
        summarizer=summarizer,
        token_counter=TiktokenCounter(),
    )


def without_cache_control(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with every ``cache_control`` removed (what the cache keys on)."""
    out = json.loads(json.dumps(payload))
    for part in [*out.get("system", []), *(p for m in out["messages"] for p in m["content"])]:
        part.pop("cache_control", None)
    return out


def first_compaction(make_tl: Make, provider: Provider = "anthropic") -> tuple[Any, Any, Any]:
    """(the request the summarizer sent, the payload rendered just before, the stats)."""
    asked: list[dict[str, Any]] = []

    def complete(request: dict[str, Any]) -> str:
        asked.append(request)
        return SUMMARY

    tl = timeline(make_tl, CacheWarmSummarizer(complete, provider=provider))
    previous: Any = None
    for t in range(40):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t}: please fix module {t} " + "detail " * 60))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{t}.py"}))
        body = "\n".join(f"def f{t}_{i}(x): return x + {i}" for i in range(60))
        tl.append(blocks.tool_result(call.call_id or "", body, tool_id="read_file"))
        view = tl.render(SYSTEM)
        if asked:
            return asked[0], previous, view.compaction
        previous = {
            "anthropic": view.to_anthropic,
            "openai": view.to_openai,
            "responses": view.to_openai_responses,
        }[provider]()
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    raise AssertionError("no compaction")


class TestRequest:
    def test_the_request_is_the_last_prompt_plus_an_instruction(self, make_tl: Make) -> None:
        """The summary request repeats the last payload sent, message for message, then
        asks for the summary in a final user turn."""
        request, previous, stats = first_compaction(make_tl)
        assert stats is not None and stats.summarizer == "cache-warm"
        assert stats.summarizer_error is None
        sent = without_cache_control(request)
        before = without_cache_control(previous)
        assert sent["system"] == before["system"]
        n = len(before["messages"])
        assert sent["messages"][: n - 1] == before["messages"][: n - 1]
        last = sent["messages"][-1]
        assert last["role"] == "user"
        assert last["content"][-1]["text"].startswith("[SUMMARY REQUEST] Summarize the")

    def test_breakpoints_on_the_system_prompt_and_the_last_conversation_block(
        self, make_tl: Make
    ) -> None:
        """Two breakpoints: the system prompt, and the last block of the conversation
        (its lookback finds the entry the last request wrote); none on the instruction."""
        request, _, _ = first_compaction(make_tl)
        marked = [p for m in request["messages"] for p in m["content"] if "cache_control" in p]
        assert "cache_control" in request["system"][0]
        assert len(marked) == 1 and marked[0]["type"] == "tool_result"
        assert "cache_control" not in request["messages"][-1]["content"][-1]

    def test_the_instruction_names_where_the_summary_stops(self, make_tl: Make) -> None:
        """The model sees everything, so the instruction quotes the first message that
        stays verbatim after the compaction."""
        request, _, _ = first_compaction(make_tl)
        text = request["messages"][-1]["content"][-1]["text"]
        assert ', up to (not including) the message that starts "turn ' in text
        assert "stay in the context verbatim" in text
        assert "Do not continue the conversation" in text

    @pytest.mark.parametrize("provider", ["openai", "responses"])
    def test_openai_requests_repeat_the_last_prompt_too(
        self, make_tl: Make, provider: Provider
    ) -> None:
        """Chat Completions and Responses: the last request's messages (or input items),
        then the instruction (their cache needs no breakpoints)."""
        request, previous, _ = first_compaction(make_tl, provider)
        key = "messages" if provider == "openai" else "input"
        assert list(request) == [key]
        sent = request[key]
        assert sent[: len(previous) - 1] == previous[: len(previous) - 1]
        assert "[SUMMARY REQUEST]" in json.dumps(sent[-1])

    def test_async_form(self, make_tl: Make) -> None:
        """``AsyncCacheWarmSummarizer`` under ``arender`` sends the same request."""
        asked: list[dict[str, Any]] = []

        async def complete(request: dict[str, Any]) -> str:
            asked.append(request)
            return SUMMARY

        async def run() -> Any:
            tl = timeline(make_tl, AsyncCacheWarmSummarizer(complete))
            session(tl, range(12), render=False)
            return (await tl.arender(SYSTEM)).compaction

        stats = asyncio.run(run())
        assert stats is not None and stats.summarizer == "cache-warm" and asked
        assert asked[0]["messages"][-1]["content"][-1]["text"].startswith("[SUMMARY REQUEST]")


def simulated_share(make_tl: Make, summarizer: Callable[[list[Any]], Any]) -> float:
    """Share of the summary requests' tokens a simulated Anthropic cache served, the
    session's own requests sent through the same cache in order."""
    counter = TiktokenCounter()
    sim = CacheSimulator()
    shares: list[tuple[int, int]] = []
    asked: list[dict[str, Any]] = []
    tl = timeline(make_tl, summarizer(asked))
    for t in range(30):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t}: please fix module {t} " + "detail " * 60))
        call = tl.append(blocks.tool_call("read_file", {"path": f"src/m{t}.py"}))
        body = "\n".join(f"def f{t}_{i}(x): return x + {i}" for i in range(60))
        tl.append(blocks.tool_result(call.call_id or "", body, tool_id="read_file"))
        view = tl.render(SYSTEM)
        for request in asked:
            result = sim.request(cache_blocks(request, counter))
            shares.append((result.read, result.tokens))
        asked.clear()
        sim.request(cache_blocks(view.to_anthropic(), counter))
        tl.append(blocks.assistant_completion(f"Fixed module {t}."))
    assert shares
    return sum(r for r, _ in shares) / sum(n for _, n in shares)


def cache_blocks(request: dict[str, Any], counter: TiktokenCounter) -> list[CacheBlock]:
    out = []
    for s in request.get("system", []):
        out.append(CacheBlock("system", "text", s["text"], counter.count(s["text"]), ttl(s)))
    for m in request["messages"]:
        for p in m["content"]:
            text = json.dumps({k: v for k, v in p.items() if k != "cache_control"})
            out.append(CacheBlock(m["role"], p["type"], text, counter.count(text), ttl(p)))
    return out


def ttl(part: dict[str, Any]) -> str:
    control = part.get("cache_control")
    return "" if control is None else str(control.get("ttl", "5m"))


def test_most_of_the_summary_request_is_served_from_cache(make_tl: Make) -> None:
    """In the benchmark's cache simulation, the cache-warm request is served almost all
    from cache; the transcript request of LLMSummarizer not at all."""

    def warm(asked: list[Any]) -> Any:
        return CacheWarmSummarizer(lambda r: asked.append(r) or SUMMARY)

    def transcript(asked: list[Any]) -> Any:
        def complete(system: str, prompt: str) -> str:
            asked.append(
                {
                    "system": [{"type": "text", "text": system, "cache_control": {}}],
                    "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
                }
            )
            return SUMMARY

        return LLMSummarizer(complete)

    assert simulated_share(make_tl, warm) > 0.85  # 0.90 here: new blocks and the instruction
    assert simulated_share(make_tl, transcript) == 0.0


def test_the_cache_warm_instruction_names_a_blank_block_by_its_type() -> None:
    """A block with no text to quote is named by its type in the instruction; one with
    text by its first line."""
    blank = Block(type="user.prompt", text=" \n ", id="p1")
    request = SummaryRequest(kind="turn_prefix", blocks=(blank,), context=(blank,))
    assert "from the user.prompt block. Say what" in instruction(request, request.context)
    ask = Block(type="user.prompt", text="\n fix the build \n", id="p2")
    request = SummaryRequest(kind="turn_prefix", blocks=(ask,), context=(ask,))
    assert 'from the message that starts "fix the build". Say' in (
        instruction(request, request.context)
    )


def test_a_turn_prefix_instruction_quotes_the_first_message_it_covers() -> None:
    """The cache-warm instruction for a split turn's prefix names where the summary
    starts by quoting its first message; saying only "its first message" (or nothing)
    would leave the model to guess which turn is meant."""
    ask = Block(type="user_prompt", text="Rename the retry helper everywhere.", id="p1")
    step = Block(type="assistant_completion", text="Renaming it now.", id="a1")
    request = SummaryRequest(kind="turn_prefix", blocks=(ask,), context=(ask, step))
    text = instruction(request, request.context)
    assert 'from the message that starts "Rename the retry helper everywhere."' in text
    assert 'up to (not including) the message that starts "Renaming it now."' in text
