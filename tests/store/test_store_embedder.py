"""A store given an Embedder ranks by meaning as well as by words (reciprocal-rank fusion
of BM25 and cosine), on every backend; without one, BM25 alone, as before."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import pytest

import index_store
from tests.helpers.clock import FixedClock
from timeline import Embedder, HeuristicCounter, StoreUnavailableError, Timeline, blocks

CONCEPTS = {
    "car": 0,
    "automobile": 0,
    "sedan": 0,
    "dog": 1,
    "puppy": 1,
    "labrador": 1,
    "paint": 2,
    "painted": 2,
    "watercolor": 2,
}


class Concepts:
    """A deterministic embedder: a text's vector counts the concepts its words name (one
    axis for everything else)."""

    name = "concepts-v1"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0, 0.0, 0.0, 0.1]
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                if word in CONCEPTS:
                    vector[CONCEPTS[word]] += 1.0
            out.append(vector)
        return out


class Broken:
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("the model server is down")


SAID = [
    "I finally bought a sedan last weekend, a blue one.",
    "We adopted a labrador from the shelter.",
    "Lunch was pasta with friends downtown.",
    "I tried watercolor on the balcony at sunrise.",
    "The meeting moved to Thursday afternoon.",
]


def chat(store: Any, cid: str = "c") -> dict[str, str]:
    """The chat above, persisted; block ids by text."""
    tl = Timeline(cid, token_counter=HeuristicCounter(), clock=FixedClock())
    ids = {}
    for text in SAID:
        tl.begin_turn()
        ids[text] = tl.append(blocks.user_prompt(text)).id
        tl.append(blocks.assistant_completion("Noted."))
    tl.persist(store)
    return ids


def test_a_question_is_found_by_meaning(store: Any) -> None:
    """No word of the question is in its answer: words alone miss it, the embedder finds
    it first."""
    ids = chat(store)
    question = "Which car did I get?"
    assert ids[SAID[0]] not in [h.block.id for h in store.search("c", question, limit=3)]
    store.embedder = Concepts()
    store.embed_missing("c")
    hits = store.search("c", question, limit=3)
    assert hits[0].block.id == ids[SAID[0]]
    assert asyncio.run(store.asearch("c", question, limit=3))[0].block.id == ids[SAID[0]]


def test_blocks_are_embedded_as_they_are_stored(store: Any) -> None:
    """With an embedder, a persist embeds its turn-log blocks (summaries and empty turn
    headers left out): nothing is missing afterwards."""
    store.embedder = Concepts()
    ids = chat(store)
    assert store.embedder.calls == 1
    assert store.embed_missing("c") == 0
    assert store.search("c", "my puppy", limit=1)[0].block.id == ids[SAID[1]]


def test_words_and_meaning_agree_first(store: Any) -> None:
    """A block both rankings find beats one only meaning finds."""
    store.embedder = Concepts()
    ids = chat(store)
    hits = store.search("c", "watercolor painted", limit=5)
    assert hits[0].block.id == ids[SAID[3]]


def test_a_failing_embedder_never_stops_the_agent(
    store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Persist and search work by words when the model fails; the failure is logged."""
    store.embedder = Broken()
    with caplog.at_level(logging.WARNING, logger="timeline"):
        ids = chat(store)
        hits = store.search("c", "labrador shelter", limit=2)
    assert hits[0].block.id == ids[SAID[1]]
    assert store.embed_missing("c") == 0
    assert any("embedder failed" in r.getMessage() for r in caplog.records)


def test_another_model_s_vectors_are_not_compared() -> None:
    """Vectors are kept under the embedder's name: a new model embeds again."""
    store = index_store.open("memory://", embedder=Concepts())
    chat(store)

    class Renamed(Concepts):
        name = "concepts-v2"

    store.embedder = Renamed()
    assert store.embed_missing("c") == len(SAID) * 2


def test_bm25_is_the_default_and_a_bad_embedder_is_refused() -> None:
    """open() takes no embedder unless given one; a non-embedder is a clear error."""
    assert index_store.open("memory://").embedder is None
    assert isinstance(Concepts(), Embedder)
    with pytest.raises(StoreUnavailableError, match="embed"):
        index_store.open("memory://", embedder=object())  # type: ignore[arg-type]
