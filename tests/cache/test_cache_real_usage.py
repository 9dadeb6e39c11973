"""The cache simulator (benchmarks/cache_sim.py) and the library's cache-break detection
against usage the provider recorded (tests/data/real_usage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.cache_sim import CacheBlock, CacheSimulator
from benchmarks.evaluate import OVERHEAD
from timeline import CompactionPolicy, Timeline, blocks
from timeline._tokens import TiktokenCounter

RECORDED = json.loads(
    (
        Path(__file__).parent.parent / "data" / "real_usage" / "anthropic_cache_messages.json"
    ).read_text()
)
COUNTER = TiktokenCounter()


def cache_blocks(request: dict[str, Any]) -> list[CacheBlock]:
    """A recorded request as the simulator takes it: the system prompt, then each
    content part, with its breakpoint's TTL."""
    out = [CacheBlock("system", "text", request["system"], COUNTER.count(request["system"]))]
    for message in request["messages"]:
        for part in message["content"]:
            ttl = (part.get("cache_control") or {}).get("ttl", "")
            tokens = COUNTER.count(part["text"]) + OVERHEAD
            out.append(CacheBlock(message["role"], part["type"], part["text"], tokens, ttl))
    return out


def test_the_simulator_reads_and_writes_as_the_provider_did() -> None:
    """The first request writes its prefix, the second reads exactly that and writes the
    rest: the simulator's split of the second request matches the recorded one."""
    sim = CacheSimulator()
    first, second = (sim.request(cache_blocks(r["request"])) for r in RECORDED["requests"])
    real = [r["usage"] for r in RECORDED["requests"]]
    assert (first.read, real[0]["cache_read_input_tokens"]) == (0, 0)
    assert first.written > 0 and real[0]["cache_creation_input_tokens"] > 0
    assert second.read == first.written  # as recorded: read 1,111 = written 1,111
    assert real[1]["cache_read_input_tokens"] == real[0]["cache_creation_input_tokens"]
    simulated = second.read / (second.read + second.written)
    recorded = real[1]["cache_read_input_tokens"] / (
        real[1]["cache_read_input_tokens"] + real[1]["cache_creation_input_tokens"]
    )
    assert abs(simulated - recorded) < 0.05, (simulated, recorded)


def replay(reads: list[int] | None = None) -> list[Any]:
    """The recorded conversation through a timeline, each request's recorded usage (its
    cache read replaced by ``reads``, the difference written instead, when given)
    recorded after its render."""
    requests = RECORDED["requests"]
    found: list[Any] = []
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=100_000), on_cache_break=found.append)
    system = requests[0]["request"]["system"]
    seen = 0
    for n, entry in enumerate(requests):
        for message in entry["request"]["messages"][seen:]:
            text = "".join(p["text"] for p in message["content"])
            if message["role"] == "user":
                tl.begin_turn()
                tl.append(blocks.user_prompt(text))
            else:
                tl.append(blocks.assistant_completion(text))
        seen = len(entry["request"]["messages"])
        tl.render(system)
        usage = dict(entry["usage"])
        if reads is not None:  # what was not read was written instead
            usage["cache_creation_input_tokens"] += usage["cache_read_input_tokens"] - reads[n]
            usage["cache_read_input_tokens"] = reads[n]
        tl.record_usage(usage)
    return found


def test_the_recorded_conversation_has_no_cache_break() -> None:
    """The provider read back what the first request cached: no break."""
    assert replay() == []


def test_a_second_request_reading_nothing_would_be_a_break() -> None:
    """The same conversation with the second read taken away: a break whose expected
    read is about the provider's own figure."""
    (brk,) = replay(reads=[0, 0])
    assert brk.cause == "unknown" and brk.read_tokens == 0
    assert abs(brk.expected_tokens - 1_111) <= 0.1 * 1_111
