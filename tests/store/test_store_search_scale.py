"""Search on every backend (#28 items 1-2, #29 item 3): the same blocks found for words
anywhere in a text over 1 MB, and scores that depend on the conversation alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.clock import FixedClock
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks

POLICY = CompactionPolicy(max_tokens=1_000_000, keep_recent_turns=1)


def new_tl(cid: str) -> Timeline:
    return Timeline(cid, policy=POLICY, token_counter=HeuristicCounter(), clock=FixedClock())


def word(i: int) -> str:
    """A distinct word no stemmer changes (letters only)."""
    letters = "bcdfghjklmnpqrstvwxz"
    out = ""
    for _ in range(5):
        i, r = divmod(i, 20)
        out += letters[r]
    return "zq" + out


@pytest.mark.slow
def test_words_past_the_first_megabyte_are_found(store: Any) -> None:
    """A 3 MB tool output: its first, middle and last words (each distinct) are found,
    and it loads back whole (PostgreSQL indexed only its first 256 KiB). Between them the
    words come from a small vocabulary (what costs is analysing distinct words, not
    reading far)."""
    probes = (0, 3, 200_000, 399_998, 399_999)
    common = [word(k) for k in range(400_000, 400_064)]
    text = " ".join(word(i) if i in probes else common[i % 64] for i in range(400_000))
    assert len(text.encode()) > 2_800_000
    tl = new_tl("big")
    tl.begin_turn()
    tl.append(blocks.user_prompt("run the listing"))
    call = tl.append(blocks.tool_call("list", {}))
    out = tl.append(blocks.tool_result(call.call_id or "", text))
    tl.append(blocks.assistant_completion("done"))
    tl.persist(store)
    for i in (0, 200_000, 399_999):
        hits = store.search("big", word(i))
        assert [h.block.id for h in hits] == [out.id], (i, word(i))
        assert f"[{word(i)}]" in hits[0].snippet
    assert store.search("big", f"{word(3)} {word(399_998)}")[0].block.id == out.id
    assert store.get_block("big", out.id).text == text


def _session(tl: Timeline, turns: int, words: str, every: int = 1) -> None:
    """Turns whose prompts mention ``words`` every ``every`` turns."""
    for i in range(turns):
        tl.begin_turn()
        said = words if i % every == 0 else "the logs"
        tl.append(blocks.user_prompt(f"turn {i}: {said} in worker {i}"))
        tl.append(blocks.assistant_completion(f"looked at worker {i}"))


def test_scores_depend_on_the_conversation_alone(store: Any) -> None:
    """Another conversation using the same words changes neither the hits nor the scores
    of this one (SQLite's FTS5 bm25 took its statistics from the whole table)."""
    a = new_tl("a")
    _session(a, 6, "retry backoff", every=3)
    a.persist(store)
    before = [(h.block.id, h.score) for h in store.search("a", "retry backoff")]
    assert before
    b = new_tl("b")
    _session(b, 40, "retry retry backoff jitter")
    b.persist(store)
    after = [(h.block.id, h.score) for h in store.search("a", "retry backoff")]
    assert after == before
