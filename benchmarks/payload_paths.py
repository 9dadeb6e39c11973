"""``python -m benchmarks.payload_paths``: the end-to-end request of ``python -m
benchmarks`` (:mod:`benchmarks.end_to_end`) with its provider payload built two ways
(#35), side by side in one run against the same LangChain peer.

* ``incremental``: ``view.to_anthropic()`` / ``view.to_openai()`` through the timeline's
  payload cache (``timeline.formats.incremental``: plans and builds only what changed
  since the last payload, then copies the cached items so the caller owns them);
* ``scratch``: the same view's payload built from its blocks by the same format builders
  without the cache (``to_anthropic(system, blocks, cache_points, system_cached)`` /
  ``to_openai(system, blocks)``): already new objects the caller owns, so no copy.

One timeline renders once per request and both paths build that view's payload, in an
order that alternates from request to request (as does whether ours or the peer goes
first), so a burst of load on a shared machine meets both alike; the two payloads are
checked equal, untimed. A path's request is the appends since the previous request, the
render and its payload. Times are CPU time (``time.process_time_ns``: another process on
the machine adds less than to wall time), ``reps`` runs pooled.

    python -m benchmarks.payload_paths [--turns 300] [--budget 32000] [--reps 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from benchmarks._util import median, p95, us
from benchmarks.end_to_end import ANTHROPIC_PEER_SAMPLE, _peer_payload
from benchmarks.peer_strategies import Summarize
from benchmarks.session import SYSTEM_PROMPT, Event, generate, is_request_point
from benchmarks.strategies import Ours
from timeline import RenderedContext
from timeline.formats.anthropic import to_anthropic
from timeline.formats.openai import to_openai

__all__ = ["PATHS", "report", "run"]

PATHS = ("incremental", "scratch")
GOAL = 0.5
"""The end-to-end goal of ``python -m benchmarks``: median and p95 ≤ 0.5x the peer's."""

Build = Callable[[RenderedContext], Any]


def _builders(fmt: str) -> dict[str, Build]:
    if fmt == "anthropic":
        return {
            "incremental": lambda v: v.to_anthropic(),
            "scratch": lambda v: to_anthropic(v.system, v.blocks, v.cache_points, v.system_cached),
        }
    return {
        "incremental": lambda v: v.to_openai(),
        "scratch": lambda v: to_openai(v.system, v.blocks),
    }


def _seconds(ns: int) -> float:
    return ns / 1e9


def _time_paths(events: list[Event], budget: int, fmt: str) -> dict[str, dict[str, list[float]]]:
    """Ours (both paths on each view) and the peer fed the same events in lockstep."""
    ours = Ours(budget, check_payloads=False)
    ours.tl.render(SYSTEM_PROMPT)  # tokenizer loaded, as after warm_up()
    build = _builders(fmt)
    peer = Summarize(budget, memoized=True)
    convert = _peer_payload(fmt)
    sample = ANTHROPIC_PEER_SAMPLE if fmt == "anthropic" else 1
    clock = time.process_time_ns
    out: dict[str, dict[str, list[float]]] = {
        name: {"total": [], "payload": []} for name in (*PATHS, "peer")
    }
    spent = {"ours": 0, "peer": 0}  # appends since the previous request
    n = 0

    def ours_request() -> None:
        start = clock()
        view = ours.tl.render(SYSTEM_PROMPT)
        render = clock() - start
        payloads = {}
        for name in PATHS[:: 1 if n % 2 else -1]:
            start = clock()
            payloads[name] = build[name](view)
            took = clock() - start
            out[name]["total"].append(_seconds(spent["ours"] + render + took))
            out[name]["payload"].append(_seconds(took))
        if payloads["incremental"] != payloads["scratch"]:
            raise AssertionError(f"{fmt}: the two paths' payloads differ at request {n}")

    def peer_request() -> None:
        start = clock()
        peer.request()
        if n % sample == 0:
            mid = clock()
            convert([peer.system, *peer.state])
            end = clock()
            out["peer"]["total"].append(_seconds(spent["peer"] + end - start))
            out["peer"]["payload"].append(_seconds(end - mid))

    for e in events:
        start = clock()
        ours.add(e)
        mid = clock()
        peer.add(e)
        spent["ours"] += mid - start
        spent["peer"] += clock() - mid
        if is_request_point(e):
            n += 1
            for request in (ours_request, peer_request)[:: -1 if (n // 2) % 2 else 1]:
                request()
            spent = {"ours": 0, "peer": 0}
    return out


def run(turns: int = 300, budget: int = 32_000, seed: int = 0, reps: int = 3) -> dict[str, Any]:
    """``reps`` lockstep runs of the session per format, their samples pooled."""
    events = list(generate(turns, seed))
    rows = []
    for fmt in ("anthropic", "openai"):
        pooled: dict[str, dict[str, list[float]]] = {
            name: {"total": [], "payload": []} for name in (*PATHS, "peer")
        }
        for _ in range(reps):
            for name, samples in _time_paths(events, budget, fmt).items():
                for key, values in samples.items():
                    pooled[name][key] += values
        stats = {
            name: {
                "median": median(s["total"]),
                "p95": p95(s["total"]),
                "payload_median": median(s["payload"]),
                "payload_p95": p95(s["payload"]),
            }
            for name, s in pooled.items()
        }
        rows.append(
            {"format": fmt, "requests": len(pooled["incremental"]["total"]) // reps, **stats}
        )
    return {"turns": turns, "budget": budget, "reps": reps, "rows": rows}


def report(res: dict[str, Any]) -> list[str]:
    out = [
        "| payload | path | median | p95 | payload median | payload p95 | median / peer | "
        "p95 / peer | goal (≤ 0.5x both) | median / incremental | p95 / incremental |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    names = {"anthropic": "Anthropic Messages", "openai": "OpenAI Chat"}
    for r in res["rows"]:
        peer, inc = r["peer"], r["incremental"]
        for name in (*PATHS, "peer"):
            s = r[name]
            versus = (
                f"{s['median'] / peer['median']:.2f}x | {s['p95'] / peer['p95']:.2f}x | "
                + (
                    "met"
                    if s["median"] <= GOAL * peer["median"] and s["p95"] <= GOAL * peer["p95"]
                    else "missed"
                )
                + f" | {s['median'] / inc['median']:.2f}x | {s['p95'] / inc['p95']:.2f}x"
                if name != "peer"
                else " | | | | "
            )
            out.append(
                f"| {names[r['format']]} | {name} | {us(s['median'])} | {us(s['p95'])} | "
                f"{us(s['payload_median'])} | {us(s['payload_p95'])} | {versus} |"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    res = run(turns=args.turns, budget=args.budget, reps=args.reps)
    print(f"{res['turns']} turns, {res['budget']:,}-token budget, {res['reps']} runs pooled")
    print("\n".join(report(res)))


if __name__ == "__main__":
    main()
