"""One meaning per figure on every surface (``docs/cli.md``, "One meaning per figure"):
the demo's table, ``list``, ``inspect --json`` and the HTML page agree on blocks,
summaries, evicted blocks, free tokens, the calibration and a compaction's turn. The CLI
runs in-process here."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import zlib
from pathlib import Path
from typing import Any

import attrs
import pytest

from timeline import CompactionPolicy, Timeline, blocks
from timeline._cli import main
from timeline._html.breakdown import CALIBRATION_ROW, token_breakdown


def quiet(*argv: str) -> str:
    """Run the CLI in-process; what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A 14-turn demo (two compactions and an overflow retry), and what each surface says
    of it."""
    where = tmp_path_factory.mktemp("figures")
    db, page = str(where / "d.db"), str(where / "p.html")
    table = quiet("demo", "--turns", "14", "--db", db)
    listed = json.loads(quiet("list", "--db", db, "--json"))[0]
    usage = json.loads(quiet("inspect", "demo", "--db", db, "--json"))
    quiet("inspect", "demo", "--db", db, "--html", page)
    return {"table": table, "list": listed, "usage": usage, "page": Path(page).read_text()}


def _rows(table: str) -> list[list[str]]:
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["turn", "request"])
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def test_blocks_and_summaries_are_the_same_on_every_surface(demo: dict[str, Any]) -> None:
    """``list``, the page's header and the demo's closing table count the same blocks
    (summaries apart) and the same summaries."""
    listed = demo["list"]
    head = re.search(
        r"(\d[\d,]*) blocks and (\d+) summaries; (\d[\d,]*) blocks evicted", demo["page"]
    )
    assert head is not None
    closing = re.search(
        r"blocks\s+(\d[\d,]*) \((\d[\d,]*) evicted to the store\) and (\d+)", demo["table"]
    )
    assert closing is not None
    page_blocks, page_summaries, page_evicted = (int(g.replace(",", "")) for g in head.groups())
    table_blocks, table_evicted, table_summaries = (
        int(g.replace(",", "")) for g in closing.groups()
    )
    assert page_blocks == table_blocks == listed["blocks"]
    assert page_summaries == table_summaries == listed["summaries"]
    assert page_evicted == table_evicted == int(_rows(demo["table"])[-1][8])


def test_evicted_is_zero_until_the_first_compaction(demo: dict[str, Any]) -> None:
    """The demo's ``evicted`` column counts blocks that left the window: none before the
    first compaction, and never the window itself."""
    rows = _rows(demo["table"])
    first = next(i for i, row in enumerate(rows) if int(row[4]) > 0)
    assert first > 0
    assert all(row[8] == "0" for row in rows[:first])
    assert int(rows[first][8]) > 0
    assert all(row[7] != row[8] for row in rows)


def test_a_compaction_is_labelled_with_the_turn_it_ran_in(demo: dict[str, Any]) -> None:
    """The page names each compaction by the turn during which it ran, the turns the
    demo's table shows compacting."""
    compacting = {f"t{row[0]}" for row in _rows(demo["table"]) if int(row[4]) > 0}
    payload = re.search(r'id="history-data">([^<]*)<', demo["page"])
    assert payload is not None
    entries = json.loads(zlib.decompress(base64.b64decode(payload.group(1))))
    labelled = {
        m.group(1)
        for e in entries
        if e["k"] == "compaction"
        for m in [re.match(r"compaction \d+ in turn (\S+):", e["h"])]
        if m
    }
    latest = re.search(r"ran in turn (t\d+); cut after", demo["page"])
    assert latest is not None
    labelled.add(latest.group(1))
    assert labelled == compacting


def test_free_is_one_figure_and_a_calibration_is_no_share(demo: dict[str, Any]) -> None:
    """The demo's provider counted fewer tokens than the rows: ``free`` is the budget minus
    ``tokens`` at the top and in the categories, the calibration is its own negative
    figure, and no row or share is negative."""
    usage = demo["usage"]
    assert usage["calibration"] < 0
    assert (
        usage["free"] == usage["budget"] - usage["tokens"] == usage["categories"]["free"]["tokens"]
    )
    assert all(row["tokens"] >= 0 and row["share"] >= 0 for row in usage["types"].values())
    assert sum(row["tokens"] for row in usage["types"].values()) == (
        usage["tokens"] - usage["calibration"]
    )
    assert round(sum(row["share"] for row in usage["types"].values()), 1) == 100.0
    assert "fewer than these rows" in demo["page"]


def test_a_provider_counting_more_shows_its_overhead_as_a_row() -> None:
    """A positive calibration is a ``provider overhead`` row and slice, so the rows and
    ``free`` add up to the budget."""
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=5_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hello there"))
    view = tl.render("sys")
    usage = token_breakdown(attrs.evolve(view, count_tokens=lambda: view.tokens + 40))
    assert usage["calibration"] == 40
    assert usage["types"][CALIBRATION_ROW]["tokens"] == 40
    slices = sum(row["tokens"] for row in usage["categories"].values())
    assert slices == 5_000
