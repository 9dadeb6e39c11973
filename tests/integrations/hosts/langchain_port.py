"""The one construction the ported LangChain tests change: where LangChain's tests build
a ``SummarizationMiddleware``, they get a ``TimelineMiddleware`` with the same settings
mapped to a compaction policy (docs/integrations.md, "their option -> ours"):

* ``trigger=("messages", n)``: ``max_blocks=2 * n - 2`` (a human message is two blocks,
  its turn header and its text; so n messages of the tests' shape are past it);
  ``trigger=("tokens", n)``: ``max_tokens=n``; ``trigger=None``: compaction off;
* ``keep=("messages", k)``: ``keep_recent_turns=k`` (every human message starts a turn);
* ``model`` / ``summarizer``: the summarizer (a chat model is called with the library's
  prompt, its calls internal); ``on_summary_failure="raise"`` as the host raises;
  ``summary_prompt`` has no counterpart (the library's prompt): the one ported test
  that sets it passes a ``summarizer`` too, which makes the host ignore it as well;
* each middleware its own store and thread (the tests call ``before_model`` without a
  thread id).
"""

from __future__ import annotations

import itertools
from typing import Any

from timeline import CompactionPolicy
from timeline.integrations.langchain import TimelineMiddleware

_threads = itertools.count()


def policy_for(trigger: Any, keep: Any) -> CompactionPolicy:
    """The compaction policy for ``SummarizationMiddleware``'s trigger and keep."""
    kept = keep[1] if keep and keep[0] == "messages" else 20
    if trigger is None:
        return CompactionPolicy(enabled=False, max_tokens=100_000, keep_recent_turns=kept)
    kind, size = trigger
    if kind == "messages":
        limits = {"max_blocks": max(1, 2 * size - 2), "max_tokens": 100_000}
    elif kind == "tokens":
        limits = {"max_tokens": size}
    else:  # pragma: no cover - the ported tests use messages and tokens
        raise NotImplementedError(kind)
    return CompactionPolicy(keep_recent_turns=kept, min_split_prefix_blocks=0, **limits)


def summarization_middleware(
    model: Any,
    *,
    trigger: Any = None,
    keep: Any = ("messages", 20),
    summarizer: Any = None,
    summary_prompt: str | None = None,
) -> TimelineMiddleware:
    """A ``TimelineMiddleware`` standing in for ``SummarizationMiddleware(model, ...)``."""
    return TimelineMiddleware(
        "memory://",
        policy_for(trigger, keep),
        summarizer=summarizer if summarizer is not None else model,
        on_summary_failure="raise",
        default_thread_id=f"ported-{next(_threads)}",
    )
