"""The real cache: ``record_usage`` reads the providers' cache figures and reports a
request that read less than the previous one left cached (a cache break) with its
likely cause, through ``on_cache_break`` and in the stored state."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
import pytest

import index_store
from tests.helpers.cache_breaks import SYSTEM, Provider, conversation, step
from timeline import ClearingPolicy, CompactionPolicy, Timeline, blocks
from timeline._driver.memory_tools import TOOL_SPECS
from timeline._formats.reply import ModelReply, Usage, read_usage
from timeline._model.persistence import CacheBreak


def test_a_request_that_reads_what_the_last_one_cached_is_no_break() -> None:
    """Requests that read back the previous request's cached prefix: no break."""
    tl, found, _ = conversation()
    provider = Provider()
    for i in range(6):
        view = step(tl, i)
        assert tl.record_usage(provider.usage(view)) is None
    assert found == [] and tl.snapshot().state.cache_breaks == []
    usage = tl.snapshot().state.usage
    assert usage is not None and usage.cache_read_tokens == provider.read > 0


def test_a_compaction_is_reported_as_a_break_of_the_prefix() -> None:
    """After a compaction the provider can read back only the system prompt: a break,
    caused by the prefix changing at the summary, flagged as the library's own."""
    tl, found, _ = conversation(max_tokens=6_000)
    provider = Provider()
    for i in range(40):
        view = step(tl, i)
        honest = view.system_tokens if view.compaction is not None else None
        tl.record_usage(provider.usage(view, read=honest))
        if view.compaction is not None:
            break
    else:
        raise AssertionError("never compacted")
    (brk,) = found
    assert (brk.cause, brk.compaction, brk.block_index) == ("prefix_changed", True, 0)
    assert brk.path is not None and brk.path.startswith("su:")
    assert "compaction" in brk.detail
    assert brk.read_tokens == view.system_tokens < brk.expected_tokens
    assert tl.snapshot().state.cache_breaks == [brk]


def test_a_request_after_the_cache_expired() -> None:
    """Ten minutes between two requests (TTL 5 minutes) and nothing read: ttl_expired."""
    tl, found, clock = conversation()
    provider = Provider()
    tl.record_usage(provider.usage(step(tl, 0)))
    clock.now += timedelta(minutes=10)
    tl.record_usage(provider.usage(step(tl, 1), read=0))
    (brk,) = found
    assert brk.cause == "ttl_expired" and "600 s" in brk.detail
    assert brk.compaction is False and brk.block_index is None


def test_a_prefix_under_the_providers_minimum() -> None:
    """A short prompt was never cached (under 1,024 tokens): the next request reading
    nothing is explained by the minimum."""
    tl, found, _ = conversation()
    provider = Provider()
    system = "Be brief. " * 200  # about 600 tokens
    tl.record_usage(provider.usage(step(tl, 0, system=system)))
    tl.record_usage(provider.usage(step(tl, 1, system=system), read=0))
    (brk,) = found
    assert brk.cause == "below_minimum" and "1,024" in brk.detail


def test_the_minimum_depends_on_the_model() -> None:
    """Haiku 4.5 caches nothing under 4,096 tokens: a 2,000-token prefix read as nothing
    is below its minimum, where for an unknown model the cause is unknown."""
    for model, cause in (("claude-haiku-4-5-20251001", "below_minimum"), (None, "unknown")):
        tl, found, _ = conversation(model=model)
        provider = Provider()
        system = "Follow the rules. " * 400
        tl.record_usage(provider.usage(step(tl, 0, system=system)))
        tl.record_usage(provider.usage(step(tl, 1, system=system), read=0))
        assert [b.cause for b in found] == [cause]


def test_a_break_nothing_explains_is_unknown() -> None:
    """The prefix is unchanged, within the TTL, over the minimum, and still not read."""
    tl, found, _ = conversation()
    provider = Provider()
    tl.record_usage(provider.usage(step(tl, 0)))
    tl.record_usage(provider.usage(step(tl, 1), read=0))
    (brk,) = found
    assert brk.cause == "unknown" and "tools" in brk.detail


def test_a_changed_system_prompt_breaks_the_prefix() -> None:
    """A new system prompt: prefix_changed, before any block."""
    tl, found, _ = conversation()
    provider = Provider()
    tl.record_usage(provider.usage(step(tl, 0)))
    tl.record_usage(provider.usage(step(tl, 1, system=SYSTEM + "Today is Monday."), read=0))
    (brk,) = found
    assert (brk.cause, brk.block_index) == ("prefix_changed", None)
    assert "system prompt" in brk.detail


def test_a_block_the_user_hid_breaks_the_prefix_at_that_block() -> None:
    """Hiding an early block changes the prompt there: prefix_changed at that block,
    named by index and path, and not put down to the library's compaction."""
    tl, found, _ = conversation()
    provider = Provider()
    for i in range(3):
        view = step(tl, i)
        tl.record_usage(provider.usage(view))
    hidden = view.blocks[1]
    tl.hide([hidden.path], replacement_text="(an answer the user withdrew)")
    view = step(tl, 3)
    tl.record_usage(provider.usage(view, read=view.system_tokens + view.block_tokens[0]))
    (brk,) = found
    assert (brk.cause, brk.block_index, brk.path) == ("prefix_changed", 1, hidden.path)
    assert brk.compaction is False and "hidden" in brk.detail


def test_a_clearing_pass_is_reported_as_the_librarys_own_break() -> None:
    """Old tool output cleared to placeholders changes the prompt at the first cleared
    result: prefix_changed there, put down to the library's compaction."""
    found: list[CacheBreak] = []
    clearing = ClearingPolicy(keep_tool_results=1, clear_at_least_tokens=0)
    policy = CompactionPolicy(max_tokens=20_000, clearing=clearing)
    tl = Timeline("c", policy=policy, on_cache_break=found.append)
    provider = Provider()
    tl.begin_turn()
    tl.append(blocks.user_prompt("Build everything and tell me what failed."))
    for i in range(4):
        call = tl.append(blocks.tool_call("bash", {"command": f"make part{i}"}))
        tl.append(blocks.tool_result(call.call_id or "", f"part {i} ok\n" * 200, tool_id="bash"))
        tl.record_usage(provider.usage(tl.render(SYSTEM)))
    stats = tl.compact(SYSTEM)
    assert stats.tier == "clear" and found == []
    view = tl.render(SYSTEM)
    first = next(i for i, b in enumerate(view.blocks) if b.text.startswith("[cleared: "))
    read = view.system_tokens + sum(view.block_tokens[:first])
    tl.record_usage(provider.usage(view, read=read))
    (brk,) = found
    assert (brk.cause, brk.block_index, brk.compaction) == ("prefix_changed", first, True)
    assert brk.path == view.blocks[first].path and "cleared" in brk.detail


def test_changed_tool_definitions_break_the_prefix() -> None:
    """A tool added to the request changes the start of the cached prefix: prefix_changed,
    before any block, naming the tool definitions."""
    tl, found, _ = conversation()
    provider = Provider()
    tools = [dict(TOOL_SPECS["read_path"])]
    tl.begin_turn()
    tl.append(blocks.user_prompt("Read the parser for me. " * 10))
    tl.record_usage(provider.usage(tl.render(SYSTEM, tools=tools)))
    tl.append(blocks.assistant_completion("Done. " * 10))
    view = tl.render(SYSTEM, tools=[*tools, dict(TOOL_SPECS["compact_context"])])
    tl.record_usage(provider.usage(view, read=0))
    (brk,) = found
    assert (brk.cause, brk.block_index) == ("prefix_changed", None)
    assert "tool definitions" in brk.detail


def test_openai_figures_use_its_automatic_cache() -> None:
    """Chat Completions usage (cached tokens, no writes): a request that reads nothing of
    the previous prompt is a break."""
    tl, found, _ = conversation()
    first = step(tl, 0)
    tl.record_usage({"prompt_tokens": first.tokens, "prompt_tokens_details": {"cached_tokens": 0}})
    second = step(tl, 1)
    shared = first.system_tokens + sum(first.block_tokens[: first.stable_count])
    usage = {"prompt_tokens": second.tokens, "prompt_tokens_details": {"cached_tokens": shared}}
    assert tl.record_usage(usage) is None
    third = step(tl, 2)
    tl.record_usage({"prompt_tokens": third.tokens, "prompt_tokens_details": {"cached_tokens": 0}})
    (brk,) = found
    assert brk.cause == "unknown" and brk.written_tokens is None


def test_breaks_are_persisted_and_kept_bounded() -> None:
    """The latest breaks travel with the stored window (inspect reads them there); the
    state keeps the last 20."""
    tl, found, _ = conversation()
    provider = Provider()
    for i in range(25):
        tl.record_usage(provider.usage(step(tl, i), read=0))
    assert len(found) == 24
    store = index_store.open("memory://")
    tl.persist(store)
    loaded = Timeline.load(store, "c", policy=tl.policy)
    assert loaded.snapshot().state.cache_breaks == found[-20:]


def test_usage_without_cache_figures_only_calibrates() -> None:
    """prompt_tokens alone (the old call) calibrates and reports no break."""
    tl, found, _ = conversation()
    step(tl, 0)
    tl.record_usage(prompt_tokens=5_000)
    step(tl, 1)
    assert tl.record_usage(prompt_tokens=5_100) is None
    assert found == []
    usage = tl.snapshot().state.usage
    assert usage is not None and usage.prompt_tokens == 5_100
    assert usage.cache_read_tokens is None


def test_record_usage_needs_figures() -> None:
    """Neither a usage nor prompt_tokens, or a negative figure: a typed error."""
    tl, _, _ = conversation()
    step(tl, 0)
    with pytest.raises(Exception, match="record_usage needs"):
        tl.record_usage()
    with pytest.raises(Exception, match="cache_read_tokens"):
        tl.record_usage(prompt_tokens=10, cache_read_tokens=-1)


@pytest.mark.parametrize(
    ("usage", "figures"),
    [
        (
            {
                "input_tokens": 50,
                "cache_read_input_tokens": 3_000,
                "cache_creation_input_tokens": 400,
                "output_tokens": 12,
            },
            (3_450, 12, 3_000, 400),
        ),
        ({"input_tokens": 50, "output_tokens": 12}, (50, 12, None, None)),
        (
            {
                "prompt_tokens": 2_006,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 1_920},
            },
            (2_006, 3, 1_920, None),
        ),
        (
            {
                "input_tokens": 900,
                "output_tokens": 8,
                "input_tokens_details": {"cached_tokens": 768},
            },
            (900, 8, 768, None),
        ),
        ({"usage": {"prompt_tokens": 7, "completion_tokens": 1}}, (7, 1, None, None)),
    ],
)
def test_read_usage_reads_each_providers_figures(usage: Any, figures: tuple[Any, ...]) -> None:
    """Anthropic, Chat Completions and Responses usage (and a response carrying one)."""
    got = read_usage(usage)
    assert (
        got.prompt_tokens,
        got.completion_tokens,
        got.cache_read_tokens,
        got.cache_write_tokens,
    ) == figures


def test_sdk_objects_and_replies_carry_the_cache_figures() -> None:
    """The SDKs' own usage types, and ModelReply built from an SDK response, carry them."""
    anthropic = pytest.importorskip("anthropic")
    openai = pytest.importorskip("openai")
    a = anthropic.types.Usage(
        input_tokens=10,
        output_tokens=2,
        cache_read_input_tokens=2_000,
        cache_creation_input_tokens=5,
    )
    assert read_usage(a) == Usage(2_015, 2, 2_000, 5)
    o = openai.types.CompletionUsage(
        prompt_tokens=100,
        completion_tokens=4,
        total_tokens=104,
        prompt_tokens_details={"cached_tokens": 64},
    )
    assert read_usage(o) == Usage(100, 4, 64, None)
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "usage": msgspec.to_builtins(a.model_dump()),
    }
    assert ModelReply.from_anthropic(message).usage == Usage(2_015, 2, 2_000, 5)
