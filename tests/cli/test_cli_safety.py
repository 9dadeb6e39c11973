"""The CLI never harms a file and never lets a conversation drive the terminal (issue 27,
items 1-4): ``--html`` refuses the store, existing files and symlinks (``--force`` to
replace, never follow), writes atomically and owner-only; read-only commands on a missing
``--db`` create nothing; control characters from a conversation are escaped in every
human-readable output while ``--json`` stays exact."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

import index_store
from tests.helpers.cli import OPENAI_MESSAGES, cli, import_file
from timeline import Timeline, blocks
from timeline._cli.output import printable

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
"""Sets the terminal's clipboard to ``rm -rf ~`` (base64)."""
CLEAR = "\x1b[2J\x1b[H"
HIDE = "\x1b[8m"
RLO = "\u202e"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(OPENAI_MESSAGES))
    assert import_file(src, "openai", path, "c1").returncode == 0
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _intact(db: Path) -> None:
    listed = cli("list", "--db", str(db), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["conversation"] for r in json.loads(listed.stdout)] == ["c1"]


def _no_temp_files(directory: Path) -> None:
    assert [p.name for p in directory.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.slow
@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_html_never_writes_over_the_store(db: Path, force: bool, suffix: str) -> None:
    """`inspect --html` naming the store (or its -wal/-shm file) is refused, --force or
    not, and the store keeps its conversation."""
    index_store.open(db).close()
    target = Path(f"{db}{suffix}")
    if suffix:  # the sidecar files exist while a connection is open
        holder = index_store.open(db)
        assert target.exists()
    before = target.read_bytes()
    out = cli("inspect", "c1", "--db", str(db), "--html", str(target), *(["--force"] * force))
    if suffix:
        holder.close()
    assert out.returncode == 1 and "is the store itself" in out.stderr and "--html" in out.stderr
    if not suffix:
        assert target.read_bytes() == before
    _intact(db)
    _no_temp_files(db.parent)


@pytest.mark.slow
def test_html_through_a_store_url_is_refused_too(db: Path) -> None:
    """--db given as sqlite:///PATH and --html PATH: still the store, still refused."""
    out = cli("inspect", "c1", "--db", f"sqlite:///{db}", "--html", str(db), "--force")
    assert out.returncode == 1 and "is the store itself" in out.stderr
    _intact(db)


@pytest.mark.slow
def test_html_refuses_an_existing_file_without_force(db: Path, tmp_path: Path) -> None:
    """An existing file is left alone without --force; --force replaces it atomically
    with an owner-only page."""
    page = tmp_path / "page.html"
    page.write_text("keep me")
    os.chmod(page, 0o644)
    out = cli("inspect", "c1", "--db", str(db), "--html", str(page))
    assert out.returncode == 1 and "--force" in out.stderr and str(page) in out.stderr
    assert page.read_text() == "keep me"
    forced = cli("inspect", "c1", "--db", str(db), "--html", str(page), "--force")
    assert forced.returncode == 0, forced.stderr
    assert page.read_text().startswith("<!DOCTYPE html>") and _mode(page) == 0o600
    _no_temp_files(tmp_path)


@pytest.mark.slow
def test_html_never_follows_a_symlink(db: Path, tmp_path: Path) -> None:
    """A symlink at OUT is refused without --force; with --force the link itself is
    replaced by the page and the file it pointed to is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "out.html"
    link.symlink_to(victim)
    out = cli("inspect", "c1", "--db", str(db), "--html", str(link))
    assert out.returncode == 1 and "symlink" in out.stderr
    forced = cli("inspect", "c1", "--db", str(db), "--html", str(link), "--force")
    assert forced.returncode == 0, forced.stderr
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and link.read_text().startswith("<!DOCTYPE html>")
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(tmp_path / "nowhere.html")
    refused = cli("inspect", "c1", "--db", str(db), "--html", str(dangling))
    assert refused.returncode == 1 and not (tmp_path / "nowhere.html").exists()


@pytest.mark.slow
def test_html_page_is_new_and_owner_only(db: Path, tmp_path: Path) -> None:
    """A new page is created 0600 whatever the umask, with no temporary file left."""
    page = tmp_path / "new.html"
    out = cli("inspect", "c1", "--db", str(db), "--html", str(page))
    assert out.returncode == 0, out.stderr
    assert _mode(page) == 0o600 and "readable by you only" in out.stdout
    _no_temp_files(tmp_path)


@pytest.mark.slow
def test_html_to_a_directory_or_missing_directory(db: Path, tmp_path: Path) -> None:
    """A directory or a path in a missing directory: one error line naming --html."""
    for target in (tmp_path, tmp_path / "missing" / "x.html"):
        out = cli("inspect", "c1", "--db", str(db), "--html", str(target), "--force")
        assert out.returncode == 1 and out.stderr.startswith("error: --html")
        assert len(out.stderr.splitlines()) == 1


@pytest.mark.slow
def test_stores_made_by_the_cli_are_owner_only(db: Path, tmp_path: Path) -> None:
    """import and demo create their stores 0600."""
    assert _mode(db) == 0o600
    out = cli("demo", "--turns", "1", "--db", "d.db", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert _mode(tmp_path / "d.db") == 0o600


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["inspect", "c1"],
        ["render", "c1"],
        ["search", "c1", "retry"],
        ["compact", "c1", "--max-tokens", "900"],
        ["delete", "c1"],
        ["inspect", "c1", "--html", "x.html"],
    ],
)
def test_a_missing_store_is_an_error_and_nothing_is_created(
    tmp_path: Path, argv: list[str]
) -> None:
    """A mistyped --db: exit 1, one line naming the path, and no file created."""
    typo = tmp_path / "typo.db"
    out = cli(*argv, "--db", str(typo), cwd=tmp_path)
    assert out.returncode == 1 and len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("error: --db") and str(typo) in out.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A store whose conversation id and tool output carry terminal escape sequences."""
    path = tmp_path / "h.db"
    store = index_store.open(path)
    tl = Timeline(f"evil{CLEAR}id")
    tl.begin_turn()
    tl.append(blocks.user_prompt(f"look at the log {RLO}gnp.exe"))
    call = tl.append(blocks.tool_call("read_log", {"path": f"x{HIDE}"}))
    tl.append(blocks.tool_result(call.call_id or "", f"error in retry {OSC52} loop{CLEAR}"))
    tl.render(f"system {OSC52}")
    tl.persist(store)
    store.close()
    return path


def _safe(text: str) -> None:
    for bad in ("\x1b", "\x07", "\x9b", RLO):
        assert bad not in text, repr(text)


@pytest.mark.slow
def test_search_and_list_escape_control_characters(hostile: Path) -> None:
    """search prints the escape sequences of a tool's output as text, list an id as
    text: nothing reaches the terminal as a control character."""
    cid = f"evil{CLEAR}id"
    found = cli("search", cid, "retry", "--db", str(hostile))
    assert found.returncode == 0, found.stderr
    _safe(found.stdout)
    assert printable(OSC52) in found.stdout
    listed = cli("list", "--db", str(hostile))
    _safe(listed.stdout)
    assert printable(cid) in listed.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["inspect"],
        ["render", "--format", "text"],
        ["compact", "--keep-recent", "1"],
        ["delete"],
        ["search", "nothing-matches-this"],
    ],
)
def test_every_human_readable_output_is_escaped(hostile: Path, argv: list[str]) -> None:
    """inspect, render --format text, compact, delete and their errors: no control
    character from the conversation on stdout or stderr."""
    cid = f"evil{CLEAR}id"
    out = cli(argv[0], cid, *argv[1:], "--db", str(hostile))
    _safe(out.stdout)
    _safe(out.stderr)
    missing = cli(argv[0], f"gone{OSC52}", *argv[1:], "--db", str(hostile))
    assert missing.returncode == 1
    _safe(missing.stderr)


@pytest.mark.slow
def test_json_stays_exact(hostile: Path) -> None:
    """--json output decodes to the exact strings, escape sequences included."""
    cid = f"evil{CLEAR}id"
    hits = json.loads(cli("search", cid, "retry", "--db", str(hostile), "--json").stdout)
    assert hits[0]["snippet"] == f"error in [retry] {OSC52} loop{CLEAR}"
    rows = json.loads(cli("list", "--db", str(hostile), "--json").stdout)
    assert rows[0]["conversation"] == cid
    payload = json.loads(cli("render", cid, "--db", str(hostile), "--format", "openai").stdout)
    assert payload[0]["content"] == f"system {OSC52}"


def test_printable_escapes_c0_c1_del_and_bidi() -> None:
    """Every C0 and C1 control, DEL and the bidi overrides become visible escapes;
    printable text (and, with lines=True, newlines and tabs) is unchanged."""
    controls = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))]
    for char in [*controls, RLO, "\u2066", "\u200f", "\u2028"]:
        shown = printable(f"a{char}b")
        assert char not in shown and shown.startswith("a\\") and shown.endswith("b")
    assert printable("plain text: é ✓ 字") == "plain text: é ✓ 字"
    assert printable("a\n\tb\x1b", lines=True) == "a\n\tb\\x1b"
