"""``python -m benchmarks``: every benchmark in one run; prints and writes docs/benchmarks.md.

Peers come from benchmarks/requirements.txt (install them into the benchmark
environment only). Figures are medians and ratios measured side by side in one process.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import attrs

from benchmarks import (
    end_to_end,
    peers,
    persist_speed,
    prepared,
    render_speed,
    storage_size,
    summary_cap,
    tiers,
)
from benchmarks._util import ms, us
from benchmarks.goals import goals as goal_rows
from timeline import TiktokenCounter

ROOT = Path(__file__).parent.parent


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def _fmt_time(s: float) -> str:
    return us(s) if s < 1e-3 else ms(s)


def _peer_tables(res: dict[str, Any]) -> list[str]:
    rows = res["compare"]
    out = [
        f"### Same session, same {res['budget']:,}-token budget ({res['turns']} turns, "
        f"{rows[0].get('requests', 0):,} requests)",
        "",
        "| strategy | median | p95 | total | max tokens | mean tokens | over budget | "
        "orphan results | prefix reuse | cached (sim.) | cached / reuse | input cost | "
        "tokenizer work | summarizer in / out |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        work = f"{r['tokenizer_work']:.2f}x" if r["tokenizer_work"] else "-"
        out.append(
            f"| {r['name']} | {_fmt_time(r['median'])} | {_fmt_time(r['p95'])} | "
            f"{r['total']:.2f} s | {r.get('max_tokens', 0):,} | {r.get('mean_tokens', 0):,.0f} | "
            f"{r.get('over_budget', 0)} | {r.get('orphans', 0)} | {r.get('prefix_reuse', 0):.1%} | "
            f"{r.get('cached', 0):.1%} | {r.get('cache_vs_reuse', 0):.3f} | "
            f"{r.get('relative_cost', 0):.3f} | {work} | "
            f"{r['summary_in']:,} / {r['summary_out']:,} |"
        )
    out += [
        "",
        "### Growth: time per request at turn 100 vs turn 600 (median of each window; the two"
        " windows timed in alternation, one request of each in turn)",
        "",
        "| strategy | turns 90-99 | turns 590-599 | ratio |",
        "|---|---:|---:|---:|",
    ]
    for g in res["growth"]:
        out.append(
            f"| {g['name']} | {_fmt_time(g['early'])} | {_fmt_time(g['late'])} | "
            f"{g['ratio']:.2f}x |"
        )
    mem = res["memory"]
    out += [
        "",
        "### Peak memory of our timeline over the first N turns (tracemalloc)",
        "",
        "| | " + " | ".join(f"{n} turns" for n in sorted(mem["in-memory"])) + " |",
        "|---|" + "---:|" * len(mem["in-memory"]),
    ]
    for key in ("in-memory", "evict"):
        label = (
            "no persist (everything in memory)"
            if key == "in-memory"
            else "persist-and-evict every turn"
        )
        out.append(
            f"| {label} | "
            + " | ".join(f"{v / 2**20:,.2f} MiB" for _, v in sorted(mem[key].items()))
            + " |"
        )
    return out


def _tier_figures(tr: dict[str, Any], bg: dict[str, Any]) -> dict[str, str]:
    """The tiered-compaction and background-summary figures ANALYSIS.md quotes."""
    rows = tr["rows"]
    by = {r["name"]: r for r in rows}
    peer = tiers.ratio(rows, tiers.TIERED, tiers.PEER)
    stacked = tiers.ratio(rows, tiers.TIERED, tiers.STACKED)
    alone = tiers.ratio(rows, tiers.TIERED, tiers.SUMMARIZE_ONLY)
    offload = tiers.ratio(rows, tiers.OFFLOAD, tiers.PEER)
    offload_tiered = tiers.ratio(rows, tiers.OFFLOAD, tiers.TIERED)
    warm = by["ours, tiered + CacheWarmSummarizer"]
    without, background = bg["rows"]
    return {
        "offload_cost": f"{offload.cost:.2f}x",
        "offload_visible": f"{offload.visible:.2f}x",
        "offload_vs_tiered": f"{offload_tiered.cost:.2f}x",
        "prepared_without": f"{without['p95']:.2f} s",
        "prepared_with": f"{background['p95'] * 1e3:,.0f} ms",
        "prepared_share": f"{background['prepared']} of {background['compactions']}",
        "prepared_calls": f"{background['summaries']}",
        "prepared_calls_without": f"{without['summaries']}",
        "tier_cost": f"{peer.cost:.2f}x",
        "tier_visible": f"{peer.visible:.2f}x",
        "tier_stacked": f"{stacked.cost:.2f}x",
        "tier_alone_cost": f"{alone.cost:.2f}x",
        "tier_alone_visible": f"{alone.visible:.2f}x",
        "tier_warm_cached": f"{warm['summary_cached']:.0%}",
    }


def _figures(res: dict[str, Any], goals: list[str]) -> dict[str, str]:
    """The figures ANALYSIS.md quotes, from this run (so the text never disagrees with
    the tables above it)."""
    by = {r["name"]: r for r in res["compare"]}
    ours = by["block-timeline"]
    peer = by["LangChain SummarizationMiddleware (memoized counter)"]
    tiktoken_row = by["block-timeline (tiktoken counter)"]
    growth = {g["name"]: g["ratio"] for g in res["growth"]}
    trim_growth = growth.get("LangChain trim_messages (plain counter)", float("nan"))
    mem = res["memory"]["evict"]
    lo, hi = min(mem), max(mem)
    work = {r["name"]: r["tokenizer_work"] or 0.0 for r in res["compare"]}
    met = sum(1 for g in goals if g.endswith("| met |"))
    missed = sum(1 for g in goals if g.endswith("| missed |"))
    verdict = (
        "Every goal is met in this run."
        if not missed
        else f"{met} of {met + missed} goals are met in this run (see the table above)."
    )
    return {
        "goals_verdict": verdict,
        "median_ratio": f"{ours['median'] / peer['median']:.2f}x",
        "p95_ratio": f"{ours['p95'] / peer['p95']:.2f}x",
        "p95_tiktoken": f"{tiktoken_row['p95'] / peer['p95']:.2f}x",
        "payload_over": f"{ours['payload_over']}",
        "payload_max": f"{ours['payload_max']:,}",
        "growth_ours": f"{growth['block-timeline']:.2f}x",
        "growth_trim": f"{trim_growth:.1f}x",
        "work_summarize": f"{work['LangChain SummarizationMiddleware (plain counter)']:,.0f}",
        "work_trim": f"{work['LangChain trim_messages (plain counter)']:,.0f}",
        "work_extra": f"{ours['tokenizer_work'] - 1:.1%}",
        "memory_ratio": f"{mem[hi] / mem[lo]:.2f}x",
        "memory_lo": f"{mem[lo] / 2**20:.2f}",
        "memory_hi": f"{mem[hi] / 2**20:.2f}",
        "memory_turns_lo": f"{lo}",
        "memory_turns_hi": f"{hi}",
    }


@attrs.frozen
class _Runs:
    """Every benchmark's result, from one run."""

    rs: dict[str, Any]
    ps: dict[str, Any]
    e2e: dict[str, Any]
    pg: dict[str, Any]
    ss: dict[str, Any]
    sc: dict[str, Any]
    res: dict[str, Any]
    tiers: dict[str, Any]
    prepared: dict[str, Any]


def _measure(turns: int, budget: int) -> _Runs:
    print("render speed ...", flush=True)
    rs = render_speed.run()
    print("persistence ...", flush=True)
    ps = persist_speed.run(turns=315)
    print("end to end ...", flush=True)
    e2e = end_to_end.run(turns=turns, budget=budget)
    pg = end_to_end.payload_growth(budget=budget)
    print("storage size ...", flush=True)
    ss = storage_size.run(budget=budget)
    print("summary cap ...", flush=True)
    sc = summary_cap.run(budget=budget)
    print("peers (this takes a few minutes) ...", flush=True)
    res = peers.run(turns=turns, budget=budget)
    print("tiered compaction ...", flush=True)
    tr = tiers.run(turns=turns, budget=budget)
    print("background summaries (a few minutes: the summarizer takes 2 s) ...", flush=True)
    bg = prepared.run(budget=budget)
    return _Runs(rs, ps, e2e, pg, ss, sc, res, tr, bg)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--output", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args()

    runs = _measure(args.turns, args.budget)
    goals = goal_rows(
        runs.res, runs.rs, runs.ps, runs.sc, runs.ss, runs.e2e, runs.pg, runs.tiers, runs.prepared
    )
    analysis = (Path(__file__).parent / "ANALYSIS.md").read_text()
    figures = {**_figures(runs.res, goals), **_tier_figures(runs.tiers, runs.prepared)}
    analysis = analysis.format_map(figures)
    lines = [
        *_intro(args.turns, args.budget, runs.res),
        "## Goals",
        "",
        *goals,
        "",
        *_peer_section(runs),
        *_tier_section(runs.tiers),
        *_prepared_section(runs.prepared),
        *_own_sections(runs),
        "## Analysis",
        "",
        analysis.strip(),
        "",
    ]
    text = "\n".join(lines) + _store_section(Path(args.output))
    Path(args.output).write_text(text)
    print(text)
    return 0


def _store_section(output: Path) -> str:
    """The sections other commands write into the same file (``python -m benchmarks.store
    --write-docs``, ``python -m benchmarks.recall --write-docs`` and the recall notes),
    each between its markers, carried over unchanged: this command does not measure them."""
    from benchmarks import recall, store

    markers = [
        (store.START, store.END),
        (recall.START, recall.END),
        (recall.NOTES_START, recall.NOTES_END),
    ]
    doc = output.read_text() if output.exists() else ""
    kept = ""
    for start_mark, end_mark in markers:
        start, end = doc.find(start_mark), doc.find(end_mark)
        if 0 <= start < end:
            kept += "\n" + doc[start : end + len(end_mark)] + "\n"
    return kept


def _intro(turns: int, budget: int, res: dict[str, Any]) -> list[str]:
    return [
        "# Benchmarks",
        "",
        "Written by `python -m benchmarks` (peers from `benchmarks/requirements.txt`). Every "
        "figure comes from one run on one machine, strategies side by side in one process; "
        "times are medians unless marked. These machines are shared and noisy: compare the "
        "ratios, not the absolute times.",
        "",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {platform.system()}",
        f"- packages: block-timeline {_version('block-timeline')}, "
        f"tiktoken {_version('tiktoken')}, rs-bpe {_version('rs-bpe')} "
        f"(our counter: {TiktokenCounter().active_backend}), "
        f"langchain {_version('langchain')}, langchain-core {_version('langchain-core')}, "
        f"strands-agents {_version('strands-agents')}",
        f"- command: `python -m benchmarks --turns {turns} --budget {budget}` "
        f"({res['seconds']:.0f} s for the peer comparison)",
        "",
    ]


def _peer_section(runs: _Runs) -> list[str]:
    """Against the peers: the comparison tables, end to end, and the payload growth."""
    return [
        "## Against the peers",
        "",
        "The session: a seeded coding agent (`benchmarks/session.py`): user prompts of 30-300 "
        "words, 0-8 tool calls a turn with log-normal result sizes (100-12,000 chars), a "
        "~1,400-token system prompt, a request after every prompt and tool result. Every "
        "request is scored by one independent tiktoken count (+4 tokens a part). Ours and "
        "SummarizationMiddleware (memoized), whose ratios are goals, are fed in lockstep: at "
        "each request point they are timed one after the other, the first one rotating, so "
        "load on the shared machine hits both alike; the others run on their own. Our "
        "payload checks (every format counted) run in a separate untimed pass. "
        "Peers' "
        "breakpoints for the cache simulation: system prompt and last part. Input cost: "
        "cache writes 1.25x, reads 0.1x, relative to sending everything uncached. "
        f"{peers.PLAIN_TRIM_SAMPLE and 'trim_messages with a plain counter is timed on every '}"
        f"{peers.PLAIN_TRIM_SAMPLE}th request (its total time and tokenizer work are "
        "extrapolated); its output equals "
        "the memoized run's, whose scores it shows.",
        "",
        *_peer_tables(runs.res),
        "",
        "### End to end: append + render + provider payload, per request",
        "",
        "Timed from the first event appended after the previous request to the payload in "
        "hand. Ours: `append` + `render` + `to_anthropic()` / `to_openai()`. LangChain: "
        "`SummarizationMiddleware` (memoized counter) + its own "
        "conversion (langchain-anthropic `_format_messages`, timed on every "
        f"{end_to_end.ANTHROPIC_PEER_SAMPLE}th request; `convert_to_openai_messages`).",
        "",
        *end_to_end.report(runs.e2e),
        "",
        "The payload build against the render's own time, over one session of "
        f"{runs.pg['late']:,} turns (our timeline alone, medians; the windows are the 10 turns "
        "before each mark):",
        "",
        *end_to_end.growth_report(runs.pg),
        "",
    ]


def _tier_section(tr: dict[str, Any]) -> list[str]:
    """Tiered compaction (#26) against summarize-only and the peers."""
    return [
        "## Tiered compaction: clear, then summarize",
        "",
        f"The same session ({tr['turns']} turns) at the same {tr['budget']:,}-token budget, "
        "every strategy fed in lockstep (`benchmarks/tiers.py`, "
        f"{tr['seconds']:.0f} s). Input cost per request in uncached-input-token units, "
        "through the simulated Anthropic cache of `benchmarks/cache_sim.py` (written from "
        "the provider's documented rules: 5-minute writes 1.25x, 1-hour writes 2x, reads "
        "0.1x, a 20-block lookback, 1,024-token minimum; its reads and writes match usage "
        "the provider recorded, `tests/cache/test_cache_real_usage.py`); 'incl. summary requests' "
        "adds "
        "the summarizer's own model calls, billed through the same cache (the peers' "
        "summary prompt is a fresh transcript, ours with `CacheWarmSummarizer` the "
        "conversation's cached prompt plus one instruction; the inventory summarizer "
        "calls no model). User messages verbatim: the user's own prompts shown unchanged "
        "in a request, averaged over the requests. The stacked LangChain pair: "
        "`ClearToolUsesEdit(trigger=budget/2, keep=3, clear_at_least=budget/10)` in "
        "`ContextEditingMiddleware` after `SummarizationMiddleware` (trigger 0.9, keep "
        "0.7). The offload row is the tiered defaults with `offload_over_tokens=1_000`. The "
        "sweep behind `ClearingPolicy`'s defaults: "
        "`python -m benchmarks.tiers --sweep` (docs/compaction.md).",
        "",
        *tiers.report(tr["rows"], tr["user_messages"]),
        "",
    ]


def _prepared_section(bg: dict[str, Any]) -> list[str]:
    """Background summaries (``prepare_at``) against summaries made at the trigger."""
    return [
        "## Background summaries: the compaction that does not stall",
        "",
        f"The same session ({bg['turns']} turns, {bg['budget']:,}-token budget) with a "
        f"summarizer that takes {prepared.SUMMARY_SECONDS:.0f} s a call, once with the "
        "summary made at the trigger and once with `CompactionPolicy(prepare_at=0.8)`, which "
        "makes it in a worker thread once the prompt passes 80% of the trigger "
        f"(`benchmarks/prepared.py`, {bg['seconds']:.0f} s). The agent's own model call "
        f"between two renders takes up to {prepared.MODEL_SECONDS:.0f} s (it ends early "
        "when no summary is being made, which changes no figure). 'Render at the trigger' "
        "is the render that compacts.",
        "",
        *prepared.report(bg),
        "",
    ]


def _own_sections(runs: _Runs) -> list[str]:
    """Our timeline alone: render speed, the summary cap, persistence and storage."""
    return [
        "## Render speed",
        "",
        "One block appended, then a render (default counter). The old blocks are never "
        "re-tokenized.",
        "",
        *render_speed.report(runs.rs),
        "",
        "## Summary cap over session length",
        "",
        "Our timeline alone on the same session at two lengths: the inventory summary folds "
        "older requests and shortens its lists to stay within `summary_max_tokens` (10% of "
        "the budget by default), so the request size does not creep as the session grows.",
        "",
        *summary_cap.report(runs.sc),
        "",
        "## Persistence (SQLite)",
        "",
        *persist_speed.report(runs.ps),
        "",
        "Storage over a long session: the session rendered at every request and persisted "
        "at every turn end; database pages (WAL included) against the UTF-8 bytes of every "
        "turn-log block and summary (`python -m benchmarks.storage_size`).",
        "",
        *storage_size.report(runs.ss),
        "",
    ]


if __name__ == "__main__":
    sys.exit(main())
