"""The one construction the ported LangChain tests change: where LangChain's tests build
a ``SummarizationMiddleware``, they get a ``TimelineMiddleware`` with the same settings
mapped to a compaction policy (docs/integrations.md, "their option -> ours"):

* ``trigger=("messages", n)``: ``max_blocks=2 * n - 2`` (a human message is two blocks,
  its turn header and its text; so n messages of the tests' shape are past it);
  ``trigger=("tokens", n)``: ``max_tokens=n``; ``trigger=("fraction", f)``: the model
  profile's ``max_input_tokens`` as ``max_tokens`` and ``trigger_ratio=f``; a list of
  them: each limit at once (compaction when any is reached); ``trigger=None`` or ``[]``:
  compaction off;
* ``keep=("messages", k)``: ``keep_recent_turns=k`` (every human message starts a turn);
  ``keep=("tokens", n)``: ``keep_recent_tokens=n``; ``keep=("fraction", f)``:
  ``keep_recent_tokens`` of ``f`` times the profile's ``max_input_tokens``;
* ``token_counter=`` (a function of messages): the timeline's counter over text, each
  text counted as one message holding it;
* ``model`` / ``summarizer``: the summarizer (a chat model is called with the library's
  prompt, its calls internal); ``on_summary_failure="raise"`` as the host raises;
  ``summary_prompt`` has no counterpart (the library's prompt): the one ported test
  that sets it passes a ``summarizer`` too, which makes the host ignore it as well;
* each middleware its own store and thread (the tests call ``before_model`` without a
  thread id).

The host's deprecated ``max_tokens_before_summary`` / ``messages_to_keep`` are taken as
``trigger=("tokens", n)`` / ``keep=("messages", k)``, without the host's deprecation
warning (the library never had them).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from timeline import CompactionPolicy
from timeline.integrations.langchain import TimelineMiddleware

_threads = itertools.count()


class MessagesCounter:
    """``SummarizationMiddleware``'s ``token_counter`` (a function of messages) as the
    timeline's counter over text: each text is counted as one message holding it."""

    def __init__(self, count_messages: Callable[[Sequence[BaseMessage]], int]) -> None:
        self.count_messages = count_messages

    def count(self, text: str) -> int:
        return int(self.count_messages([HumanMessage(text)])) if text else 0


def _profile_limit(model: Any) -> int:
    profile = getattr(model, "profile", None) or {}
    return int(profile["max_input_tokens"])


def _limits(trigger: Any, model: Any) -> dict[str, Any]:
    """The policy's limits for one trigger or a list of them (any one reached)."""
    clauses = [trigger] if isinstance(trigger, tuple) else list(trigger or [])
    if not clauses:
        return {"enabled": False, "max_tokens": 100_000}
    limits: dict[str, Any] = {"max_tokens": 100_000}
    for kind, size in clauses:
        if kind == "messages":
            limits["max_blocks"] = max(1, 2 * size - 2)
        elif kind == "tokens":
            limits["max_tokens"] = size
        elif kind == "fraction":
            limits["max_tokens"] = _profile_limit(model)
            limits["trigger_ratio"] = size
        else:  # pragma: no cover - the ported tests use these three
            raise NotImplementedError(kind)
    return limits


def _kept(keep: Any, model: Any) -> dict[str, Any]:
    kind, size = keep
    if kind == "messages":
        return {"keep_recent_turns": size}
    if kind == "tokens":
        return {"keep_recent_tokens": size}
    return {"keep_recent_tokens": int(size * _profile_limit(model)), "keep_recent_turns": 0}


def policy_for(trigger: Any, keep: Any, model: Any = None) -> CompactionPolicy:
    """The compaction policy for ``SummarizationMiddleware``'s trigger and keep."""
    limits = _limits(trigger, model)
    kept = _kept(keep or ("messages", 20), model)
    if limits.get("trigger_ratio", 1.0) <= 0.7:  # the library's keep_ratio stays below it
        limits["keep_ratio"] = limits["trigger_ratio"] / 2
    return CompactionPolicy(min_split_prefix_blocks=0, **limits, **kept)


def summarization_middleware(
    model: Any,
    *,
    trigger: Any = None,
    keep: Any = ("messages", 20),
    summarizer: Any = None,
    summary_prompt: str | None = None,
    token_counter: Callable[[Sequence[BaseMessage]], int] | None = None,
    max_tokens_before_summary: int | None = None,
    messages_to_keep: int | None = None,
) -> TimelineMiddleware:
    """A ``TimelineMiddleware`` standing in for ``SummarizationMiddleware(model, ...)``."""
    if trigger is None and max_tokens_before_summary is not None:
        trigger = ("tokens", max_tokens_before_summary)
    if messages_to_keep is not None and keep == ("messages", 20):
        keep = ("messages", messages_to_keep)
    extra: dict[str, Any] = {}
    if token_counter is not None:
        extra["token_counter"] = MessagesCounter(token_counter)
    return TimelineMiddleware(
        "memory://",
        policy_for(trigger, keep, model),
        summarizer=summarizer if summarizer is not None else model,
        on_summary_failure="raise",
        default_thread_id=f"ported-{next(_threads)}",
        **extra,
    )
