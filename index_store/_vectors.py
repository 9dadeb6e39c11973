"""Ranking by meaning, for a store given an :class:`~timeline.Embedder`: each turn-log
block's text embedded when it is stored, the query's when it is searched, and the two
rankings (BM25's and the vectors' cosine) merged by reciprocal-rank fusion.

Vectors are stored unit-length as float32 (4 bytes a dimension), under the embedder's
name (:func:`model_of`): another model's vectors are not compared with this one's, and
:meth:`embed_missing` (each store) embeds what a conversation lacks. Cosine is computed
in Python over the conversation's vectors, so a search costs in proportion to them.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from operator import mul
from typing import Final

from index_store._search import Ranked
from timeline._model import CONV_RANGE_SUMMARY, Block, Embedder, StoreError, fuse, log, search_text

__all__ = [
    "DEPTH",
    "EMBED_CHUNK",
    "embeddable",
    "fused",
    "model_of",
    "nearest",
    "query_vector",
    "try_vectors",
    "vectors",
]

DEPTH: Final = 50
"""How far down each ranking reciprocal-rank fusion looks."""
EMBED_CHUNK: Final = 64
"""Texts handed to the embedder at once."""


def model_of(embedder: Embedder) -> str:
    """The name a model's vectors are stored under: its ``name``, else its class's."""
    name = getattr(embedder, "name", None)
    return name if isinstance(name, str) and name else type(embedder).__qualname__


def embeddable(block: Block) -> str | None:
    """The text a block is embedded by (None: a summary, or a block with no text)."""
    if block.type == CONV_RANGE_SUMMARY:
        return None
    text = search_text(block)
    return text if text.strip() else None


def vectors(embedder: Embedder, texts: Sequence[str]) -> list[bytes]:
    """The packed unit vectors of ``texts`` (the embedder called :data:`EMBED_CHUNK` at a
    time); an embedder that answers with the wrong number of vectors, or with vectors of
    no length, is a StoreError naming what it did."""
    out: list[bytes] = []
    for start in range(0, len(texts), EMBED_CHUNK):
        chunk = texts[start : start + EMBED_CHUNK]
        got = list(embedder.embed(chunk))
        if len(got) != len(chunk):
            raise StoreError(
                f"the embedder {model_of(embedder)!r} gave {len(got)} vectors for "
                f"{len(chunk)} texts; it must give one per text"
            )
        out += [_pack(v, embedder) for v in got]
    return out


def try_vectors(
    embedder: Embedder, conversation_id: str, texts: Sequence[str], doing: str
) -> list[bytes] | None:
    """:func:`vectors`, or None (logged) when the embedder fails: a store keeps working,
    by words alone, whatever its model does."""
    try:
        return vectors(embedder, texts)
    except Exception as exc:  # the model is the caller's: any failure of it
        log.embedder_failed(conversation_id, model_of(embedder), doing, exc)
        return None


def query_vector(embedder: Embedder, conversation_id: str, query: str) -> bytes | None:
    """The query's vector, or None (logged) when the embedder fails or the query is empty."""
    if not query.strip():
        return None
    found = try_vectors(embedder, conversation_id, [query], "embedding a query")
    return found[0] if found else None


def _pack(vector: Sequence[float], embedder: Embedder) -> bytes:
    values = array("f", (float(x) for x in vector))
    norm = math.sqrt(sum(x * x for x in values))
    if not values or not norm or not math.isfinite(norm):
        raise StoreError(
            f"the embedder {model_of(embedder)!r} gave a vector of {len(values)} values "
            "with no length (empty, all zeros or not finite)"
        )
    return array("f", (x / norm for x in values)).tobytes()


def nearest(query: bytes, stored: Iterable[tuple[int, bytes]], depth: int = DEPTH) -> list[int]:
    """The rows whose vectors are nearest the query's (cosine), best first, at most
    ``depth``; vectors of another length are left out."""
    q = array("f")
    q.frombytes(query)
    scored = []
    for seq, blob in stored:
        if len(blob) != len(query):
            continue
        v = array("f")
        v.frombytes(blob)
        scored.append((-sum(map(mul, q, v)), seq))
    scored.sort()
    return [seq for _, seq in scored[:depth]]


def fused(ranked: list[Ranked], near: list[int], depth: int = DEPTH) -> list[Ranked]:
    """BM25's turn-log ranking and the vectors' merged by reciprocal-rank fusion (the
    score is the fusion's), then the summary BM25 found, as before."""
    words = [r.seq for r in ranked if r.kind == "log"][:depth]
    both = [Ranked(seq, score, "log") for seq, score in fuse(words, near[:depth])]
    return both + [r for r in ranked if r.kind != "log"]
