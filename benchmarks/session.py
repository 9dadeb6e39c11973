"""A seeded synthetic coding-agent session, the same input for every strategy.

Per turn: a user prompt (30-300 words), 0-8 sequential tool call/result pairs
(read_file, write_file, edit_file, bash, grep, memory_read) with heavy-tailed result
sizes (100-12,000 chars, log-normal; code, logs and listings at about 4 chars a token),
then an assistant completion. A model request follows every user prompt and every tool
result, as a ReAct loop makes them. The system prompt is about 1,500 tokens.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Literal

import attrs

WORDS = [
    "the",
    "retry",
    "logic",
    "in",
    "the",
    "worker",
    "pool",
    "fails",
    "when",
    "the",
    "queue",
    "is",
    "empty",
    "so",
    "please",
    "check",
    "connection",
    "timeout",
    "handler",
    "cache",
    "parser",
    "config",
    "migration",
    "test",
    "fixture",
    "logs",
    "deploy",
    "refactor",
    "rename",
    "module",
    "function",
    "class",
    "error",
    "exception",
    "trace",
    "stack",
    "value",
    "default",
]
TOOLS = ("read_file", "write_file", "edit_file", "bash", "grep", "memory_read")
FILES = [
    f"src/{d}/{n}.py"
    for d in ("api", "db", "core", "util")
    for n in ("models", "views", "retry", "cache", "config", "parser")
]

SYSTEM_PROMPT = "\n".join(
    f"{i + 1}. " + " ".join(random.Random(i).choice(WORDS) for _ in range(22)) + "."
    for i in range(55)
)


@attrs.frozen
class Event:
    kind: Literal["user", "call", "result", "assistant"]
    text: str
    name: str = ""
    call_id: str = ""
    turn: int = 0


def _result_text(rng: random.Random, tool: str, size: int) -> str:
    lines: list[str] = []
    n = 0
    while n < size:
        if tool in ("read_file", "write_file", "edit_file"):
            name = f"{rng.choice(WORDS)}_{rng.randint(0, 99)}"
            line = f"    def {name}(self, x): return x + {rng.randint(0, 9)}"
        elif tool == "bash":
            status = "PASSED" if rng.random() > 0.1 else "FAILED"
            line = f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)} {status}"
        elif tool == "grep":
            where = f"{rng.choice(FILES)}:{rng.randint(1, 999)}"
            line = f"{where}: {rng.choice(WORDS)} = {rng.choice(WORDS)}()"
        else:
            words = " ".join(rng.choice(WORDS) for _ in range(8))
            line = f"- ar:t{rng.randint(1, 99)}.user.prompt: {words}"
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)[:size]


def generate(turns: int = 300, seed: int = 0) -> Iterator[Event]:
    rng = random.Random(seed)
    call = 0
    for t in range(turns):
        words = rng.randint(30, 300)
        yield Event("user", " ".join(rng.choice(WORDS) for _ in range(words)) + "?", turn=t)
        for _ in range(rng.randint(0, 8)):
            tool = rng.choice(TOOLS)
            call += 1
            cid = f"call_{call}"
            params = {"path": rng.choice(FILES)} if tool != "bash" else {"command": "pytest -q"}
            if tool == "memory_read":
                params = {"query": " ".join(rng.choice(WORDS) for _ in range(3))}
            yield Event("call", json.dumps(params, sort_keys=True), name=tool, call_id=cid, turn=t)
            size = int(min(12_000, max(100, rng.lognormvariate(7.2, 1.0))))
            yield Event("result", _result_text(rng, tool, size), name=tool, call_id=cid, turn=t)
        words = rng.randint(20, 120)
        yield Event("assistant", " ".join(rng.choice(WORDS) for _ in range(words)) + ".", turn=t)


def is_request_point(event: Event) -> bool:
    """A model request follows every user prompt and every tool result."""
    return event.kind in ("user", "result")
