"""Timing helpers: medians and percentiles of repeated runs, side by side in one process;
a script run in a fresh process; a marked section of ``docs/benchmarks.md`` rewritten."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def fresh_process(script: str, *args: str) -> list[str]:
    """The words ``script`` prints, run with ``args`` in a fresh interpreter that imports
    what this one does (its ``sys.path``)."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return done.stdout.split()


def write_section(start: str, end: str, section: str) -> None:
    """Put ``section`` (which begins with ``start`` and ends with ``end``) into
    ``docs/benchmarks.md`` in place of the one between those markers, or at its end."""
    doc = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Benchmarks\n"
    if start in doc:
        doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: section, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + section + "\n"
    DOCS.write_text(doc, encoding="utf-8")
