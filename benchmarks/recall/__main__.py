"""``python -m benchmarks.recall``: what a later question can still find after compaction.

Seeded sessions of two shapes (a multi-session chat between two people, a coding agent's
300 turns), each question with the blocks of its evidence; the library drives each
session as an agent would (render before every model request, persist after every turn)
and every question is checked against the rendered prompt and one ``store.search``, side
by side with a recency window of the same budget and recency + BM25. Figures are means
over seeds; ``--seeds`` sets how many (more seeds, less noise; choose defaults on many).

``--policy NAME=JSON`` runs the library with policy fields changed (the mapping
``CompactionPolicy.from_mapping`` takes), to compare settings on the same sessions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks._util import write_section
from benchmarks.recall import END, START, chat, coding, report
from benchmarks.recall.model import Session, check
from benchmarks.recall.runner import Run, policy_from, run_session

BUDGETS = {"chat": (2_000, 4_000, 8_000), "coding": (8_000, 16_000, 32_000)}


def _session(shape: str, seed: int, turns: int) -> Session:
    """``turns``: the coding session's turns; a chat has a tenth as many sessions (at the
    default 300, the chat's own 22-30)."""
    if shape == "chat":
        session = chat.generate(seed, sessions=None if turns >= 300 else max(2, turns // 10))
    else:
        session = coding.generate(seed, turns=turns)
    check(session)
    return session


def _job(args: tuple[str, int, int, int, str, dict[str, Any], str | None]) -> dict[str, Any]:
    shape, seed, turns, budget, name, overrides, store = args
    session = _session(shape, seed, turns)
    run: Run = run_session(session, budget, policy_from(overrides), store)
    figures = report.run_figures(run)
    by_kind: dict[str, list[Any]] = {}
    for o in run.outcomes:
        for group in (f"kind:{o.kind}", f"distance:{o.distance}"):
            by_kind.setdefault(group, []).append(o)
    details = {group: report.shares(items) for group, items in by_kind.items()}
    return {
        "shape": shape,
        "seed": seed,
        "budget": budget,
        "policy": name,
        "figures": figures,
        "details": details,
    }


def _policies(specs: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for spec in specs or ["default={}"]:
        name, _, text = spec.partition("=")
        out[name] = json.loads(text or "{}")
    return out


def _shown(args: list[str]) -> list[str]:
    """The arguments as the docs show them: without ``--write-docs`` and without where
    ``--json`` wrote (a path on the machine that ran it)."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--json":
            skip = True
        elif a != "--write-docs" and not a.startswith("--json="):
            out.append(a)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall", description=__doc__)
    parser.add_argument("--shapes", default="chat,coding")
    parser.add_argument("--seeds", type=int, default=3, help="sessions per shape (default 3)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--turns", type=int, default=300, help="coding turns (a chat has a tenth as many sessions)"
    )
    parser.add_argument("--budgets", default="", help="comma list, for every shape")
    parser.add_argument("--policy", action="append", default=[], help="NAME=JSON, repeatable")
    parser.add_argument("--store", default=None, help="store URL (default: SQLite, temporary)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (timings need 1)")
    parser.add_argument("--json", type=Path, default=None, help="write every run's figures")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)

    policies = _policies(args.policy)
    jobs = []
    for shape in args.shapes.split(","):
        budgets = [int(b) for b in args.budgets.split(",") if b] or BUDGETS[shape]
        for budget in budgets:
            for name, overrides in policies.items():
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    jobs.append((shape, seed, args.turns, budget, name, overrides, args.store))
    started = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_job, jobs))
    else:
        results = [_job(job) for job in jobs]
    elapsed = time.perf_counter() - started

    rows: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in results:
        rows.setdefault((r["shape"], r["policy"], r["budget"]), []).append(r["figures"])
    text = report.table([(s, p, b, figs) for (s, p, b), figs in rows.items()])
    print(text)
    print(f"\n{len(jobs)} runs in {elapsed:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.write_docs:
        command = "python -m benchmarks.recall " + " ".join(
            _shown(list(argv if argv is not None else sys.argv[1:]))
        )
        section = (
            f"{START}\n## Recall after compaction\n\nProduced by `{command.strip()}` "
            f"(means over seeds; see `benchmarks/recall/`).\n\n{text}\n\n{report.legend()}\n{END}"
        )
        write_section(START, END, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
