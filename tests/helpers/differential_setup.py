"""What the two engines of the differential harness are built with, and short reprs.

:class:`Setup` is drawn once per test case (policy, counter, summarizer, id factory);
:class:`ManualClock` is the clock both engines share the time of; :class:`Shown` wraps a
drawn value so that hypothesis prints a failing case's steps readably.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import attrs
import msgspec

from timeline import CacheWarmSummarizer, CompactionPolicy, HeuristicCounter, TiktokenCounter
from timeline._compaction.summarizers.base import SummaryRequest
from timeline._model.block import Block
from timeline.summarizers import TruncateSummarizer

CounterKind = Literal["tiktoken", "heuristic", "count_only"]
SummarizerKind = Literal["inventory", "truncate", "prose", "cache_warm"]


class ManualClock:
    """A clock the test moves (``advance``), never by being read: both engines see the
    same time however often each reads it."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@attrs.frozen
class CountOnlyCounter:
    """A counter without ``upper_bound``: the incremental engine then counts every block
    exactly too (its memo and stream still differ from the reference's)."""

    inner: HeuristicCounter = attrs.field(factory=lambda: HeuristicCounter(3.0))

    def count(self, text: str) -> int:
        return self.inner.count(text)


@attrs.frozen
class ProseSummarizer:
    """A model-like summarizer: plain prose, no sections, sized by the request."""

    name: str = "prose"

    def summarize(self, request: SummaryRequest) -> str:
        words = " ".join(b.text.split(maxsplit=1)[0] for b in request.blocks if b.text.strip())
        head = (
            "Earlier: " + request.previous_summary[:200] + "\n" if request.previous_summary else ""
        )
        return f"{head}The {request.kind} covered {len(request.blocks)} blocks: {words[:400]}"


def cache_warm_digest(request: dict[str, Any]) -> str:
    """A model stand-in for the cache-warm summarizer: its summary depends on every byte
    of the request (the prompt as last sent), so engines that hand summarizers different
    prompts write different summaries."""
    data = msgspec.json.encode(request, order="sorted")
    return f"Summary of a {len(data)}-byte request {hashlib.sha256(data).hexdigest()[:16]}."


def prefixed_ids(kind: str, seq: int) -> str:
    """An id factory other than the default one (ids with a dash and a longer prefix)."""
    return f"{kind}-{seq:03d}"


@attrs.frozen
class Setup:
    """Everything both engines are built with (drawn once per test case)."""

    policy: CompactionPolicy
    counter: CounterKind = "heuristic"
    summarizer: SummarizerKind = "inventory"
    prefixed_ids: bool = False
    estimate_every_step: bool = False
    """Also compare ``estimate()`` after every rule (it resolves the lazy bounds, so half
    of the cases leave them pending until a render needs them)."""

    def kwargs(
        self, clock: ManualClock, incremental: bool, hooks: list[Any], *, plain: bool = False
    ) -> dict[str, Any]:
        """``Timeline()`` / ``Timeline.load()`` keywords; fresh counter and summarizer
        (``plain``: the policy without ``prepare_at``)."""
        counter: Any = {
            "tiktoken": TiktokenCounter,
            "heuristic": HeuristicCounter,
            "count_only": CountOnlyCounter,
        }[self.counter]()
        summarizer: Any = {
            "inventory": None,
            "truncate": TruncateSummarizer(),
            "prose": ProseSummarizer(),
            "cache_warm": CacheWarmSummarizer(cache_warm_digest),
        }[self.summarizer]
        kw: dict[str, Any] = {
            "policy": attrs.evolve(self.policy, prepare_at=None) if plain else self.policy,
            "summarizer": summarizer,
            "token_counter": counter,
            "clock": clock,
            "on_before_compaction": lambda stats: hooks.append(("before", stats.as_dict())),
            "on_after_compaction": lambda stats: hooks.append(("after", stats.as_dict())),
            "incremental": incremental,
        }
        if self.prefixed_ids:
            kw["id_factory"] = prefixed_ids
        return kw


class Shown:
    """A drawn value with a short repr: hypothesis prints the steps of a failing case
    with ``repr``, and 20,000-character texts would drown them."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        v = self.value
        if isinstance(v, Block):
            ids = [f"{k}={getattr(v, k)!r}" for k in ("call_id", "tool_id") if getattr(v, k)]
            if v.data is not None:
                ids.append(f"data=<{len(v.data)} bytes>")
            return f"Block({v.type!r}, {', '.join([abbreviate(v.text), *ids])})"
        return abbreviate(v) if isinstance(v, str) else repr(v)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis' pretty printer


def abbreviate(text: str, keep: int = 40) -> str:
    if len(text) <= 2 * keep:
        return repr(text)
    return f"<{len(text)} chars {text[:keep]!r}...>"
