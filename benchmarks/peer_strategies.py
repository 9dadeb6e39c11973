"""The peers' context strategies, fed the same session as ours (:mod:`benchmarks.strategies`):
LangChain ``trim_messages`` and ``SummarizationMiddleware``, Strands' sliding window, and
sending everything; each timed on its own context-management call."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from typing import Any

import attrs

from benchmarks.session import SYSTEM_PROMPT, Event
from benchmarks.strategies import CountingTokenizer, Part

__all__ = [
    "Stacked",
    "Strands",
    "Summarize",
    "Trim",
    "Unbounded",
    "lc_counter",
    "lc_parts",
]


# -- LangChain --------------------------------------------------------------------------


def _lc_messages(e: Event) -> Any:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    if e.kind == "user":
        return HumanMessage(e.text)
    if e.kind == "call":
        return AIMessage(
            "", tool_calls=[{"name": e.name, "args": json.loads(e.text), "id": e.call_id}]
        )
    if e.kind == "result":
        return ToolMessage(e.text, tool_call_id=e.call_id)
    return AIMessage(e.text)


def _lc_text(m: Any) -> str:
    return m.content if isinstance(m.content, str) else json.dumps(m.content)


def lc_parts(messages: list[Any]) -> list[Part]:
    """Peers' breakpoints: the system prompt and the last part."""
    parts: list[Part] = []
    for m in messages:
        kind = m.type
        if kind == "system":
            parts.append(("system", "text", _lc_text(m), "", True))
        elif kind == "human":
            parts.append(("user", "text", _lc_text(m), "", False))
        elif kind == "tool":
            parts.append(("user", "tool_result", _lc_text(m), m.tool_call_id, False))
        else:
            if _lc_text(m):
                parts.append(("assistant", "text", _lc_text(m), "", False))
            for c in getattr(m, "tool_calls", []) or []:
                text = c["name"] + " " + json.dumps(c["args"], sort_keys=True)
                parts.append(("assistant", "tool_use", text, c["id"], False))
    if parts:
        parts[-1] = (*parts[-1][:4], True)
    return parts


def lc_counter(tok: CountingTokenizer, memoized: bool) -> Any:
    memo: dict[int, tuple[Any, int]] = {}  # id -> (message, tokens): the message is kept
    # alive so its id cannot be reused by a new message after a summarization frees it

    def one(m: Any) -> int:
        text = _lc_text(m) + "".join(
            json.dumps(c["args"]) + c["name"] for c in getattr(m, "tool_calls", []) or []
        )
        return tok.count(text) + 4

    def count(messages: list[Any]) -> int:
        if not memoized:
            return sum(one(m) for m in messages)
        total = 0
        for m in messages:
            hit = memo.get(id(m))
            if hit is None or hit[0] is not m:
                hit = memo[id(m)] = (m, one(m))
            total += hit[1]
        return total

    return count


@attrs.define
class Trim:
    """LangChain ``trim_messages`` (strategy last, include_system, start_on human)."""

    budget: int
    memoized: bool
    name: str = ""
    messages: list[Any] = attrs.field(factory=list)
    times: list[float] = attrs.field(factory=list)
    tok: CountingTokenizer = attrs.field(factory=CountingTokenizer)
    counter: Any = None
    sample_every: int = 1
    _n: int = 0

    def __attrs_post_init__(self) -> None:
        from langchain_core.messages import SystemMessage

        self.name = f"LangChain trim_messages ({'memoized' if self.memoized else 'plain'} counter)"
        self.messages.append(SystemMessage(SYSTEM_PROMPT))
        self.counter = lc_counter(self.tok, self.memoized)

    def add(self, e: Event) -> None:
        self.messages.append(_lc_messages(e))

    def request(self) -> list[Part] | None:
        from langchain_core.messages import trim_messages

        self._n += 1
        if self._n % self.sample_every:
            return None
        start = time.perf_counter()
        out = trim_messages(
            self.messages,
            max_tokens=self.budget,
            strategy="last",
            token_counter=self.counter,
            include_system=True,
            start_on="human",
            allow_partial=False,
        )
        self.times.append(time.perf_counter() - start)
        return lc_parts(out)

    @property
    def chars_tokenized(self) -> int:
        return self.tok.chars

    def summarizer_tokens(self) -> tuple[int, int]:
        return 0, 0


SUMMARY_TEXT = " ".join(
    f"The agent investigated module {i}, found the retry bug, decided on exponential backoff, "
    f"and edited src/core/retry_{i}.py; tests were rerun."
    for i in range(24)
)


@attrs.define
class Summarize:
    """LangChain ``SummarizationMiddleware`` (trigger 0.9, keep 0.7 of the budget) with a
    fake model returning a fixed ~600-token summary; state carried across requests."""

    budget: int
    memoized: bool
    name: str = ""
    state: list[Any] = attrs.field(factory=list)
    times: list[float] = attrs.field(factory=list)
    tok: CountingTokenizer = attrs.field(factory=CountingTokenizer)
    mw: Any = None
    model: Any = None
    system: Any = None
    calls: list[tuple[int, int]] = attrs.field(factory=list)
    side: list[tuple[int, list[Part]]] = attrs.field(factory=list)
    """The summary requests (a transcript prompt, no breakpoints), each with the index of
    the request it came before (the evaluator bills them through the same cache)."""
    _asked: list[str] = attrs.field(factory=list)
    _requests: int = 0

    def __attrs_post_init__(self) -> None:
        from langchain.agents.middleware import SummarizationMiddleware
        from langchain_core.language_models.fake_chat_models import FakeListChatModel
        from langchain_core.messages import SystemMessage

        tok = self.tok
        calls = self.calls
        asked = self._asked

        class CountingFake(FakeListChatModel):
            def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
                text = "".join(_lc_text(m) for m in messages)
                asked.append(text)
                calls.append(
                    (
                        len(tok.enc.encode(text, disallowed_special=())),
                        len(tok.enc.encode(SUMMARY_TEXT)),
                    )
                )
                return super()._call(messages, *args, **kwargs)

        self.model = CountingFake(responses=[SUMMARY_TEXT])
        kind = "memoized" if self.memoized else "plain"
        self.name = f"LangChain SummarizationMiddleware ({kind} counter)"
        self.mw = SummarizationMiddleware(
            self.model,
            trigger=("tokens", int(0.9 * self.budget)),
            keep=("tokens", int(0.7 * self.budget)),
            token_counter=lc_counter(tok, self.memoized),
        )
        self.system = SystemMessage(SYSTEM_PROMPT)

    def add(self, e: Event) -> None:
        self.state.append(_lc_messages(e))

    def request(self) -> list[Part]:
        from langchain_core.messages import RemoveMessage

        start = time.perf_counter()
        update = self.mw.before_model({"messages": self.state}, None)
        if update is not None:
            self.state = [m for m in update["messages"] if not isinstance(m, RemoveMessage)]
        messages = self.edit([self.system, *self.state])
        self.times.append(time.perf_counter() - start)
        self._note_summary_requests()
        self._requests += 1
        return lc_parts(messages)

    def edit(self, messages: list[Any]) -> list[Any]:
        """The messages the model is sent (here: as they are; :class:`Stacked` edits them)."""
        return messages

    def _note_summary_requests(self) -> None:
        """The summary calls of this request, as uncached request parts."""
        for text in self._asked:
            self.side.append((self._requests, [("user", "text", text, "", False)]))
        self._asked.clear()

    @property
    def chars_tokenized(self) -> int:
        return self.tok.chars

    def summarizer_tokens(self) -> tuple[int, int]:
        return sum(c[0] for c in self.calls), sum(c[1] for c in self.calls)


@attrs.define
class Stacked(Summarize):
    """LangChain ``ContextEditingMiddleware(ClearToolUsesEdit)`` stacked with
    ``SummarizationMiddleware`` as an agent runs them: the summarization's
    ``before_model`` updates the state, then the context edit's ``wrap_model_call``
    clears old tool results in the messages sent (the state keeps them whole). The edit:
    trigger at half the budget, keep 3, clear_at_least a tenth of the budget."""

    editor: Any = None

    def __attrs_post_init__(self) -> None:
        from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

        super().__attrs_post_init__()
        self.name = "LangChain ContextEditingMiddleware + SummarizationMiddleware"
        edit = ClearToolUsesEdit(trigger=self.budget // 2, keep=3, clear_at_least=self.budget // 10)
        self.editor = ContextEditingMiddleware(
            edits=[edit], token_counter=lc_counter(self.tok, self.memoized)
        )

    def edit(self, messages: list[Any]) -> list[Any]:
        sent: list[Any] = []

        def handler(request: Any) -> Any:
            sent.extend(request.messages)

        system, *rest = messages
        self.editor.wrap_model_call(_Request(rest), handler)
        return [system, *sent]


@attrs.frozen
class _Request:
    """The part of LangChain's ``ModelRequest`` that ``ContextEditingMiddleware`` uses."""

    messages: list[Any]

    def override(self, messages: list[Any]) -> _Request:
        return _Request(messages)


# -- Strands ----------------------------------------------------------------------------


@attrs.define
class Strands:
    """Strands ``SlidingWindowConversationManager(window_size=40)`` before each request."""

    name: str = "Strands SlidingWindowConversationManager (window 40)"
    agent: Any = attrs.field(factory=lambda: SimpleNamespace(messages=[]))
    times: list[float] = attrs.field(factory=list)
    mgr: Any = None

    def __attrs_post_init__(self) -> None:
        from strands.agent.conversation_manager import SlidingWindowConversationManager

        self.mgr = SlidingWindowConversationManager(window_size=40)

    def add(self, e: Event) -> None:
        if e.kind == "user":
            msg = {"role": "user", "content": [{"text": e.text}]}
        elif e.kind == "call":
            use = {"toolUseId": e.call_id, "name": e.name, "input": json.loads(e.text)}
            msg = {"role": "assistant", "content": [{"toolUse": use}]}
        elif e.kind == "result":
            res = {"toolUseId": e.call_id, "content": [{"text": e.text}], "status": "success"}
            msg = {"role": "user", "content": [{"toolResult": res}]}
        else:
            msg = {"role": "assistant", "content": [{"text": e.text}]}
        self.agent.messages.append(msg)

    def request(self) -> list[Part]:
        start = time.perf_counter()
        self.mgr.apply_management(self.agent)
        self.times.append(time.perf_counter() - start)
        parts: list[Part] = [("system", "text", SYSTEM_PROMPT, "", True)]
        for m in self.agent.messages:
            for c in m["content"]:
                if "text" in c:
                    parts.append((m["role"], "text", c["text"], "", False))
                elif "toolUse" in c:
                    u = c["toolUse"]
                    text = u["name"] + " " + json.dumps(u["input"], sort_keys=True)
                    parts.append((m["role"], "tool_use", text, u["toolUseId"], False))
                elif "toolResult" in c:
                    r = c["toolResult"]
                    text = "\n".join(x.get("text", "") for x in r["content"])
                    parts.append((m["role"], "tool_result", text, r["toolUseId"], False))
        parts[-1] = (*parts[-1][:4], True)
        return parts

    chars_tokenized = 0

    def summarizer_tokens(self) -> tuple[int, int]:
        return 0, 0


@attrs.define
class Unbounded:
    """Send everything: the upper bound for prefix reuse."""

    name: str = "unbounded (send everything)"
    parts: list[Part] = attrs.field(factory=lambda: [("system", "text", SYSTEM_PROMPT, "", True)])
    times: list[float] = attrs.field(factory=list)

    def add(self, e: Event) -> None:
        if e.kind == "user":
            self.parts.append(("user", "text", e.text, "", False))
        elif e.kind == "call":
            self.parts.append(("assistant", "tool_use", f"{e.name} {e.text}", e.call_id, False))
        elif e.kind == "result":
            self.parts.append(("user", "tool_result", e.text, e.call_id, False))
        else:
            self.parts.append(("assistant", "text", e.text, "", False))

    def request(self) -> list[Part]:
        self.times.append(0.0)
        out = list(self.parts)
        out[-1] = (*out[-1][:4], True)
        return out

    chars_tokenized = 0

    def summarizer_tokens(self) -> tuple[int, int]:
        return 0, 0
