"""``timeline import`` against #28 item 6 for every shape of input we could think of.

Item 6 asks an import to peak at most 3x the file in memory and to write a store of at
most 2x the text, "for any shape of input". ``python -m benchmarks.import_shapes`` writes
one file of each shape below (about ``--mb`` MiB of JSON each), runs ``timeline import``
on it into a new SQLite store in a fresh process, and prints a table: the time, the peak
resident memory over a one-message import run the same way (against the file), and the
store's size (against the file, and against the text: the UTF-8 of every message text,
tool argument and image the file holds).

Shapes: many one-character messages (Chat Completions, and Responses items); one big
string of a few repeated words; one big string of random words (nothing repeats, nothing
compresses); one message of many one-character text parts; one tool call whose arguments
are many empty JSON objects; one base64 image.

``--write-docs`` puts the table into ``docs/benchmarks.md`` between the
``import-shapes`` markers.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._util import fresh_process, write_section

START, END = "<!-- import-shapes:start -->", "<!-- import-shapes:end -->"

_RUN = """
import contextlib, io, resource, sys, time
from timeline._cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    main(["import", sys.argv[1], "--db", sys.argv[2], "--conversation", sys.argv[3]])
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""
_SEARCH = """
import contextlib, io, sys, time
from timeline._cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    main(["search", sys.argv[2], sys.argv[3], "--db", sys.argv[1]])
print(time.perf_counter() - t)
"""
CONVERSATION = "6f1c9e2a-3b7d-4c55-9a0e-2d8b7f41c3e9"
"""Hosts name conversations by UUIDs."""

Shape = Callable[[int, random.Random], tuple[Any, int]]
"""Makes a document of about ``n`` bytes; returns it and its text bytes."""


def _word(name: str, data: Any) -> str:
    """The word searched for after the import: ``retry``, the random string's first word,
    or ``a`` (in every other shape's text but the image's)."""
    if name == "one string of repeated words":
        return "retry"
    if name == "one string of random words":
        return str(data[0]["content"].split()[0])
    return "a"


def _tiny(n: int, rng: random.Random) -> tuple[Any, int]:
    count = n // 31
    return [{"role": "user", "content": "a"}] * count, count


def _tiny_responses(n: int, rng: random.Random) -> tuple[Any, int]:
    count = n // 31
    return {"input": [{"role": "user", "content": "a"}] * count}, count


def _repeated(n: int, rng: random.Random) -> tuple[Any, int]:
    text = "make the retry loop back off " * (n // 29)
    return [{"role": "user", "content": text}], len(text)


def _random_words(n: int, rng: random.Random) -> tuple[Any, int]:
    raw = base64.b32encode(rng.randbytes(n * 5 // 9)).decode().lower()
    text = " ".join(raw[i : i + 8] for i in range(0, len(raw), 8))
    return [{"role": "user", "content": text}], len(text)


def _parts(n: int, rng: random.Random) -> tuple[Any, int]:
    count = n // 27
    return [{"role": "user", "content": [{"type": "text", "text": "a"}] * count}], count


def _arguments(n: int, rng: random.Random) -> tuple[Any, int]:
    args = "[" + ",".join(["{}"] * (n // 3)) + "]"
    call = {"id": "k1", "type": "function", "function": {"name": "f", "arguments": args}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "k1", "content": "ok"},
    ]
    return messages, len(args) + 4


def _image(n: int, rng: random.Random) -> tuple[Any, int]:
    data = base64.b64encode(rng.randbytes(n * 3 // 4)).decode()
    part = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}
    return [{"role": "user", "content": [part]}], n * 3 // 4


SHAPES: dict[str, Shape] = {
    "one-character messages": _tiny,
    "one-character Responses items": _tiny_responses,
    "one string of repeated words": _repeated,
    "one string of random words": _random_words,
    "one message of one-character parts": _parts,
    "tool arguments of empty objects": _arguments,
    "one base64 image": _image,
}


def _search(db: Path, word: str) -> float:
    """Seconds of ``timeline search`` for ``word`` in a fresh process."""
    return float(fresh_process(_SEARCH, str(db), CONVERSATION, word)[0])


def _run(path: Path, db: Path) -> tuple[float, int]:
    """Seconds and peak RSS of ``timeline import`` of ``path`` in a fresh process."""
    seconds, peak = fresh_process(_RUN, str(path), str(db), CONVERSATION)
    return float(seconds), int(peak)


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def measure(mb: float, tmp: Path) -> list[tuple[str, ...]]:
    """One row per shape: file MiB, time, peak over the baseline, store, a search."""
    one = tmp / "one.json"
    one.write_text(_compact([{"role": "user", "content": "a"}]))
    _, base = _run(one, tmp / "one.db")
    rows: list[tuple[str, ...]] = []
    for name, shape in SHAPES.items():
        data, text = shape(int(mb * 2**20), random.Random(7))
        path = tmp / "shape.json"
        path.write_text(_compact(data))
        word = _word(name, data)
        del data
        db = tmp / f"shape{len(rows)}.db"
        seconds, peak = _run(path, db)
        size, stored = path.stat().st_size, _size(db)
        over = max(peak - base, 0)
        rows.append(
            (
                name,
                f"{size / 2**20:.1f}",
                f"{seconds:.1f} s",
                f"+{over / 2**20:.0f} MiB ({over / size:.1f}x)",
                f"{stored / 2**20:.1f} MiB ({stored / size:.2f}x the file, "
                f"{stored / text:.2f}x the text)",
                f"{_search(db, word):.2f} s",
            )
        )
    return rows


def table(rows: list[tuple[str, ...]]) -> str:
    lines = [
        "| shape | file MiB | time | peak memory over a one-message import (x the file) "
        "| store | `timeline search` |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def write_docs(text: str, command: str) -> None:
    section = (
        f"{START}\n## Import of every shape (#28 item 6)\n\nProduced by `{command}` (one "
        "run; see `benchmarks/import_shapes.py`). The search is `timeline search` of a "
        "word of the shape's text (`retry`, the random string's first word, or `a`), in a "
        "fresh process."
        f"\n\n{text}\n{END}"
    )
    write_section(START, END, section)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.import_shapes", description=__doc__)
    p.add_argument("--mb", type=float, default=1.0, help="MiB of JSON a shape (about)")
    p.add_argument("--write-docs", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        text = table(measure(args.mb, Path(tmp)))
    print(text)
    if args.write_docs:
        shown = " ".join(a for a in (argv if argv is not None else sys.argv[1:]) if a)
        write_docs(text, f"python -m benchmarks.import_shapes {shown}".strip())


if __name__ == "__main__":
    main()
