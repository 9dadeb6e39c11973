"""Rule 10: a word cut by a "[... N more chars]" marker never makes a false search hit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.clock import FixedClock
from tests.helpers.stores import STORE_KINDS, open_store
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks
from timeline._compaction.digest import cap_request
from timeline._compaction.summarizers.base import block_line
from timeline._compaction.truncation import cut_at_word

WORD = st.text(alphabet="abcdefgh", min_size=1, max_size=12)


@given(st.lists(WORD, min_size=1, max_size=30), st.integers(1, 200))
def test_a_cut_keeps_whole_words_only(words: list[str], cap: int) -> None:
    """Every word of a cut excerpt is a whole word of the text, unless the text's first
    word alone is longer than the cap."""
    text = " ".join(words)
    kept = cut_at_word(text, cap)
    assert text.startswith(kept) and len(kept) <= cap
    if len(words[0]) <= cap:
        assert kept.split() == words[: len(kept.split())]


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda t: cap_request(t, 10), id="valid-truncation-request-cap"),
        pytest.param(lambda t: block_line(blocks.note(t), 10), id="valid-truncation-block-line"),
    ],
)
def test_markers_never_hold_a_fragment(cut: Any) -> None:
    """ "alpha catalogue" capped at 10 keeps "alpha", not "alpha cata"."""
    line = cut("alpha catalogue of things")
    assert "cata" not in line and "alpha" in line and "more chars" in line


def _conversation() -> Timeline:
    policy = CompactionPolicy(max_tokens=1_500, keep_recent_turns=1, user_prompt_cap_chars=9)
    tl = Timeline("cut", policy=policy, token_counter=HeuristicCounter(), clock=FixedClock())
    for i in range(8):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"index catalogue entries for shelf {i} " + "please " * 60))
        tl.append(blocks.assistant_completion(f"Shelf {i} indexed. " + "done " * 120))
        tl.render("sys")
    return tl


@pytest.mark.parametrize(
    "kind", [pytest.param(k, id=f"valid-truncation-search-{k}") for k in STORE_KINDS]
)
def test_no_false_hit_from_a_cut_word(kind: str, tmp_path: Path) -> None:
    """After compaction capped the requests mid-word, searching for the fragment ("cat")
    finds nothing, while the whole word still finds the turn log."""
    store = open_store(kind, tmp_path)
    try:
        tl = _conversation()
        assert any(b.type == "conv.range.summary" for b in tl.blocks)
        tl.persist(store)
        summaries = [b.text for b in store.summaries("cut")]
        assert summaries and all("more chars" in s for s in summaries)
        assert store.search("cut", "cat") == []
        assert store.search("cut", "catalogue")
    finally:
        store.close()
