"""Checks that a rendered payload is one the provider accepts."""

from __future__ import annotations

from typing import Any

from timeline._cache import MAX_BREAKPOINTS


def check_anthropic(payload: dict[str, Any], tail_ids: int) -> None:
    messages = payload["messages"]
    assert messages[0]["role"] == "user"
    breakpoints = sum(1 for s in payload.get("system", []) if "cache_control" in s)
    for i, m in enumerate(messages):
        if i:
            assert m["role"] != messages[i - 1]["role"], "roles must alternate"
        kinds = [p["type"] for p in m["content"]]
        breakpoints += sum(1 for p in m["content"] if "cache_control" in p)
        results = [p["tool_use_id"] for p in m["content"] if p["type"] == "tool_result"]
        if results:
            assert kinds[: len(results)] == ["tool_result"] * len(results), "results first"
            prev = messages[i - 1]["content"]
            uses = [p["id"] for p in prev if p["type"] == "tool_use"]
            assert sorted(results) == sorted(uses), "results answer the previous calls"
        uses = [p["id"] for p in m["content"] if p["type"] == "tool_use"]
        if uses:
            nxt = messages[i + 1]["content"]
            answered = [p["tool_use_id"] for p in nxt if p["type"] == "tool_result"]
            assert sorted(uses) == sorted(answered), "every call answered right after"
    assert breakpoints <= MAX_BREAKPOINTS
