"""A summarizer that ignores its limit (a model asked for 200 tokens that writes 10,000)
never stops the agent: its summary is cut to the request's cap (its first lines kept), the
render fits its budget, and a warning is logged."""

from __future__ import annotations

import asyncio
import logging

import pytest

from timeline import CompactionPolicy, LLMSummarizer, SummaryRequest, Timeline, blocks

LINES = [f"line {i}: the deploy key rotated on host-{i}" for i in range(2000)]


class _Verbose:
    """Writes about 20,000 tokens whatever ``max_tokens`` says."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return "\n".join(LINES)


class _AsyncVerbose:
    async def asummarize(self, request: SummaryRequest) -> str:
        return "\n".join(LINES)


def _turn(tl: Timeline, i: int) -> None:
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"question {i} " + "word " * 60))
    tl.append(blocks.assistant_completion(f"answer {i} " + "word " * 60))


def test_a_summary_over_its_cap_is_cut_and_every_render_fits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Thirty turns at a 1,000-token budget render within it; the summary holds the
    summarizer's first lines only, within the cap it was asked for."""
    summarizer = _Verbose()
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1000), summarizer=summarizer)
    with caplog.at_level(logging.WARNING, logger="timeline"):
        for i in range(30):
            _turn(tl, i)
            view = tl.render("sys")
            assert view.tokens <= 1000
    assert summarizer.requests, "the test needs a compaction"
    summary = next(b for b in tl.blocks if b.type.endswith("summary"))
    assert LINES[0] in summary.text
    assert LINES[-1] not in summary.text
    assert len(summary.text) < 4 * 1000
    assert "summary over its cap" in caplog.text


def test_arender_cuts_an_async_summary_over_its_cap() -> None:
    """The async path cuts too: no BudgetError from an async summarizer that overruns."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1000), summarizer=_AsyncVerbose())

    async def run() -> int:
        for i in range(30):
            _turn(tl, i)
            view = await tl.arender("sys")
            assert view.tokens <= 1000
        return sum(1 for b in tl.blocks if b.type.endswith("summary"))

    assert asyncio.run(run()) >= 1


def test_a_model_summary_with_the_lists_appended_stays_within_its_cap(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An LLMSummarizer whose model writes right up to the cap and drops the user's
    requests and the file lists: the library appends them within the cap itself (the
    model's text gives way, at most to half the room), so nothing is cut afterwards."""
    written: list[int] = []

    def complete(system: str, prompt: str) -> str:
        limit = int(prompt.split("under about ")[1].split()[0]) if "under about " in prompt else 400
        text = "\n".join(
            f"- point {i}: the cache key moved to shard {i}" for i in range(limit // 10)
        )
        written.append(len(text))
        return text

    tl = Timeline(
        "c", policy=CompactionPolicy(max_tokens=4_000), summarizer=LLMSummarizer(complete)
    )
    with caplog.at_level(logging.WARNING, logger="timeline"):
        for i in range(30):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"request {i}: please look at module_{i}"))
            call = tl.append(blocks.tool_call("read_file", {"path": f"src/module_{i}.py"}))
            tl.append(blocks.tool_result(call.call_id or "", "x = 1\n" * 80, tool_id="read_file"))
            tl.append(blocks.assistant_completion(f"done {i}"))
            assert tl.render("sys").tokens <= 4_000
    summaries = [b for b in tl.blocks if b.type == "conv.range.summary"]
    assert written and summaries
    text = summaries[-1].text
    assert "## User Requests (verbatim)" in text and "1. request 0:" in text
    assert "- point 0:" in text
    assert tl.block_tokens(summaries[-1]) <= (tl.policy.summary_max_tokens or 400)
    assert "summary over its cap" not in caplog.text
