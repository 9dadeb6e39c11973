"""The recall benchmark (benchmarks/recall) measures what it says: seeded sessions whose
questions are answered by their evidence, baselines that hold what fits, and figures that
are 100% when nothing has to be left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.recall import chat, coding, report
from benchmarks.recall.__main__ import main
from benchmarks.recall.baselines import Mirror
from benchmarks.recall.model import Call, Say, check
from benchmarks.recall.runner import policy_from, run_session
from timeline import HeuristicCounter


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_sessions_are_seeded_and_their_answers_are_in_their_evidence(seed: int) -> None:
    """The same seed gives the same session; every answer is in its evidence block (and a
    tool-output answer in no other block)."""
    for make in (lambda s: chat.generate(s, sessions=6), lambda s: coding.generate(s, turns=40)):
        first, again = make(seed), make(seed)
        assert first == again
        check(first)
        assert first.questions()
    assert chat.generate(seed, sessions=6) != chat.generate(seed + 1, sessions=6)


def test_coding_questions_never_contain_their_answer() -> None:
    """A question names where its fact came from, never the fact itself."""
    session = coding.generate(3, turns=80)
    assert all(a not in q.text for q in session.questions() for a in q.answers)
    distances = {q.distance for q in session.questions()}
    assert distances == {10, 50}


def test_recency_window_keeps_the_newest_blocks_that_fit() -> None:
    """The recency baseline holds the newest blocks within the budget and never starts on
    a tool result whose call it dropped."""
    mirror = Mirror(HeuristicCounter())
    mirror.add(None, "call one")
    mirror.add("r1", "result " * 40, result=True)
    mirror.add("u", "newest words")
    window = mirror.recency(mirror.entries[-1].tokens + 5)
    assert window == "newest words"
    start = mirror.window_start(mirror.entries[1].tokens + mirror.entries[2].tokens)
    assert start == 2  # the result alone would have lost its call


def test_bm25_ranks_the_block_sharing_rare_words_first() -> None:
    """The reference BM25 puts the block with the question's rare words first."""
    mirror = Mirror(HeuristicCounter())
    for i in range(20):
        mirror.add(f"k{i}", f"small talk about the weather number {i}")
    mirror.add("hit", "I've been researching adoption agencies lately")
    assert mirror.reference_ranks("What about adoption agencies?", ("hit",)) == 1
    assert mirror.reference_ranks("weather", ("nothing",)) is None


def test_bm25_hit_on_a_call_finds_its_result() -> None:
    """The reference search counts a hit on a tool call as finding the call's result."""
    mirror = Mirror(HeuristicCounter())
    mirror.add(None, 'bash {"cmd": "pytest tests/cache/test_cache.py -q"}')
    mirror.add("out", "assert 123 == 456", result=True)
    assert mirror.reference_ranks("what did pytest tests/cache/test_cache.py say", ("out",)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["chat", "coding"])
def test_a_budget_larger_than_the_session_finds_every_answer_in_the_prompt(shape: str) -> None:
    """With room for everything the prompt, the recency window and search all hold every
    answer: the measurement itself loses nothing."""
    session = chat.generate(2, sessions=3) if shape == "chat" else coding.generate(2, turns=25)
    run = run_session(session, 900_000, policy_from({}), "memory://")
    figures = report.shares(run.outcomes)
    assert run.outcomes
    assert figures["in prompt"] == figures["recency"] == figures["visible"] == 100.0
    assert run.compactions == 0 and run.prefix_changes == 0


@pytest.mark.slow
def test_a_small_budget_loses_old_answers_from_the_recency_window() -> None:
    """At a budget far below the session, old answers fall out of the recency window, and
    the library compacts."""
    session = coding.generate(4, turns=40)
    run = run_session(session, 4_000, policy_from({}), "memory://")
    figures = report.shares(run.outcomes)
    assert figures["recency"] < 50.0
    assert run.compactions > 0


@pytest.mark.slow
def test_the_command_prints_and_writes_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m benchmarks.recall`` runs both shapes and writes every run's figures."""
    out = tmp_path / "runs.json"
    code = main(
        [
            "--seeds",
            "1",
            "--turns",
            "30",
            "--budgets",
            "4000",
            "--json",
            str(out),
            "--store",
            "memory://",
        ]
    )
    assert code == 0
    runs = json.loads(out.read_text())
    assert {r["shape"] for r in runs} == {"chat", "coding"}
    assert "| chat | default | 4,000 | 1 |" in capsys.readouterr().out


def test_session_steps_are_blocks_of_both_roles_and_tool_output() -> None:
    """A coding session holds prompts, replies and tool calls with their results."""
    steps = coding.generate(5, turns=10).steps
    assert any(isinstance(s, Call) for s in steps)
    assert {s.role for s in steps if isinstance(s, Say)} == {"user", "assistant"}
