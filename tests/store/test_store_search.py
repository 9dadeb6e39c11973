"""Search that answers questions, on every backend: one BM25 ranking over every content
word of a question, summaries kept apart from the turn log, a tool call and its result
found together, and the same hits, scores and snippets on memory, SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.helpers.clock import FixedClock
from timeline import CompactionPolicy, HeuristicCounter, SummaryRequest, Timeline, blocks

CHAT = [
    ("Caroline", "Hey Melanie! I went to the LGBTQ support group yesterday, it was powerful."),
    ("Melanie", "That's great, Caroline. What did you do after that?"),
    ("Caroline", "Researching adoption agencies, I want to give a kid a loving home."),
    ("Melanie", "Wow, what made you decide that now?"),
    ("Caroline", "My own journey. I did a lot of thinking about family this year."),
    ("Melanie", "I painted a sunrise by the lake last week, it calmed me down."),
    ("Caroline", "Did you? I love your paintings. What did you use?"),
    ("Melanie", "Oil paints on a small canvas, the one my kids gave me."),
]


class Transcript:
    """A summarizer that keeps every word (a long summary holds every word of a question
    when no single utterance does)."""

    def summarize(self, request: SummaryRequest) -> str:
        texts = [b.text for b in request.blocks]
        return " ".join([request.previous_summary, *texts]).strip()


def chat(cid: str, rounds: int, max_tokens: int) -> Timeline:
    """A two-person chat, one turn per exchange, compacted as it goes."""
    tl = Timeline(
        cid,
        policy=CompactionPolicy(max_tokens=max_tokens, keep_recent_turns=1),
        summarizer=Transcript(),
        token_counter=HeuristicCounter(),
        clock=FixedClock(),
    )
    for r in range(rounds):
        for i in range(0, len(CHAT), 2):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"{CHAT[i][0]}: {CHAT[i][1]} (session {r})"))
            tl.append(blocks.assistant_completion(f"{CHAT[i + 1][0]}: {CHAT[i + 1][1]}"))
            tl.render("You relay a chat.")
    return tl


def coding(cid: str) -> tuple[Timeline, dict[str, Any]]:
    """A coding session: shell commands and their output."""
    tl = Timeline(
        cid,
        policy=CompactionPolicy(max_tokens=1_500, keep_recent_turns=1),
        token_counter=HeuristicCounter(),
        clock=FixedClock(),
    )
    made: dict[str, Any] = {}
    runs = [
        ("ls src", "api.py\nworker.py\nsettings.py"),
        ("pytest -x tests/test_worker.py", "12 passed in 0.4s"),
        (
            "pytest -x tests/test_api.py",
            "FAILED tests/test_api.py::test_login - AssertionError: "
            "expected 200, got 500\n1 failed, 11 passed in 0.9s",
        ),
        ("git diff --stat", " src/api.py | 4 ++--\n 1 file changed"),
        ("cat scripts/release_v2.sh", "#!/bin/sh\nset -e\ntwine upload dist/*"),
    ]
    for n, (cmd, out) in enumerate(runs * 2):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"step {n}: run the next check"))
        call = tl.append(blocks.tool_call("bash", {"cmd": cmd}))
        result = tl.append(blocks.tool_result(call.call_id or "", out, tool_id="bash"))
        tl.append(blocks.assistant_completion("Looked at the output."))
        made.setdefault(cmd, (call, result))
        tl.render("You are a coding agent.")
    return tl, made


def test_a_question_finds_the_utterance_not_an_old_summary(store: Any) -> None:
    """ "What did Caroline research?" ranks the utterance about researching adoption
    agencies first; no superseded summary is a hit, the latest comes after the log."""
    tl = chat("c", rounds=4, max_tokens=700)
    tl.persist(store)
    assert len(store.summaries("c")) >= 2
    hits = store.search("c", "What did Caroline research?", limit=10)
    assert hits[0].kind == "log" and "adoption agencies" in hits[0].block.text
    assert "[Researching]" in hits[0].snippet
    kinds = [h.kind for h in hits]
    assert kinds == sorted(kinds)  # log hits first
    latest = store.summaries("c")[-1].id
    assert {h.block.id for h in hits if h.kind == "summary"} <= {latest}


def test_every_word_of_a_long_question_counts(store: Any) -> None:
    """A path after the sixteenth word of a question still finds the block naming it."""
    tl, made = coding("c")
    tl.persist(store)
    question = (
        "after all the back and forth we had about the api tests, the worker and the "
        "settings, and the diff, can you show me what is in scripts/release_v2.sh"
    )
    assert len(question.split()) > 20
    call, result = made["cat scripts/release_v2.sh"]
    top = store.search("c", question, limit=3)[0]
    assert top.block.id in {call.id, result.id}


def test_a_result_is_found_by_its_command(store: Any) -> None:
    """A question naming a command finds its output: one hit for the call and its
    result, the other attached (the first run, not the later identical one, comes first)."""
    tl, made = coding("c")
    tl.persist(store)
    call, result = made["pytest -x tests/test_api.py"]
    top = store.search("c", "what did pytest -x tests/test_api.py say?", limit=5)[0]
    pair = {top.block.id, (top.call or top.result or top.block).id}
    assert pair == {call.id, result.id}
    ids = [h.block.id for h in store.search("c", "pytest test_api", limit=10)]
    assert len(ids) == len(set(ids)) and not {call.id, result.id} <= set(ids)


def test_a_hit_on_output_names_its_call(store: Any) -> None:
    """Words only the output holds find the result, with the call that produced it."""
    tl, made = coding("c")
    tl.persist(store)
    call, result = made["pytest -x tests/test_api.py"]
    top = store.search("c", "AssertionError expected 200", limit=3)[0]
    assert top.block.id == result.id
    assert top.call is not None and top.call.id == call.id and top.result is None
    assert "[AssertionError]" in top.snippet


def test_summaries_do_not_change_the_log_s_scores(store: Any, tmp_path: Path) -> None:
    """The same turn log ranks and scores the same whether or not summaries were made."""
    compacted = chat("c", rounds=3, max_tokens=700)
    whole = chat("w", rounds=3, max_tokens=1_000_000)
    compacted.persist(store)
    whole.persist(store)
    assert store.summaries("c") and not store.summaries("w")
    for question in ("What did Caroline research?", "sunrise painting lake", "kids"):

        def seen(cid: str, q: str = question) -> list[tuple[str, float]]:
            return [
                (h.block.text, h.score) for h in store.search(cid, q, limit=50) if h.kind == "log"
            ]

        assert seen("c") == seen("w")


def test_stop_words_alone_find_nothing(store: Any) -> None:
    """A query of stop words only has nothing to be searched by."""
    chat("c", rounds=1, max_tokens=1_000_000).persist(store)
    assert store.search("c", "what did you do", limit=5) == []


def _seen(store: Any, cid: str, query: str) -> list[tuple[Any, ...]]:
    return [
        (
            h.path,
            h.kind,
            h.score,
            h.snippet,
            getattr(h.call, "path", None),
            getattr(h.result, "path", None),
        )
        for h in store.search(cid, query, limit=20)
    ]


@pytest.mark.parametrize(
    "query",
    [
        "What did Caroline research?",
        "pytest test_api AssertionError",
        "release_v2.sh",
        "paintings kids canvas",
        "session 2 lake",
    ],
)
def test_every_backend_ranks_the_same(store: Any, query: str) -> None:
    """Hits, order, scores, snippets and attached calls are the memory store's."""
    reference = index_store.open("memory://")
    for target in (store, reference):
        chat("chat", rounds=3, max_tokens=700).persist(target)
        coding("code")[0].persist(target)
    for cid in ("chat", "code"):
        assert _seen(store, cid, query) == _seen(reference, cid, query)


def test_the_first_hits_do_not_depend_on_the_limit(store: Any) -> None:
    """A search for 5 hits gives the first 5 of a search for all of them: blocks left
    unread because they could not be hits would not have been."""
    import random

    rng = random.Random(7)
    words = [f"w{a}{b}x" for a in "bcdfghjk" for b in "lmnpqrst"]
    tl = Timeline("c", token_counter=HeuristicCounter(), clock=FixedClock())
    for _ in range(60):
        tl.begin_turn()
        tl.append(blocks.user_prompt(" ".join(rng.choices(words[:12], k=rng.randint(1, 4)))))
        call = tl.append(blocks.tool_call("grep", {"pattern": rng.choice(words)}))
        out = " ".join(rng.choices(words, k=rng.randint(1, 60)))
        tl.append(blocks.tool_result(call.call_id or "", out))
    tl.persist(store)
    for _ in range(25):
        query = " ".join(rng.sample(words, rng.randint(1, 6)))
        few = [(h.block.id, h.score) for h in store.search("c", query, limit=5)]
        every = [(h.block.id, h.score) for h in store.search("c", query, limit=500)]
        assert few == every[:5], query


def test_a_block_whose_score_is_its_bound_is_still_read(store: Any) -> None:
    """A block of one word, said as often as any block says it, scores exactly the most
    that word can add; blocks of equal scores keep their stored order whatever the limit,
    so such a block is never left unread in favour of a later one."""
    tl = Timeline("c", token_counter=HeuristicCounter(), clock=FixedClock())
    texts = ["zebra zebra", "okapi", "zebra", "okapi okapi zebra", "zebra", "zebra zebra"]
    for text in texts * 3 + ["lion " * 5]:
        tl.begin_turn()
        tl.append(blocks.user_prompt(text))
    tl.persist(store)
    for query in ("zebra", "okapi", "zebra okapi", "lion zebra"):
        every = [(h.block.id, h.score) for h in store.search("c", query, limit=100)]
        for limit in range(1, len(every) + 1):
            few = [(h.block.id, h.score) for h in store.search("c", query, limit=limit)]
            assert few == every[:limit], (query, limit)


def test_a_word_held_across_many_persists_ranks_as_in_memory(store: Any) -> None:
    """A word held by hundreds of blocks, persisted once in a large batch and then a few
    blocks at a time, ranks every block as the memory store does (a backend that keeps a
    word's blocks in parts, appended to as persists come, finds them all)."""
    import random

    rng = random.Random(11)
    words = ["alpha", "beta", "gamma", "delta", "omega"] + [f"rare{n}" for n in range(40)]
    reference = index_store.open("memory://")
    tls = [Timeline("c", token_counter=HeuristicCounter(), clock=FixedClock()) for _ in "ab"]
    for batch in [150] + [rng.randint(1, 9) for _ in range(40)]:
        for _ in range(batch):
            text = " ".join(rng.choices(words[:5], k=rng.randint(1, 6)) + rng.sample(words, 2))
            for tl in tls:
                tl.begin_turn()
                tl.append(blocks.user_prompt(text))
        tls[0].persist(store)
        tls[1].persist(reference)
    for query in ("alpha", "alpha beta gamma", "omega rare3", "rare7 rare8 delta"):
        assert _seen(store, "c", query) == _seen(reference, "c", query), query


def test_hits_are_those_of_scoring_every_block(store: Any) -> None:
    """However many blocks hold a query's common words, the hits, their order and their
    scores are those of scoring every block by BM25 (``Bm25Index`` over the same texts):
    a search leaves blocks unscored only when they could not be hits."""
    import random

    from timeline._model.ranking import Bm25Index
    from timeline._model.search_text import block_counts

    rng = random.Random(5)
    common = ["alpha", "beta", "gamma", "delta"]
    rare = [f"word{n}" for n in range(60)]
    tl = Timeline("c", token_counter=HeuristicCounter(), clock=FixedClock())
    for _ in range(12):
        for _ in range(25):
            text = " ".join(rng.choices(common, k=rng.randint(1, 8)) + rng.sample(rare, 2))
            tl.begin_turn()
            tl.append(blocks.user_prompt(text))
        tl.persist(store)
    index: Bm25Index[str] = Bm25Index()
    for block in tl.blocks:
        index.add_counts(block.id, block_counts(block))
    for _ in range(30):
        query = " ".join(
            rng.sample(common, rng.randint(1, 4)) + rng.sample(rare, rng.randint(0, 3))
        )
        for limit in (1, 3, 10):
            want = [(key, round(score, 6)) for key, score in index.search(query, limit)]
            assert [(h.block.id, h.score) for h in store.search("c", query, limit)] == want
