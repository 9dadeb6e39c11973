"""The commands as operators use them (issue 27, items 5-8 and 10): inspect tells the
truth about a conversation's own budget and the provider's count, search says what it
did not show, import finds the format and refuses what is not a conversation, delete
exists, errors name the flag or file, and the demo is linear in its turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.helpers.cli import ANTHROPIC_MESSAGES, OPENAI_MESSAGES, cli, stdout_on_tty
from timeline import CompactionPolicy, Timeline, blocks
from timeline._cli.demo import DEMO_SYSTEM_PROMPT

RESPONSES_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "input_text", "text": "List the files."}]},
    {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    {"role": "assistant", "content": [{"type": "output_text", "text": "One file."}]},
]


def _write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's conversation at its default 16k budget (12 turns)."""
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    out = cli("demo", "--turns", "12", "--db", str(path))
    assert out.returncode == 0, out.stderr
    return path


@pytest.mark.slow
def test_inspect_of_the_demo_uses_its_own_budget_and_system_prompt(demo_db: Path) -> None:
    """inspect without flags reports the demo's 16k budget and trigger and counts its
    system prompt; --max-tokens still overrides the budget."""
    usage = json.loads(cli("inspect", "demo", "--db", str(demo_db), "--json").stdout)
    assert (usage["budget"], usage["trigger"]) == (16_000, 14_400)
    assert usage["compaction"] == "budget 16,000 tokens, compaction at 14,400"
    assert usage["types"]["system prompt"]["tokens"] > 1_000
    text = cli("inspect", "demo", "--db", str(demo_db)).stdout
    assert "no budget" not in text and "of 16,000 tokens" in text
    assert "┃ compaction at 14,400" in text
    other = json.loads(
        cli("inspect", "demo", "--db", str(demo_db), "--json", "--max-tokens", "20000").stdout
    )
    assert (other["budget"], other["trigger"]) == (20_000, 18_000)
    rendered = json.loads(cli("render", "demo", "--db", str(demo_db)).stdout)
    assert rendered["system"][0]["text"] == DEMO_SYSTEM_PROMPT


def _usage_of(tmp_path: Path, reported: int | None) -> dict[str, Any]:
    store = index_store.open(tmp_path / f"u{reported}.db")
    tl = Timeline("u", policy=CompactionPolicy(max_tokens=8_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("what is in a.py?"))
    estimate = tl.render("be brief").tokens
    if reported is not None:
        tl.record_usage(prompt_tokens=estimate + reported)
    tl.persist(store)
    store.close()
    out = cli("inspect", "u", "--db", str(tmp_path / f"u{reported}.db"), "--json")
    return dict(json.loads(out.stdout))


@pytest.mark.slow
def test_no_usage_report_means_no_provider_row(tmp_path: Path) -> None:
    """Without a usage report there is no provider row and no calibration; with one, a
    positive difference is a provider overhead row and a negative one only the
    calibration figure, never a negative row."""
    none = _usage_of(tmp_path, None)
    assert (none["breakdown_report"], none["calibration"]) == (None, 0)
    assert "provider overhead" not in none["types"]
    assert none["tokens"] == sum(t["tokens"] for t in none["types"].values())
    over = _usage_of(tmp_path, 40)
    assert over["types"]["provider overhead"]["tokens"] == over["calibration"] == 40
    assert over["tokens"] == sum(t["tokens"] for t in over["types"].values())
    under = _usage_of(tmp_path, -7)
    assert under["calibration"] == -7 and "provider overhead" not in under["types"]
    assert under["tokens"] == sum(t["tokens"] for t in under["types"].values()) - 7
    assert all(v["tokens"] >= 0 for v in under["types"].values())
    assert all(v["tokens"] >= 0 for v in under["categories"].values())


@pytest.mark.slow
def test_categories_add_up_and_follow_the_bar_order(demo_db: Path) -> None:
    """inspect --json categories: the bar's order, free last; the slices are the
    per-type counts, and with free (the budget minus the calibrated tokens) add up to the
    budget, less a negative calibration."""
    usage = json.loads(cli("inspect", "demo", "--db", str(demo_db), "--json").stdout)
    cats = usage["categories"]
    order = ["system", "summary", "user", "assistant", "tool calls", "tool results"]
    assert [c for c in cats if c in order] == [c for c in order if c in cats]
    assert list(cats)[-1] == "free" and {"system", "user", "tool results"} <= set(cats)
    rows = sum(v["tokens"] for v in usage["types"].values())
    assert sum(v["tokens"] for k, v in cats.items() if k != "free") == rows
    assert cats["free"]["tokens"] == usage["free"] == usage["budget"] - usage["tokens"]
    assert sum(v["tokens"] for v in cats.values()) == usage["budget"] - min(0, usage["calibration"])
    over = -min(0, usage["calibration"]) / usage["budget"]
    assert round(sum(v["share"] for v in cats.values())) == round(100 * (1 + over))


@pytest.fixture
def chatty(tmp_path: Path) -> Path:
    """A conversation where 'retry' occurs in 25 blocks."""
    path = tmp_path / "c.db"
    store = index_store.open(path)
    tl = Timeline("c")
    for i in range(25):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"retry number {i}"))
    tl.persist(store)
    store.close()
    return path


@pytest.mark.slow
def test_search_says_how_many_it_did_not_show(chatty: Path) -> None:
    """A full page of hits says 'N shown of TOTAL'; all shown says 'N matches'."""
    out = cli("search", "c", "retry", "--db", str(chatty))
    assert out.stdout.splitlines()[-1] == "10 shown of 25 matches (--limit shows more)"
    every = cli("search", "c", "retry", "--db", str(chatty), "--limit", "30")
    assert every.stdout.splitlines()[-1] == "25 matches"
    exact = cli("search", "c", "retry", "--db", str(chatty), "--limit", "25")
    assert exact.stdout.splitlines()[-1] == "25 matches"


@pytest.mark.slow
@pytest.mark.parametrize("query", ["", "   ", "\t"])
def test_an_empty_query_is_a_usage_error(chatty: Path, query: str) -> None:
    """An empty or blank QUERY: exit 2, one error line naming QUERY."""
    out = cli("search", "c", query, "--db", str(chatty))
    assert out.returncode == 2 and "QUERY is empty" in out.stderr
    assert len(out.stderr.splitlines()) == 1


@pytest.mark.slow
def test_search_highlights_matches_on_a_terminal(chatty: Path) -> None:
    """On a terminal the matched words are highlighted instead of bracketed; in a pipe
    they are underlined by a line of ``^``, with no colour."""
    shown = stdout_on_tty("search", "c", "retry", "--db", str(chatty), "--limit", "1")
    assert "\x1b[1;33mretry\x1b[0m number" in shown and "[retry]" not in shown
    piped = cli("search", "c", "retry", "--db", str(chatty), "--limit", "1").stdout
    assert "retry number 0\n          ^^^^^\n" in piped and "\x1b" not in piped


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        ("openai", OPENAI_MESSAGES, "openai"),
        ("anthropic", ANTHROPIC_MESSAGES, "anthropic"),
        ("responses", RESPONSES_ITEMS, "responses"),
        ("responses-object", {"instructions": "Be terse.", "input": RESPONSES_ITEMS}, "responses"),
        ("plain", [{"role": "user", "content": "hi"}], "openai"),
    ],
)
def test_import_detects_the_format(tmp_path: Path, name: str, data: Any, fmt: str) -> None:
    """Without --format the import detects it, says so, and stores what the explicit
    format would."""
    src = _write(tmp_path, f"{name}.json", data)
    db = tmp_path / "d.db"
    out = cli("import", str(src), "--db", str(db), "--conversation", "auto")
    assert out.returncode == 0, out.stderr
    assert f"format {fmt} (detected)" in out.stdout
    explicit = cli("import", str(src), "--db", str(db), "--conversation", "x", "--format", fmt)
    assert explicit.returncode == 0, explicit.stderr
    assert "detected" not in explicit.stdout
    store = index_store.open(db)
    auto, given = Timeline.load(store, "auto"), Timeline.load(store, "x")
    assert [(b.type, b.text) for b in auto.blocks] == [(b.type, b.text) for b in given.blocks]
    store.close()


@pytest.mark.slow
def test_a_wrong_format_names_the_right_one(tmp_path: Path) -> None:
    """An Anthropic file imported as --format openai fails naming the element and the
    format the file looks like; nothing is stored."""
    src = _write(tmp_path, "a.json", ANTHROPIC_MESSAGES)
    out = cli("import", str(src), "--format", "openai", "--db", str(tmp_path / "w.db"))
    assert out.returncode == 2  # --conversation missing: usage error first
    out = cli(
        "import",
        str(src),
        "--format",
        "openai",
        "--db",
        str(tmp_path / "w.db"),
        "--conversation",
        "w",
    )
    assert out.returncode == 1 and "(the file looks like --format anthropic)" in out.stderr
    assert not (tmp_path / "w.db").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "data", [[], {"messages": []}, [{"role": "system", "content": "only a system prompt"}]]
)
def test_an_empty_conversation_is_refused(tmp_path: Path, data: Any) -> None:
    """A file with no messages (or only a system prompt) is refused, naming the file."""
    src = _write(tmp_path, "empty.json", data)
    out = cli("import", str(src), "--db", str(tmp_path / "e.db"), "--conversation", "e")
    assert out.returncode == 1 and f"FILE {src}: no messages in it" in out.stderr
    assert not (tmp_path / "e.db").exists()


@pytest.mark.slow
def test_errors_name_the_flag_or_file(tmp_path: Path, demo_db: Path) -> None:
    """A missing FILE or --system @FILE is named with its flag, never as [Errno 2]."""
    missing = tmp_path / "nope.json"
    out = cli("import", str(missing), "--db", str(tmp_path / "x.db"), "--conversation", "x")
    assert out.returncode == 1 and "[Errno" not in out.stderr
    assert out.stderr.startswith(f"error: FILE {missing}: cannot read it: No such file")
    system = cli("render", "demo", "--db", str(demo_db), "--system", f"@{missing}")
    assert system.returncode == 1 and "[Errno" not in system.stderr
    assert system.stderr.startswith(f"error: --system @{missing}: cannot read it")


@pytest.mark.slow
def test_delete(tmp_path: Path) -> None:
    """delete removes the conversation (window, turn log, summaries), says what it
    removed, and leaves the others; deleting it again is an error."""
    src = _write(tmp_path, "chat.json", OPENAI_MESSAGES)
    db = tmp_path / "d.db"
    for cid in ("a", "b"):
        assert cli("import", str(src), "--db", str(db), "--conversation", cid).returncode == 0
    out = cli("delete", "a", "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"deleted conversation 'a' from {db}: 10 blocks, 0 summaries")
    rows = json.loads(cli("list", "--db", str(db), "--json").stdout)
    assert [r["conversation"] for r in rows] == ["b"]
    store = index_store.open(db)
    assert store.turn_log("a") == [] and store.search("a", "retry") == []
    store.close()
    again = cli("delete", "a", "--db", str(db), "--json")
    assert again.returncode == 1 and "'a' is not in the store" in again.stderr
    done = json.loads(cli("delete", "b", "--db", str(db), "--json").stdout)
    assert done == {"conversation": "b", "deleted": True, "blocks": 10, "summaries": 0}


def test_the_demo_reads_the_turn_log_a_fixed_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's per-turn 'evicted' column does not re-read the whole turn log every
    turn (quadratic): the turn log is read the same few times for 3 or 30 turns, and the
    column counts every block of the turn log that is not in the window."""
    from timeline._cli.demo import run_demo

    reads: list[int] = []
    real = index_store.SqliteStore.turn_log

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(index_store.SqliteStore, "turn_log", counted)
    counts = []
    for turns in (3, 30):
        reads.clear()
        db = tmp_path / f"d{turns}.db"
        assert run_demo(turns=turns, max_tokens=6_000, db=str(db), seed=7) == 0
        counts.append(len(reads))
        lines = capsys.readouterr().out.splitlines()
        last = next(line for line in lines if line.split()[:1] == [str(turns)])
        store = index_store.open(db)
        window = store.load_window("demo")
        assert window is not None
        in_window = sum(b.type != "conv.range.summary" for b in window[1].blocks)
        evicted = len(real(store, "demo")) - in_window
        assert int(last.split()[-1].replace(",", "")) == evicted
        store.close()
    assert counts[0] == counts[1] <= 3
