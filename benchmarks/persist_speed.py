"""Persist time per turn at turn 30 vs turn 300, and load time of the window.

Persist writes only the blocks new since the last persist plus the live window, so its
cost must not grow with the length of the history.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._util import median, ms
from timeline import CompactionPolicy, Timeline
from timeline._driver import ReactDriver
from timeline._driver.scripted import CodingSession, ScriptedModel, demo_tools


def run(turns: int = 300, probes: tuple[int, ...] = (30, 300), window: int = 30) -> dict[str, Any]:
    import index_store

    with tempfile.TemporaryDirectory() as tmp:
        store = index_store.open(f"sqlite:///{Path(tmp) / 'bench.db'}")
        session = CodingSession(3)
        tl = Timeline("bench", policy=CompactionPolicy(max_tokens=32_000))
        model = ScriptedModel(session, payload_format="none")
        driver = ReactDriver(tl, model, demo_tools(3), system="You are a coding agent.")
        persist_times: dict[int, float] = {}
        loads: dict[int, float] = {}
        samples: list[float] = []
        for t in range(1, turns + 1):
            driver.run_turn(session.prompt(t))
            start = time.perf_counter()
            tl.persist(store)
            samples.append(time.perf_counter() - start)
            for probe in probes:
                if t == probe + window // 2:
                    persist_times[probe] = median(samples[-window:])
                    load_samples = []
                    for _ in range(5):
                        start = time.perf_counter()
                        Timeline.load(store, "bench", policy=tl.policy)
                        load_samples.append(time.perf_counter() - start)
                    loads[probe] = median(load_samples)
        size = store.size_bytes()
        archived = len(store.turn_log("bench"))
        store.close()
    return {
        "persist": persist_times,
        "load": loads,
        "archived": archived,
        "size": size,
        "window_blocks": len(tl.blocks),
        "turns": turns,
    }


def report(result: dict[str, Any]) -> list[str]:
    p, lo = result["persist"], result["load"]
    a, b = sorted(p)
    return [
        "| | turn 30 | turn 300 | ratio |",
        "|---|---:|---:|---:|",
        f"| persist per turn (median of 30) | {ms(p[a])} | {ms(p[b])} | {p[b] / p[a]:.2f}x |",
        f"| load of the window (median of 5) | {ms(lo[a])} | {ms(lo[b])} | {lo[b] / lo[a]:.2f}x |",
        "",
        f"After {result['turns']} turns: {result['archived']:,} blocks in the turn log, "
        f"{result['window_blocks']} in the live window, store {result['size'] / 1024:,.0f} KiB.",
    ]


if __name__ == "__main__":
    print("\n".join(report(run(turns=315))))
