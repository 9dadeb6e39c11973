"""A simulated Anthropic prompt cache, written from the provider's documented rules only.

It shares nothing with the library's checkpoint planner (``timeline._cache``): the
benchmark must not grade the planner by the planner's own assumptions. The rules, as
Anthropic's prompt-caching documentation states them:

* the prompt is a sequence of content blocks (system text blocks, then each message's
  content blocks, in order); a cache entry is the exact prefix ending at a block;
* a request may mark at most 4 blocks with ``cache_control`` (breakpoints); more is an
  error;
* at each breakpoint the provider looks for a cached prefix ending at that block or at
  one of the blocks before it, the breakpoint itself counting as the first of 20; the
  longest one found is read;
* a breakpoint whose prefix is not cached writes it, if the prefix reaches the minimum
  cacheable length (1,024 tokens for the Sonnet and Opus 4 models);
* an entry lives 5 minutes (``ttl`` "5m", the default) or 1 hour (``ttl`` "1h") after it
  was last written or read; when TTLs are mixed, a longer one may not follow a shorter
  one (an error);
* pricing, relative to an uncached input token: a read 0.1x, a write 1.25x (5 minutes)
  or 2x (1 hour); tokens after the last breakpoint are uncached input.

A request's write covers the tokens from the end of what it read up to its last
breakpoint, each span priced at the TTL of the breakpoint that ends it.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from typing import Final

import attrs

__all__ = [
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "MIN_CACHEABLE_TOKENS",
    "PRICE",
    "CacheBlock",
    "CacheResult",
    "CacheSimulator",
]

MAX_BREAKPOINTS: Final = 4
LOOKBACK_BLOCKS: Final = 20
MIN_CACHEABLE_TOKENS: Final = 1_024
PRICE: Final = {"read": 0.1, "5m": 1.25, "1h": 2.0, "input": 1.0}
_TTL_SECONDS: Final = {"5m": 300.0, "1h": 3600.0}


@attrs.frozen
class CacheBlock:
    """One content block of a request: its role, kind and exact content, its tokens, and
    the TTL of the ``cache_control`` on it (``""``: none)."""

    role: str
    kind: str
    content: str
    tokens: int
    ttl: str = ""


@attrs.frozen
class CacheResult:
    """What one request was billed, in tokens."""

    tokens: int
    read: int
    written_5m: int
    written_1h: int
    error: str = ""
    """Why the provider would refuse the request (too many breakpoints, TTL order)."""

    @property
    def written(self) -> int:
        return self.written_5m + self.written_1h

    @property
    def uncached(self) -> int:
        return self.tokens - self.read - self.written

    @property
    def cost(self) -> float:
        """The input cost relative to sending every token uncached once."""
        return (
            self.read * PRICE["read"]
            + self.written_5m * PRICE["5m"]
            + self.written_1h * PRICE["1h"]
            + self.uncached * PRICE["input"]
        )


@attrs.define
class CacheSimulator:
    """The provider's cache across a sequence of requests (one conversation, or several
    that share it, such as a conversation and its summary requests)."""

    min_tokens: int = MIN_CACHEABLE_TOKENS
    _entries: dict[str, tuple[float, float]] = attrs.field(factory=dict)
    """Prefix digest -> (time it expires, its TTL in seconds)."""

    def request(self, blocks: Sequence[CacheBlock], now: float = 0.0) -> CacheResult:
        """Bill one request sent at ``now`` (seconds) and update the cache."""
        total = sum(b.tokens for b in blocks)
        marks = [i for i, b in enumerate(blocks) if b.ttl]
        error = _check(blocks, marks)
        if error:
            return CacheResult(total, 0, 0, 0, error)
        digests, ends = _prefixes(blocks)
        entries = self._entries
        hit = -1
        for m in marks:
            for j in range(m, max(-1, m - LOOKBACK_BLOCKS), -1):
                entry = entries.get(digests[j])
                if entry is not None and entry[0] > now:
                    hit = max(hit, j)
                    break
        read = ends[hit] if hit >= 0 else 0
        if hit >= 0:  # a read refreshes the entry it read
            ttl_seconds = entries[digests[hit]][1]
            entries[digests[hit]] = (now + ttl_seconds, ttl_seconds)
        written = {"5m": 0, "1h": 0}
        start = read
        for m in marks:
            if ends[m] <= start or ends[m] < self.min_tokens:
                continue  # read already, or too short to cache (billed as plain input)
            ttl = blocks[m].ttl
            written[ttl] += ends[m] - start
            start = ends[m]
            entries[digests[m]] = (now + _TTL_SECONDS[ttl], _TTL_SECONDS[ttl])
        return CacheResult(total, read, written["5m"], written["1h"])


def _check(blocks: Sequence[CacheBlock], marks: Sequence[int]) -> str:
    if len(marks) > MAX_BREAKPOINTS:
        return f"{len(marks)} cache_control blocks (at most {MAX_BREAKPOINTS})"
    ttls = [blocks[m].ttl for m in marks]
    if any(t not in _TTL_SECONDS for t in ttls):
        return f"unknown ttl in {ttls}"
    for a, b in itertools.pairwise(ttls):
        if _TTL_SECONDS[b] > _TTL_SECONDS[a]:
            return f"a {b} breakpoint after a {a} one (longer TTLs must come first)"
    return ""


def _prefixes(blocks: Sequence[CacheBlock]) -> tuple[list[str], list[int]]:
    """The digest of the prefix ending at each block, and its token count."""
    h = hashlib.sha256()
    digests: list[str] = []
    ends: list[int] = []
    total = 0
    for b in blocks:
        for field in (b.role, b.kind, b.content):
            data = field.encode()
            h.update(len(data).to_bytes(8, "little") + data)
        total += b.tokens
        digests.append(h.hexdigest())
        ends.append(total)
    return digests, ends
