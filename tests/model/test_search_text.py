"""What a word is for search (timeline.model.search_text), the stemmer, and snippets."""

from __future__ import annotations

import tracemalloc
import unicodedata

import pytest

from timeline import blocks
from timeline._model._marks import MARKS
from timeline._model.porter import stem
from timeline._model.search_text import (
    MAX_TERM_CHARS,
    block_counts,
    query_terms,
    term_counts,
    term_spans,
    terms,
)
from timeline._model.snippet import snippet


def found(query: str, text: str) -> bool:
    """Every term of ``query`` is a term of ``text``."""
    wanted = query_terms(query)
    return bool(wanted) and set(wanted) <= set(terms(text))


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("What did Caroline research?", "Researching adoption agencies, Caroline said."),
        ("failing tests", "3 tests failed"),
        ("retry backoff", "def retry_with_backoff(attempt):"),
        ("user name", "user = getUserName()"),
        ("http server", "class HTTPServer:"),
        ("worker_3.py", "edited src/worker_3.py"),
        ("os path join", "os.path.join(root, name)"),
        ("python 3.14", "python 3.14 is out"),
        ("port 7", "bound to port 007"),
        ("unicode", "Ünïcödé ✓"),
        ("ÜNÏCÖDÉ", "ünïcödé"),
        ("领养", "我们研究了领养机构"),
        ("猫", "小猫咪"),
        ("हिंदी", "हिंदी भाषा"),
        ("ids", "the IDs of the rows"),
        ("AssertionError", "E   AssertionError: expected 3"),
        ("assert error", "E   AssertionError: expected 3"),
        ("a3f9c2e1", "commit a3f9c2e1 merged"),
    ],
)
def test_a_query_finds_a_text_by_its_words(query: str, text: str) -> None:
    """Every term of the query is a term of the text that answers it."""
    assert found(query, text)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("retry", "preretrying"),
        ("unicode", "unicorn"),
        ("3.14", "3 14"),
        ("a3f9c2e1", "a3f9c2e2"),
    ],
)
def test_a_query_does_not_find_what_only_looks_alike(query: str, text: str) -> None:
    """Terms are whole words or parts of identifiers, never substrings."""
    assert not found(query, text)


def test_stop_words_and_single_letters_are_not_searched() -> None:
    """A question is searched by its content words; one of stop words only finds nothing."""
    assert query_terms("What did Caroline research?") == query_terms("caroline research")
    assert query_terms("what did you do with the and of it") == []
    assert query_terms("a b c") == []
    assert query_terms("7") == ["7"]


def test_every_word_of_a_long_query_counts() -> None:
    """A query's terms are all kept, in order, each once."""
    words = [f"zq{a}{b}" for a in "bcdfg" for b in "hjklmnpt"]
    assert query_terms(" ".join(words + words)) == words


def test_a_long_word_is_one_capped_term() -> None:
    """A word over MAX_TERM_CHARS (base64, a minified line) is one term of its head."""
    blob = "QUJD" * 100
    assert terms(blob) == [blob.lower()[:MAX_TERM_CHARS]]


def test_counts_and_spans_agree_with_terms() -> None:
    """term_counts counts terms(); term_spans gives each term where the text holds it."""
    text = "retry_policy: retry the getUserName call, retry again"
    counts = term_counts(text)
    assert counts == {t: terms(text).count(t) for t in set(terms(text))}
    assert counts["retri"] == 3
    assert [text[a:b] for a, b, t in term_spans(text) if t == "user"] == ["User"]


def test_a_tool_result_is_found_by_its_call() -> None:
    """A result's counts hold its call's tool name and argument values (not the JSON's
    keys or escapes)."""
    call = blocks.tool_call("bash", {"cmd": "pytest -x tests/test_api.py\nexit"})
    result = blocks.tool_result("c1", "1 failed, 3 passed")
    alone = block_counts(result)
    both = block_counts(result, call)
    assert "pytest" not in alone and {"bash", "pytest", "test_api", "exit"} <= set(both)
    assert "cmd" not in both and "nexit" not in both
    assert sum(both.values()) == sum(alone.values()) + sum(block_counts(call).values())


def test_the_marks_table_is_every_combining_mark() -> None:
    """MARKS lists exactly the characters of categories M* (this Python's Unicode)."""
    spans = []  # single characters, and ranges written "a-b"
    i = 0
    while i < len(MARKS):
        if i + 2 < len(MARKS) and MARKS[i + 1] == "-":
            spans.append((ord(MARKS[i]), ord(MARKS[i + 2])))
            i += 3
        else:
            spans.append((ord(MARKS[i]), ord(MARKS[i])))
            i += 1
    table = {cp for a, b in spans for cp in range(a, b + 1)}
    marks = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)).startswith("M")}
    assert table == marks


@pytest.mark.parametrize(
    ("word", "want"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("feed", "feed"),
        ("agreed", "agre"),
        ("motoring", "motor"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("happy", "happi"),
        ("relational", "relat"),
        ("generalization", "gener"),
        ("sensibiliti", "sensibl"),
        ("adjustment", "adjust"),
        ("controll", "control"),
        ("researching", "research"),
        ("Researching", "Researching"),
        ("é", "é"),
    ],
)
def test_stems_are_porter_s(word: str, want: str) -> None:
    """The published algorithm's own examples; only lower-case ASCII words are stemmed."""
    assert stem(word) == want


class TestSnippet:
    def test_the_matched_words_are_marked(self) -> None:
        """Each word or identifier part whose term is the query's is in brackets."""
        text = "I went back to the retry_policy. Retrying helped; preretrying did not."
        assert snippet(text, query_terms("retry")) == (
            "I went back to the [retry]_policy. [Retrying] helped; preretrying did not."
        )

    def test_the_window_is_where_the_terms_are_densest(self) -> None:
        """A long text's snippet is the window holding the most distinct query terms."""
        text = "adoption " + "filler words here " * 30 + "adoption agencies research " + "x " * 50
        got = snippet(text, query_terms("research adoption agencies"))
        assert got.startswith("…") and got.endswith("…")
        assert "[adoption] [agencies] [research]" in got

    def test_a_very_long_text_is_not_analysed_whole(self) -> None:
        """A match deep in a text of megabytes is found and marked."""
        text = "lorem ipsum " * 200_000 + "the Agencies replied " + "dolor " * 100
        got = snippet(text, query_terms("agency"))
        assert "[Agencies]" in got

    def test_no_match_shows_the_start(self) -> None:
        """A hit found by its call's words shows the start of its own text."""
        assert snippet("1 failed, 3 passed", query_terms("pytest")) == "1 failed, 3 passed"


@pytest.mark.parametrize(
    "unit",
    [
        "make the retry loop back off ",
        "Ünïcödé 领养机构 worker_3.py 3.14\ngetUserName ",
        "10.0.0.1 deadbeef42 x",  # no break at the end of a unit: pieces cut elsewhere
        "नमस्ते दुनिया\n",
    ],
)
def test_a_long_text_counts_as_its_words(unit: str) -> None:
    """A long text is split into words a piece at a time (memory that does not grow with
    its length): its counts are those of all its words at once, whatever a piece's edge
    falls on."""
    import importlib
    from collections import Counter

    search_text = importlib.import_module("timeline._model.search_text")

    for text in (unit * 9_000, "a" * 70_000 + " " + unit * 3_000, unit * 4_000 + "b" * 40_000):
        want: dict[str, int] = {}
        for word, n in Counter(search_text._words_of(text)).items():
            for term in terms(word):
                want[term] = want.get(term, 0) + n
        assert term_counts(text) == want


def test_the_word_memo_stays_small_over_an_endless_vocabulary() -> None:
    """A session's vocabulary grows without end (every path, identifier and number is a
    word): the analyses remembered for reuse stay under five megabytes however many
    distinct words were analysed (30,000 words once held 9 MB at the peak)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for i in range(0, 30_000, 500):
            terms(" ".join(f"w{j}" for j in range(i, i + 500)))
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20
