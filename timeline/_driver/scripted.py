"""A scripted model and tools for tests and the demo: deterministic, offline, realistic.

``ScriptedModel`` records every payload it receives, raises a chosen provider's real
overflow error at chosen calls (or whenever the request exceeds its window), and reports
usage like a provider. ``CodingSession`` scripts a coding agent (read, grep, edit, run
tests, answer) and ``demo_tools`` fakes the tools with seeded, heavy-tailed outputs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import attrs

from timeline._driver.function_tools import FunctionTool
from timeline._driver.react import ToolOutput
from timeline._formats import ModelReply, ToolCallRequest, Usage
from timeline._model import ToolSpec, tool_specs
from timeline._render import TOOLS_PROMPT_TOKENS, RenderedContext
from timeline._tokens import BLOCK_OVERHEAD_TOKENS, TiktokenCounter, TokenCounter

__all__ = [
    "DEMO_TOOL_SPECS",
    "CodingSession",
    "ProviderError",
    "ScriptedModel",
    "demo_tools",
    "overflow_error",
]


class ProviderError(Exception):
    """Shaped like SDK errors: message, ``status_code``, ``code``, ``body``."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        code: str | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.body = dict(body or {})


def overflow_error(provider: str, tokens: int, window: int) -> ProviderError:
    """The error ``provider`` really returns when a prompt is over its window."""
    if provider == "anthropic":
        msg = f"prompt is too long: {tokens} tokens > {window} maximum"
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
        return ProviderError(msg, status_code=400, body=body)
    if provider == "gemini":
        msg = (
            f"The input token count ({tokens}) exceeds the maximum number of tokens "
            f"allowed ({window})."
        )
        body = {"error": {"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}
        return ProviderError(msg, status_code=400, body=body)
    msg = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )
    body = {
        "error": {
            "message": msg,
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    return ProviderError(msg, status_code=400, code="context_length_exceeded", body=body)


Script = Callable[[RenderedContext, int], ModelReply]


@attrs.define
class ScriptedModel:
    """A model callable driven by ``script(view, call_index)``."""

    script: Script
    context_window: int | None = None
    overflow_at: frozenset[int] = frozenset()
    provider: str = "openai"
    payload_format: Literal["anthropic", "openai", "responses", "none"] = "anthropic"
    usage_overhead: int = 0
    """Tokens the provider counts that the timeline cannot see (tool schemas, framing)."""
    counter: TokenCounter = attrs.field(factory=TiktokenCounter)
    calls: int = attrs.field(default=0, init=False)
    received: list[Any] = attrs.field(factory=list, init=False)
    sent_tokens: list[int] = attrs.field(factory=list, init=False)

    def __call__(self, view: RenderedContext) -> ModelReply:
        index = self.calls
        self.calls += 1
        if self.payload_format == "anthropic":
            self.received.append(view.to_anthropic())
        elif self.payload_format == "openai":
            self.received.append(view.to_openai())
        elif self.payload_format == "responses":
            self.received.append(view.to_openai_responses())
        prompt_tokens = self.actual_tokens(view)
        self.sent_tokens.append(prompt_tokens)
        window = self.context_window
        if index in self.overflow_at or (window is not None and prompt_tokens > window):
            raise overflow_error(self.provider, prompt_tokens, window or view.tokens)
        reply = self.script(view, index)
        if reply.usage is None:
            reply = attrs.evolve(reply, usage=Usage(prompt_tokens, len(reply.text) // 4 + 8))
        return reply

    def actual_tokens(self, view: RenderedContext) -> int:
        """The provider's own count of the request, independent of the timeline's estimate
        (and of its calibration): every rendered text and tool definition, per-block
        framing, plus overhead."""
        total = self.counter.count(view.system) + self.usage_overhead
        if view.tools:  # the provider's tool-use instructions, then each definition
            total += TOOLS_PROMPT_TOKENS
        for t in view.tools:
            total += self.counter.count(f"{t.name} {t.description} {t.schema_json}")
        for b in view.blocks:
            text = f"{b.tool_id} {b.text}" if b.type == "react.tool.call" else b.text
            total += self.counter.count(text) + BLOCK_OVERHEAD_TOKENS
        return total


_FILES = (
    "src/app.py",
    "src/db.py",
    "src/api/routes.py",
    "src/utils.py",
    "tests/test_app.py",
    "tests/test_db.py",
    "README.md",
    "src/models.py",
    "src/cache.py",
    "src/config.py",
)
_ASKS = (
    "Fix the failing test in {f}; do not change the public API.",
    "Add input validation to {f} and make sure the tests still pass.",
    "Why does {f} leak connections? Find the root cause and fix it.",
    "Refactor {f} to remove the duplicated parsing code, keep behaviour identical.",
    "Add a test for the empty-input case in {f}.",
    "Update the docs for the new retry option in {f}; never touch the changelog.",
)


@attrs.define
class CodingSession:
    """A coding agent's replies: per turn 0-3 rounds of 1-3 parallel tool calls, then an
    answer. Deterministic for a seed; keeps its own per-turn step count, so compaction
    inside a turn does not change what it does."""

    seed: int = 0
    _steps: dict[str, int] = attrs.field(factory=dict, init=False)

    def prompt(self, turn: int) -> str:
        rng = random.Random(self.seed * 100_003 + turn)
        ask = rng.choice(_ASKS).format(f=rng.choice(_FILES))
        words = " ".join(
            rng.choice(
                ("please", "carefully", "also", "check", "the", "edge", "cases", "logs", "first")
            )
            for _ in range(rng.randint(4, 60))
        )
        return f"{ask} {words.capitalize()}."

    def __call__(self, view: RenderedContext, index: int) -> ModelReply:
        turn_id = view.blocks[-1].turn_id if view.blocks else ""
        step = self._steps.get(turn_id, 0)
        self._steps[turn_id] = step + 1
        rng = random.Random(f"{self.seed}:{turn_id}")
        rounds = rng.choice((0, 1, 1, 2, 2, 3))
        if step >= rounds:
            f = rng.choice(_FILES)
            return ModelReply(
                text=f"Done. I decided to keep the change in {f} small. Next I will run the "
                f"full test suite. Changed {rng.randint(1, 40)} lines."
            )
        calls = []
        for k in range(rng.randint(1, 3)):
            tool = rng.choice(
                ("read_file", "read_file", "grep", "bash", "edit_file", "memory_read")
            )
            f = rng.choice(_FILES)
            params: dict[str, Any] = {
                "read_file": {"path": f},
                "grep": {"pattern": rng.choice(("TODO", "def ", "retry", "conn")), "path": "src"},
                "bash": {"command": rng.choice(("pytest -q", "pytest -x tests", "ruff check ."))},
                "edit_file": {"path": f, "old": "return None", "new": "return default"},
                "memory_read": {
                    "query": rng.choice(("connection leak", "retry option", "failing test"))
                },
            }[tool]
            calls.append(ToolCallRequest(tool, params, call_id=f"call_{turn_id}_{step}_{k}"))
        return ModelReply(text="", tool_calls=tuple(calls), finish_reason="tool_calls")


def _sized(rng: random.Random, lo: int = 100, hi: int = 12_000) -> int:
    return int(min(hi, max(lo, rng.lognormvariate(7.0, 1.0))))


def _code(rng: random.Random, chars: int) -> str:
    lines = []
    n = 0
    while n < chars:
        name = rng.choice(("load", "parse", "retry", "connect", "close", "render", "check"))
        line = rng.choice(
            (
                f"def {name}_{rng.randint(0, 99)}(self, value):",
                f"    result = self.{name}(value, timeout={rng.randint(1, 30)})",
                "    if result is None:",
                f"        raise ValueError('bad {name} input')",
                f"    return result  # {name} done",
                "",
            )
        )
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)


def _spec(name: str, description: str, required: list[str], **props: str) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
        "required": required,
    }
    (spec,) = tool_specs([{"name": name, "description": description, "input_schema": schema}])
    return spec


DEMO_TOOL_SPECS: Final = (
    _spec("read_file", "Read a file of the repository.", ["path"], path="the file's path"),
    _spec(
        "grep",
        "Search the repository's files for a pattern; one line per match.",
        ["pattern"],
        pattern="a regular expression",
        path="the folder to search (default: the whole repository)",
    ),
    _spec(
        "bash",
        "Run a shell command (tests, linters) and return its output.",
        ["command"],
        command="the command line",
    ),
    _spec(
        "edit_file",
        "Replace text in a file.",
        ["path", "old", "new"],
        path="the file's path",
        old="the exact text to replace",
        new="the text to put in its place",
    ),
    _spec(
        "memory_read",
        "Search everything this conversation held, earlier turns that are no longer in "
        "context included.",
        ["query"],
        query="words to look for",
    ),
)
"""The demo tools' definitions, as a coding agent declares its tools."""


def demo_tools(
    seed: int = 0, memory: Callable[[Mapping[str, Any]], ToolOutput] | None = None
) -> dict[str, FunctionTool]:
    """Fake tools with seeded heavy-tailed outputs (100-12,000 chars, log-normal), each
    with its definition (called with the arguments as one mapping)."""
    counter = [0]

    def rng() -> random.Random:
        counter[0] += 1
        return random.Random(seed * 7_919 + counter[0])

    def read_file(p: Mapping[str, Any]) -> str:
        r = rng()
        return _code(r, _sized(r))

    def grep(p: Mapping[str, Any]) -> str:
        r = rng()
        n = max(1, _sized(r, 100, 4000) // 60)
        return "\n".join(
            f"{r.choice(_FILES)}:{r.randint(1, 900)}: {p.get('pattern', '')} x = {r.randint(0, 9)}"
            for _ in range(n)
        )

    def bash(p: Mapping[str, Any]) -> ToolOutput:
        r = rng()
        failed = r.random() < 0.3
        body = "\n".join(
            f"tests/test_app.py::test_case_{i} {'FAILED' if failed and i % 7 == 0 else 'PASSED'}"
            for i in range(_sized(r, 100, 8000) // 50)
        )
        summary = "1 failed" if failed else "all passed"
        return ToolOutput(f"$ {p.get('command', '')}\n{body}\n== {summary} ==", is_error=failed)

    def edit_file(p: Mapping[str, Any]) -> str:
        return f"ok: applied edit to {p.get('path')}"

    def memory_read(p: Mapping[str, Any]) -> ToolOutput:
        if memory is not None:
            return memory(p)
        return ToolOutput("no archived context matched", meta={"hits": []})

    return {
        name: FunctionTool(spec, fn, takes_mapping=True)
        for (name, fn), spec in zip(
            {
                "read_file": read_file,
                "grep": grep,
                "bash": bash,
                "edit_file": edit_file,
                "memory_read": memory_read,
            }.items(),
            DEMO_TOOL_SPECS,
            strict=True,
        )
    }
