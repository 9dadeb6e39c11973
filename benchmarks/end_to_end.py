"""End to end per request: append + render + provider payload, against LangChain (#16 item 9).

Each request is timed from the first event appended after the previous request to the
provider payload in hand: for block-timeline ``append`` + ``render`` + ``to_anthropic()``
/ ``to_openai()``; for the peer ``SummarizationMiddleware`` (memoized counter, the same
fake summarizer as the peer comparison) + LangChain's own conversion (langchain-anthropic
``_format_messages`` for the Messages API, timed on every 10th request;
``convert_to_openai_messages`` for Chat).

    python -m benchmarks.end_to_end [--turns 300]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from benchmarks._util import median, p95, us
from benchmarks.session import SYSTEM_PROMPT, Event, generate, is_request_point
from benchmarks.strategies import Ours, Summarize

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


def _time_ours(events: list[Event], budget: int, fmt: str) -> dict[str, list[float]]:
    ours = Ours(budget)
    ours.tl.render(SYSTEM_PROMPT)  # tokenizer loaded, as after warm_up()
    render, payload = _ours_payload(fmt)
    total: list[float] = []
    payload_only: list[float] = []
    start = time.perf_counter()
    for e in events:
        ours.add(e)
        if is_request_point(e):
            view = render(ours)
            mid = time.perf_counter()
            payload(view)
            end = time.perf_counter()
            total.append(end - start)
            payload_only.append(end - mid)
            start = time.perf_counter()
    return {"total": total, "payload": payload_only}


ANTHROPIC_PEER_SAMPLE = 10
"""langchain-anthropic's conversion takes tens of milliseconds a request here: it runs on
every 10th request (the middleware on every one), and those requests are the sample."""


def _time_peer(events: list[Event], budget: int, fmt: str) -> dict[str, list[float]]:
    peer = Summarize(budget, memoized=True)
    convert = _peer_payload(fmt)
    sample = ANTHROPIC_PEER_SAMPLE if fmt == "anthropic" else 1
    total: list[float] = []
    payload_only: list[float] = []
    n = 0
    start = time.perf_counter()
    for e in events:
        peer.add(e)
        if is_request_point(e):
            peer.request()
            n += 1
            if n % sample == 0:
                mid = time.perf_counter()
                convert([peer.system, *peer.state])
                end = time.perf_counter()
                total.append(end - start)
                payload_only.append(end - mid)
            start = time.perf_counter()
    return {"total": total, "payload": payload_only}


def run(turns: int = 300, budget: int = 32_000, seed: int = 0) -> dict[str, Any]:
    events = list(generate(turns, seed))
    rows = []
    for fmt in ("anthropic", "openai"):
        ours = _time_ours(events, budget, fmt)
        peer = _time_peer(events, budget, fmt)
        rows.append(
            {
                "format": fmt,
                "requests": len(ours["total"]),
                "ours_median": median(ours["total"]),
                "ours_p95": p95(ours["total"]),
                "ours_payload_median": median(ours["payload"]),
                "peer_median": median(peer["total"]),
                "peer_p95": p95(peer["total"]),
                "peer_payload_median": median(peer["payload"]),
            }
        )
    return {"turns": turns, "budget": budget, "rows": rows}


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


if __name__ == "__main__":
    main()
