"""Prompt-cache control of 2026 (#26 item 3): Anthropic TTLs on ``cache_control`` with the
mixed-TTL ordering rule, and OpenAI's ``prompt_cache_key`` (a stable key per
conversation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from timeline import CompactionPolicy, PolicyError, RenderedContext, Timeline, blocks

SYSTEM = "You are a careful agent."
Make = Callable[..., Timeline]


def rendered(make_tl: Make, conversation: str = "c1", **kw: Any) -> RenderedContext:
    """A render with a summary anchor and a tail: three breakpoints besides the system's."""
    tl = make_tl(conversation, policy=CompactionPolicy(max_tokens=2_000), **kw)
    for t in range(8):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"task {t}: " + "word " * 80))
        call = tl.append(blocks.tool_call("bash", {"command": f"make {t}"}))
        tl.append(blocks.tool_result(call.call_id or "", "ok " * 150, tool_id="bash"))
        tl.append(blocks.assistant_completion(f"done {t}"))
    view = tl.render(SYSTEM)
    assert view.compaction is not None and len(view.cache_points) >= 2
    return view


def ttls(payload: dict[str, Any]) -> list[str | None]:
    """The ``ttl`` of every ``cache_control`` in payload order (None: none named)."""
    out = [s["cache_control"].get("ttl") for s in payload.get("system", [])]
    for m in payload["messages"]:
        out += [p["cache_control"].get("ttl") for p in m["content"] if "cache_control" in p]
    return out


class TestAnthropicTtl:
    def test_no_ttl_by_default(self, make_tl: Make) -> None:
        """Without ``cache_ttl`` no ``ttl`` is sent (the provider's 5 minutes), as before."""
        view = rendered(make_tl)
        payload = view.to_anthropic()
        assert set(ttls(payload)) == {None}
        assert payload == view.to_anthropic(cache_ttl=None)

    @pytest.mark.parametrize("ttl", ["5m", "1h"])
    def test_one_ttl_on_every_breakpoint(self, make_tl: Make, ttl: str) -> None:
        """``cache_ttl="1h"`` (or ``"5m"``) puts that ``ttl`` on every breakpoint, the
        system prompt's included; nothing else changes."""
        view = rendered(make_tl)
        payload = view.to_anthropic(cache_ttl=ttl)  # type: ignore[arg-type]
        assert ttls(payload) == [ttl] * (1 + len(view.cache_points))
        plain = view.to_anthropic()
        for request in (payload, plain):
            for part in (p for m in request["messages"] for p in m["content"]):
                part.pop("cache_control", None)
        assert payload["messages"] == plain["messages"]

    def test_per_role_ttls(self, make_tl: Make) -> None:
        """A long-lived prefix and a short-lived tail: the system prompt and the
        conversation's breakpoints 1h, the last one (it moves at every request) 5m."""
        view = rendered(make_tl)
        payload = view.to_anthropic(cache_ttl={"system": "1h", "messages": "1h", "tail": "5m"})
        n = len(view.cache_points)
        assert ttls(payload) == ["1h"] * n + ["5m"]

    def test_a_longer_ttl_never_follows_a_shorter_one(self, make_tl: Make) -> None:
        """Anthropic refuses a 1h breakpoint after a 5m one: asked for a 1h tail after a
        5m system prompt, every earlier breakpoint gets 1h too."""
        view = rendered(make_tl)
        payload = view.to_anthropic(cache_ttl={"system": "5m", "tail": "1h"})
        assert ttls(payload) == ["1h"] * (1 + len(view.cache_points))
        mixed = view.to_anthropic(cache_ttl={"messages": "1h"})
        order = ttls(mixed)
        assert order[:-1] == ["1h"] * (len(order) - 1) and order[-1] is None

    def test_incremental_equals_from_scratch(self, make_tl: Make) -> None:
        """The incremental payload with TTLs equals the reference engine's."""
        asked: Any = {"system": "1h", "messages": "1h", "tail": "5m"}
        fast = rendered(make_tl).to_anthropic(cache_ttl=asked)
        slow = rendered(make_tl, incremental=False).to_anthropic(cache_ttl=asked)
        assert fast == slow

    @pytest.mark.parametrize(
        ("asked", "message"),
        [
            ("2h", "cache_ttl: a TTL must be '5m' or '1h', got '2h'"),
            ({"tail": "10m"}, "cache_ttl: a TTL must be '5m' or '1h', got '10m'"),
            ({"prefix": "1h"}, "cache_ttl: unknown breakpoint role 'prefix'"),
            (3600, "cache_ttl: must be '5m', '1h' or a mapping, got 3600"),
        ],
    )
    def test_a_bad_ttl_is_refused(self, make_tl: Make, asked: Any, message: str) -> None:
        """A TTL Anthropic does not take is a PolicyError naming ``cache_ttl``."""
        view = rendered(make_tl)
        with pytest.raises(PolicyError) as err:
            view.to_anthropic(cache_ttl=asked)
        assert str(err.value) == message


class TestPromptCacheKey:
    def test_the_key_is_stable_per_conversation(self, make_tl: Make) -> None:
        """The default key is the same at every render and in every process for one
        conversation, differs between conversations, and does not contain the id."""
        first = rendered(make_tl, "user-42@example.com")
        again = rendered(make_tl, "user-42@example.com")
        other = rendered(make_tl, "c2")
        assert first.prompt_cache_key == again.prompt_cache_key != other.prompt_cache_key
        # pinned: the same in every process and version
        assert first.prompt_cache_key == "bt-12890d5149016f7897c87155be97d136"
        assert "user-42" not in first.prompt_cache_key

    def test_chat_request_with_the_key(self, make_tl: Make) -> None:
        """``to_openai(prompt_cache_key=True)``: the request's keyword arguments, the
        messages unchanged and the conversation's key."""
        view = rendered(make_tl)
        request = view.to_openai(prompt_cache_key=True)
        assert request == {"messages": view.to_openai(), "prompt_cache_key": view.prompt_cache_key}

    def test_responses_request_with_a_key_of_your_own(self, make_tl: Make) -> None:
        """``to_openai_responses(prompt_cache_key="tenant-7")`` uses that key."""
        view = rendered(make_tl)
        request = view.to_openai_responses(prompt_cache_key="tenant-7")
        assert request == {"input": view.to_openai_responses(), "prompt_cache_key": "tenant-7"}

    def test_a_blank_key_is_refused(self, make_tl: Make) -> None:
        """An empty key would route nowhere: a PolicyError."""
        with pytest.raises(PolicyError, match="prompt_cache_key"):
            rendered(make_tl).to_openai(prompt_cache_key=" ")
