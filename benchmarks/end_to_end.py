"""End to end per request: append + render + provider payload, against LangChain (#16 item 9).

Each request is timed from the first event appended after the previous request to the
provider payload in hand, ours and the peer fed in lockstep, three runs pooled. For
block-timeline: ``append`` + ``render`` + ``to_anthropic()`` / ``to_openai()``. For the
peer: ``SummarizationMiddleware`` (memoized counter, the same fake summarizer as the peer
comparison) + LangChain's own conversion (langchain-anthropic ``_format_messages`` for
the Messages API, timed on every 10th request; ``convert_to_openai_messages`` for Chat).

    python -m benchmarks.end_to_end [--turns 300]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from benchmarks._util import median, p95, us
from benchmarks.peer_strategies import Summarize
from benchmarks.session import SYSTEM_PROMPT, Event, generate, is_request_point
from benchmarks.strategies import Ours

Payload = Callable[[Any], Any]


def _ours_payload(fmt: str) -> tuple[Callable[[Ours], Any], Callable[[Ours], Any]]:
    def render(o: Ours) -> Any:
        return o.tl.render(SYSTEM_PROMPT)

    def payload(view: Any) -> Any:
        return view.to_anthropic() if fmt == "anthropic" else view.to_openai()

    return render, payload


def _peer_payload(fmt: str) -> Callable[[list[Any]], Any]:
    if fmt == "anthropic":
        from langchain_anthropic.chat_models import _format_messages

        return lambda messages: _format_messages(messages, model="claude-sonnet-4-5")
    from langchain_core.messages import convert_to_openai_messages

    return lambda messages: convert_to_openai_messages(messages)


ANTHROPIC_PEER_SAMPLE = 10
"""langchain-anthropic's conversion takes tens of milliseconds a request here: it runs on
every 10th request (the middleware on every one), and those requests are the sample."""


def _time_both(events: list[Event], budget: int, fmt: str) -> dict[str, dict[str, list[float]]]:
    """Ours and the peer fed the same events in lockstep; at each request point the one
    that goes first alternates, so a burst of load on a shared machine hits both alike."""
    ours = Ours(budget)
    ours.tl.render(SYSTEM_PROMPT)  # tokenizer loaded, as after warm_up()
    render, payload = _ours_payload(fmt)
    peer = Summarize(budget, memoized=True)
    convert = _peer_payload(fmt)
    sample = ANTHROPIC_PEER_SAMPLE if fmt == "anthropic" else 1
    out: dict[str, dict[str, list[float]]] = {
        "ours": {"total": [], "payload": []},
        "peer": {"total": [], "payload": []},
    }
    spent = {"ours": 0.0, "peer": 0.0}  # appends since the previous request
    n = 0

    def ours_request() -> None:
        start = time.perf_counter()
        view = render(ours)
        mid = time.perf_counter()
        payload(view)
        end = time.perf_counter()
        out["ours"]["total"].append(spent["ours"] + end - start)
        out["ours"]["payload"].append(end - mid)

    def peer_request() -> None:
        start = time.perf_counter()
        peer.request()
        if n % sample == 0:
            mid = time.perf_counter()
            convert([peer.system, *peer.state])
            end = time.perf_counter()
            out["peer"]["total"].append(spent["peer"] + end - start)
            out["peer"]["payload"].append(end - mid)

    for e in events:
        start = time.perf_counter()
        ours.add(e)
        mid = time.perf_counter()
        peer.add(e)
        spent["ours"] += mid - start
        spent["peer"] += time.perf_counter() - mid
        if is_request_point(e):
            n += 1
            for request in (ours_request, peer_request)[:: 1 if n % 2 else -1]:
                request()
            spent = {"ours": 0.0, "peer": 0.0}
    return out


def run(turns: int = 300, budget: int = 32_000, seed: int = 0, reps: int = 3) -> dict[str, Any]:
    """``reps`` lockstep runs of the session per format, their samples pooled."""
    events = list(generate(turns, seed))
    rows = []
    for fmt in ("anthropic", "openai"):
        ours: dict[str, list[float]] = {"total": [], "payload": []}
        peer: dict[str, list[float]] = {"total": [], "payload": []}
        for _ in range(reps):
            both = _time_both(events, budget, fmt)
            for key in ("total", "payload"):
                ours[key] += both["ours"][key]
                peer[key] += both["peer"][key]
        rows.append(
            {
                "format": fmt,
                "requests": len(ours["total"]) // reps,
                "ours_median": median(ours["total"]),
                "ours_p95": p95(ours["total"]),
                "ours_payload_median": median(ours["payload"]),
                "peer_median": median(peer["total"]),
                "peer_p95": p95(peer["total"]),
                "peer_payload_median": median(peer["payload"]),
            }
        )
    return {"turns": turns, "budget": budget, "reps": reps, "rows": rows}


def payload_growth(
    budget: int = 32_000, seed: int = 0, early: int = 100, late: int = 1_200
) -> dict[str, Any]:
    """The stretch goals of #16 item 9: the payload build against the render's own time,
    and both in the 10 turns before turn ``early`` and before turn ``late`` of one long
    session (our timeline alone, medians of each window)."""
    events = list(generate(late, seed))
    windows = {"early": (early - 10, early), "late": (late - 10, late)}
    rows = []
    for fmt in ("anthropic", "openai"):
        ours = Ours(budget, check_payloads=False)
        ours.tl.render(SYSTEM_PROMPT)
        render, payload = _ours_payload(fmt)
        samples: dict[str, dict[str, list[float]]] = {
            k: {"render": [], "payload": []} for k in ("all", *windows)
        }
        for e in events:
            ours.add(e)
            if not is_request_point(e):
                continue
            start = time.perf_counter()
            view = render(ours)
            mid = time.perf_counter()
            payload(view)
            end = time.perf_counter()
            keys = ["all"] + [k for k, (lo, hi) in windows.items() if lo <= e.turn < hi]
            for k in keys:
                samples[k]["render"].append(mid - start)
                samples[k]["payload"].append(end - mid)
        med = {k: {part: median(v) for part, v in d.items()} for k, d in samples.items()}
        rows.append({"format": fmt, **med})
    return {"early": early, "late": late, "rows": rows}


def growth_report(res: dict[str, Any]) -> list[str]:
    early, late = res["early"], res["late"]
    out = [
        f"| payload | render (all) | payload (all) | payload / render | render, turns "
        f"{early - 10}-{early - 1} | payload | render, turns {late - 10}-{late - 1} | payload "
        f"| payload growth |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = {"anthropic": "Anthropic Messages", "openai": "OpenAI Chat"}
    for r in res["rows"]:
        a, e, lt = r["all"], r["early"], r["late"]
        out.append(
            f"| {names[r['format']]} | {us(a['render'])} | {us(a['payload'])} | "
            f"{a['payload'] / a['render']:.2f}x | {us(e['render'])} | {us(e['payload'])} | "
            f"{us(lt['render'])} | {us(lt['payload'])} | {lt['payload'] / e['payload']:.2f}x |"
        )
    return out


def report(res: dict[str, Any]) -> list[str]:
    out = [
        "| payload | block-timeline median | p95 | of which payload (median) | "
        "LangChain median | p95 | of which conversion (median) | median ratio | p95 ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = {"anthropic": "Anthropic Messages", "openai": "OpenAI Chat"}
    for r in res["rows"]:
        out.append(
            f"| {names[r['format']]} | {us(r['ours_median'])} | {us(r['ours_p95'])} | "
            f"{us(r['ours_payload_median'])} | {us(r['peer_median'])} | {us(r['peer_p95'])} | "
            f"{us(r['peer_payload_median'])} | {r['ours_median'] / r['peer_median']:.2f}x | "
            f"{r['ours_p95'] / r['peer_p95']:.2f}x |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    print("\n".join(report(run(turns=args.turns))))
    print()
    print("\n".join(growth_report(payload_growth())))


if __name__ == "__main__":
    main()
