"""One BM25 ranking (timeline.model.ranking): what ranks a text higher, the in-memory
index, and reciprocal-rank fusion."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from timeline._model.ranking import Bm25, Bm25Index, Corpus, fuse


def ranked(texts: dict[str, str], query: str) -> list[str]:
    index: Bm25Index[str] = Bm25Index()
    for key, text in texts.items():
        index.add(key, text)
    return [key for key, _ in index.search(query)]


def test_more_of_the_query_ranks_higher() -> None:
    """A text holding two of the query's words beats one holding one; a text holding
    none is not a hit."""
    texts = {"one": "adoption papers", "two": "adoption agencies", "none": "hiking trip"}
    assert ranked(texts, "adoption agencies") == ["two", "one"]


def test_a_rarer_word_weighs_more() -> None:
    """Of two texts each holding one query word, the one with the rarer word ranks first."""
    texts = {f"n{i}": "meeting notes" for i in range(5)}
    texts["rare"] = "sunrise painting"
    texts["common"] = "meeting tomorrow"
    assert ranked(texts, "meeting sunrise")[0] == "rare"


def test_a_shorter_text_ranks_higher_for_the_same_counts() -> None:
    """Length discounts counts: the same word in a short text beats it in a long one."""
    texts = {"long": "pottery " + "and then some more words " * 20, "short": "pottery class"}
    assert ranked(texts, "pottery") == ["short", "long"]


def test_every_word_counts_however_long_the_query() -> None:
    """A word after the first sixteen of a query still finds its text."""
    filler = " ".join(f"zq{a}{b}" for a in "bcd" for b in "fghjklmn")
    texts = {"answer": "the deploy script lives in scripts/release.sh", "other": "unrelated"}
    assert ranked(texts, f"{filler} release.sh") == ["answer"]


def test_equal_scores_keep_the_order_texts_were_added() -> None:
    """Ties are broken by insertion order, whatever the keys."""
    assert ranked({"b9": "same words", "b10": "same words"}, "words") == ["b9", "b10"]


def test_discard_and_replace() -> None:
    """discard forgets a text and its statistics; add under a key replaces it."""
    index: Bm25Index[str] = Bm25Index()
    index.add("a", "retry backoff")
    index.add("b", "retry")
    index.discard("b")
    index.discard("missing")
    assert len(index) == 1 and index.corpus.terms == 2
    index.add("a", "jitter")
    assert index.search("retry") == [] and [k for k, _ in index.search("jitter")] == ["a"]


def test_scores_do_not_depend_on_other_texts_order() -> None:
    """The same texts added in another order score the same."""
    texts = {"a": "retry backoff jitter", "b": "retry loop", "c": "jitter buffer"}
    one: Bm25Index[str] = Bm25Index()
    two: Bm25Index[str] = Bm25Index()
    for key in texts:
        one.add(key, texts[key])
    for key in reversed(list(texts)):
        two.add(key, texts[key])
    assert dict(one.search("retry jitter")) == dict(two.search("retry jitter"))


def test_fusion_rewards_agreement() -> None:
    """A key ranked well by both rankings beats one ranked first by one of them only."""
    fused = [key for key, _ in fuse(["a", "b", "c"], ["b", "d", "a"])]
    assert fused[:2] == ["b", "a"] and set(fused) == {"a", "b", "c", "d"}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 400), st.dictionaries(st.sampled_from("abcde"), st.integers(1, 9))
        ),
        min_size=1,
        max_size=30,
    ),
    st.lists(st.sampled_from("abcdef"), min_size=1, max_size=6, unique=True),
)
def test_scoring_a_term_at_a_time_gives_the_same_floats(
    texts: list[tuple[int, dict[str, int]]], terms: list[str]
) -> None:
    """Scores summed a term at a time (each term's texts) are the very floats of scoring
    each text's terms in query order (what a backend reading postings computes)."""
    holding = {t: sum(t in counts for _, counts in texts) for t in terms}
    corpus = Corpus(len(texts), sum(length for length, _ in texts))
    scorer = Bm25(terms, corpus, holding)
    held = [
        [(k, counts[t], length) for k, (length, counts) in enumerate(texts) if t in counts]
        for t in terms
    ]
    want = {
        k: scorer.score_counts(length, [counts.get(t, 0) for t in terms])
        for k, (length, counts) in enumerate(texts)
        if any(t in counts for t in terms)
    }
    assert want == scorer.score_terms(held)
