"""A broad, seeded generator of timelines for the provider-validity tests.

Each seed builds one timeline with a random mix of what real sessions hold: prompts
(some empty, blank or ending in whitespace), attachments of many media types (binary,
textual, both), tool calls with foreign names and call ids, parallel and pending calls,
error results, images inside tool results, thinking and reasoning blocks, notes and
custom blocks, opaque provider blocks (server tools, MCP, computer use, compaction, audio)
and images and documents by URL or file id, hidden and pinned blocks, compaction under a
small budget, forced renders, and timelines imported back from their own payloads.
:func:`payload_cases` yields every render's four payloads, with the render's estimate;
with ``tools=True`` every render sends one of :data:`TOOL_SETS` (the same timeline).
"""

from __future__ import annotations

import collections
import contextlib
import random
import warnings
from collections.abc import Iterator
from typing import Any

from tests.helpers import open_samples
from tests.helpers.samples import PNG_1x1
from timeline import (
    CompactionPolicy,
    HeuristicCounter,
    NoBudgetWarning,
    RecallPolicy,
    RenderedContext,
    Timeline,
    blocks,
)
from timeline._io.importers import import_conversation
from timeline._model.errors import EmptyPromptError, TimelineError
from timeline._model.reasoning import anthropic_thinking, openai_reasoning

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"/>'

IMPORTS: collections.Counter[str] = collections.Counter()
"""Successful imports per format (every payload built is imported back)."""

TEXTS = (
    "Fix the failing test in a.py",
    "",
    "   \n",
    "done. ",
    "trailing newline\n",
    "ünïcode ✓ and 日本語",
    "x " * 300,
)
TOOL_NAMES = ("read_file", "bash", "web-search", "functions.fs_read", "my tool", "t" * 70)
CALL_IDS = (None, None, "toolu_01AbCd{n}", "functions.fs_read:{n}", "call {n}", "c" * 80 + "{n}")
TOOL_SETS: tuple[list[dict[str, Any]], ...] = (
    [
        {
            "name": "read_file",
            "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ],
    [
        {
            "name": "search_code",
            "description": "Search the repository (ünïcode ✓ 日本語 in a description).",
            "input_schema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words"},
                    "mode": {"type": "string", "enum": ["regex", "literal"]},
                    "scope": {
                        "type": "object",
                        "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
                        "required": ["paths"],
                        "additionalProperties": False,
                    },
                    "limit": {"type": "integer", "minimum": 1, "default": 20},
                },
                "required": ["query", "mode", "scope", "limit"],
                "additionalProperties": False,
            },
            "strict": True,
        },
        {"name": "list_files"},
        {
            "type": "function",
            "function": {
                "name": "web-search",
                "description": "A Chat Completions definition.",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "name": "fs_write",
            "description": "A Responses definition. " * 40,
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "strict": False,
        },
    ],
)
"""Tool definitions a render may send: one small tool, or several in every accepted form
(neutral, Chat Completions, Responses; strict, nested, without a description, long)."""
ATTACHMENTS: tuple[tuple[str, bytes | None, str], ...] = (
    ("image/png", PNG_1x1, ""),
    ("image/jpeg", JPEG, ""),
    ("image/svg+xml", SVG, ""),
    ("application/pdf", PDF, ""),
    ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", b"PK\x03", ""),
    ("text/plain", None, "notes.txt says hello"),
    ("image/png", PNG_1x1, "a caption kept with the image"),
    ("text/csv", b"a,b\n1,2\n", "a,b\n1,2\n"),
)


class _Gen:
    def __init__(self, seed: int, tools: bool = False) -> None:
        self.rng = random.Random(seed)
        self.tool_set = TOOL_SETS[seed % len(TOOL_SETS)] if tools else []
        budget = self.rng.choice((None, 900, 2_500, 8_000))
        recall = RecallPolicy(share=0.2) if seed % 2 else None  # no draw: seeds stay as they were
        self.tl = Timeline(
            f"gen{seed}",
            policy=CompactionPolicy(
                max_tokens=budget, keep_recent_turns=self.rng.randint(0, 3), recall=recall
            ),
            token_counter=HeuristicCounter(),
        )
        self.n = 0

    def text(self) -> str:
        return self.rng.choice(TEXTS)

    def call_id(self) -> str | None:
        self.n += 1
        pattern = self.rng.choice(CALL_IDS)
        return None if pattern is None else pattern.format(n=self.n)

    def attachment(self) -> None:
        if self.rng.random() < 0.3:  # an image or document by URL or file id
            self.tl.append(open_samples.media(self.rng.randrange(open_samples.MEDIA_KINDS), self.n))
            return
        mime, data, text = self.rng.choice(ATTACHMENTS)
        self.tl.append(blocks.user_attachment(name=f"f{self.n}", mime=mime, data=data, text=text))

    def reasoning(self) -> None:
        roll = self.rng.random()
        if roll < 0.4:
            item = {"type": "thinking", "thinking": f"think {self.n}", "signature": "c2ln"}
            self.tl.append(anthropic_thinking(item))
        elif roll < 0.6:
            self.tl.append(anthropic_thinking({"type": "redacted_thinking", "data": "ZW5j"}))
        else:
            item = {"type": "reasoning", "id": f"rs_{self.n}", "encrypted_content": "gAAA"}
            self.tl.append(openai_reasoning({**item, "summary": []}))

    def tools(self) -> None:
        if self.rng.random() < 0.3:
            self.reasoning()
        if self.rng.random() < 0.25:  # a provider's own items: server tools, compaction...
            self.n += 1
            kind = self.rng.randrange(open_samples.OPAQUE_KINDS)
            self.tl.extend(open_samples.opaque(kind, self.n))
        calls = [
            self.tl.append(
                blocks.tool_call(self.rng.choice(TOOL_NAMES), {"i": self.n}, call_id=self.call_id())
            )
            for _ in range(self.rng.choice((1, 1, 2, 3)))
        ]
        for call in calls:
            roll = self.rng.random()
            if roll < 0.15:
                continue  # pending: no result recorded
            text = self.text() if roll < 0.4 else f"result of {call.tool_id}"
            data = PNG_1x1 if roll > 0.85 else None
            mime = "image/png" if data else "text/plain"
            self.tl.append(
                blocks.tool_result(
                    call.call_id or "",
                    text,
                    tool_id=call.tool_id,
                    is_error=self.rng.random() < 0.2,
                    mime=mime,
                    data=data,
                )
            )

    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.25:
            self.tl.begin_turn()
            self.tl.append(blocks.user_prompt(self.text()))
        elif roll < 0.35:
            self.attachment()
        elif roll < 0.6:
            self.tools()
        elif roll < 0.8:
            if self.rng.random() < 0.2:
                self.reasoning()
            self.tl.append(blocks.assistant_completion(self.text()))
        elif roll < 0.87:
            self.tl.append(blocks.note(self.text()))
        elif roll < 0.92:
            self.tl.append(blocks.custom("react.plan", self.text(), author="assistant"))
        elif roll < 0.96 and self.tl.blocks:
            target = self.rng.choice(self.tl.blocks)
            replacement = self.rng.choice((None, "[hidden]", ""))
            self.tl.hide([target.path], replacement_text=replacement)
        elif self.tl.blocks:
            with contextlib.suppress(TimelineError):
                self.tl.pin([self.rng.choice(self.tl.blocks).path])

    def render(self) -> RenderedContext:
        system = self.rng.choice(("You are a careful assistant.", "", "  "))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoBudgetWarning)  # some timelines have no budget
            force = self.rng.random() < 0.15
            return self.tl.render(system, tools=self.tool_set, force_sanitize=force)


def _formats(view: RenderedContext) -> dict[str, Any]:
    return {
        "anthropic": view.to_anthropic(),
        "document": view.to_document(),
        "openai": view.to_openai(),
        "responses": view.to_openai_responses(),
    }


def payload_cases(
    seed: int, renders: int = 3, tools: bool = False
) -> Iterator[tuple[str, Any, int]]:
    """``(format, payload, view.tokens)`` for ``renders`` renders of timeline ``seed`` and
    of the timelines imported back from its Anthropic, Chat and Responses payloads (an
    import of a payload we built must succeed), each render sending a tool set when
    ``tools``."""
    g = _Gen(seed, tools)
    g.tl.begin_turn()
    if g.rng.random() < 0.8:
        g.tl.append(blocks.user_prompt(g.text()))
    last: dict[str, Any] = {}
    for _ in range(renders):
        for _ in range(g.rng.randint(1, 12)):
            g.step()
        try:
            view = g.render()
        except TimelineError:
            continue  # e.g. pinned blocks over budget: a typed error is a valid outcome
        try:
            last = _formats(view)
        except TimelineError:
            continue  # nothing to send: a typed error, never an invalid payload
        yield from ((fmt, payload, view.tokens) for fmt, payload in last.items())
    for fmt, key in (("anthropic", "anthropic"), ("openai", "openai"), ("responses", "responses")):
        if key not in last:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoBudgetWarning)  # imports carry no budget
            imported = import_conversation(last[key], fmt, f"import{seed}")  # type: ignore[arg-type]
            IMPORTS[fmt] += 1
            try:
                again = imported.timeline.render(imported.system, tools=g.tool_set)
                views = _formats(again)
            except EmptyPromptError:
                continue
        yield from ((fmt, payload, again.tokens) for fmt, payload in views.items())
