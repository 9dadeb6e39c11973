"""A recall-benchmark session: what is appended, when the prompt is rendered, and the
questions asked, each with the blocks that hold its evidence and the strings of its answer.

A session is a flat list of steps, the same input for the library and for every baseline.
Blocks that can be evidence carry a local ``key``; a runner maps it to the id the library
gave the stored block.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import attrs

Role = Literal["user", "assistant"]


@attrs.frozen
class Turn:
    """A new turn (a chat session, or one task of a coding agent) starting at ``when``."""

    when: dt.datetime


@attrs.frozen
class Say:
    """A user prompt or an assistant text."""

    role: Role
    text: str
    key: str | None = None
    render: bool = True
    """A model request follows this block (its prompt is rendered here)."""


@attrs.frozen
class Call:
    """A tool call and its result (a result always follows its call)."""

    tool: str
    params: dict[str, Any]
    result: str
    key: str | None = None
    """The key of the result block (evidence lives in tool output)."""


@attrs.frozen
class Question:
    """A question whose answer is in earlier blocks.

    ``evidence``: the keys of every block the answer needs; ``answers``: strings that
    appear verbatim in that evidence, all of which a prompt must hold to hold the answer.
    """

    qid: str
    text: str
    evidence: tuple[str, ...]
    answers: tuple[str, ...]
    kind: str
    distance: int | None = None
    """Turns between the evidence and the question (None: asked at the end)."""


@attrs.frozen
class Ask:
    """The question is asked here, as the next user prompt, and the prompt rendered."""

    question: Question


Step = Turn | Say | Call | Ask


@attrs.frozen
class Session:
    """One seeded conversation of one shape, and the questions asked about it."""

    shape: str
    seed: int
    system: str
    steps: tuple[Step, ...]
    final_questions: tuple[Question, ...] = ()
    """Asked after the whole session, each on a fresh load of the persisted conversation."""

    def questions(self) -> list[Question]:
        inline = [s.question for s in self.steps if isinstance(s, Ask)]
        return inline + list(self.final_questions)

    def evidence_texts(self) -> dict[str, str]:
        """The text of every keyed block (to check that answers occur where they should)."""
        texts: dict[str, str] = {}
        for step in self.steps:
            if isinstance(step, Say) and step.key:
                texts[step.key] = step.text
            elif isinstance(step, Call) and step.key:
                texts[step.key] = step.result
        return texts


def check(session: Session) -> None:
    """Every answer string occurs in one of its evidence blocks, and (for the questions
    about one line of tool output) in no other block: the generator's promise."""
    texts = session.evidence_texts()
    all_texts = [s.text for s in session.steps if isinstance(s, Say)] + [
        s.result for s in session.steps if isinstance(s, Call)
    ]
    for q in session.questions():
        for key in q.evidence:
            if key not in texts:
                raise AssertionError(f"{q.qid}: evidence {key} is not a keyed block")
        for answer in q.answers:
            if not any(answer in texts[k] for k in q.evidence):
                raise AssertionError(f"{q.qid}: {answer!r} is in none of its evidence")
            if q.kind.startswith("tool") and sum(answer in t for t in all_texts) != 1:
                raise AssertionError(f"{q.qid}: {answer!r} occurs in more than one block")
