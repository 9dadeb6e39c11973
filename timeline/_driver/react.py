"""A small ReAct driver: render -> call model -> append -> run tools -> repeat.

On a context-overflow error it re-renders with ``force_sanitize=True`` and retries, up
to ``max_overflow_retries`` times (default 3), each retry one step down the forced-render
ladder (each at most 3/4 of the last); one more overflow, or a ladder with nothing left
to cut, raises :class:`ContextOverflowError`. Provider usage calibrates the next
estimate; a silent overflow (reported prompt tokens at the window) forces the next render
to compact. A reply cut off
by its length limit (``finish_reason`` ``length`` / ``max_tokens`` /
``max_output_tokens``) drops its cut-off tool call; with no complete call left the turn
ends as ``stopped="max_tokens"`` with the partial text kept, after one compaction and
continuation when the context was near its budget. The timeline is persisted at turn end
when a store is given. ``enabled=False`` policies are honoured: no compaction on any
path, and overflow errors reach the caller unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs
import msgspec

from timeline._compaction import CompactionStats, context_window_for
from timeline._core import Timeline
from timeline._driver.function_tools import FunctionTool, tool_set
from timeline._driver.overflow import is_context_overflow, is_usage_overflow
from timeline._formats import (
    ModelReply,
    ToolCallRequest,
    Usage,
    call_params,
    content_blocks,
)
from timeline._model import (
    Block,
    BudgetError,
    ContextOverflowError,
    DriverError,
    IndexStore,
    ToolSpec,
    provider_tool_names,
)
from timeline._model import constructors as B
from timeline._model import log as _log
from timeline._render import RenderedContext
from timeline._tokens import warm_up

__all__ = [
    "ContextUsage",
    "DriverEvent",
    "ModelCall",
    "ModelReply",
    "ReactDriver",
    "Tool",
    "ToolCallRequest",
    "ToolOutput",
    "TurnResult",
    "Usage",
]


@attrs.frozen
class ToolOutput:
    """A tool's result; tools may also return a plain string."""

    text: str
    is_error: bool = False
    meta: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ContextUsage:
    """Where the context stands: estimated tokens, last reported usage, tokens added since,
    and the context window they are measured against (None when unknown)."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    context_window: int | None = None


@attrs.frozen
class DriverEvent:
    kind: Literal[
        "compaction_start",
        "compaction_end",
        "overflow_retry",
        "turn_end",
        "checkpoint",
        "usage_update",
        "cache_break",
    ]
    turn_id: str
    data: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class TurnResult:
    turn_id: str
    text: str
    steps: int
    stopped: Literal["answer", "step_limit", "max_tokens"]
    """``"max_tokens"``: the last reply was cut off by its length limit (``text`` holds
    the partial answer)."""
    compactions: tuple[CompactionStats, ...]
    overflow_retries: int
    dropped_tool_calls: int
    version: int | None
    usage: ContextUsage


ModelCall = Callable[[RenderedContext], ModelReply]
Tool = Callable[[Mapping[str, Any]], "str | ToolOutput"]

_TRUNCATED = ("length", "max_tokens", "max_output_tokens")


@attrs.frozen
class _Call:
    """A tool call of a reply, its params parsed (``valid``: they were a JSON object)."""

    name: str
    params: dict[str, Any]
    call_id: str | None
    valid: bool


def _cut_off(arguments: Any) -> bool:
    """Arguments that are not JSON at all (text cut off by the length limit)."""
    if not isinstance(arguments, str):
        return False
    try:
        json.loads(arguments)
    except (ValueError, RecursionError):
        return True
    return False


@attrs.define
class ReactDriver:
    """Runs turns of a ReAct loop over a :class:`Timeline`."""

    timeline: Timeline
    model: ModelCall
    tools: Mapping[str, Tool | FunctionTool] | Sequence[Callable[..., Any] | FunctionTool]
    """Plain functions (their signatures and docstrings declare them), or a mapping of
    names to callables taking the arguments as one mapping; every request sends their
    definitions, and they count against the budget."""
    system: str = ""
    store: IndexStore | None = None
    max_steps: int = 24
    context_window: int | None = None
    on_event: Callable[[DriverEvent], object] | None = None
    checkpoint_every: int | None = None
    """Save a named checkpoint to the store every N model calls, to resume from."""
    tail: Callable[[], Sequence[Block]] | None = None
    max_overflow_retries: int = 3
    """Forced re-renders after a context-overflow error, each one ladder step smaller."""
    steps_taken: int = attrs.field(default=0, init=False)
    _force_next: bool = attrs.field(default=False, init=False)
    _compactions: list[CompactionStats] = attrs.field(factory=list, init=False)
    _last_usage: int = attrs.field(default=0, init=False)
    _tools: dict[str, FunctionTool] = attrs.field(factory=dict, init=False)
    _specs: tuple[ToolSpec, ...] = attrs.field(default=(), init=False)
    _by_safe_name: dict[str, str] = attrs.field(factory=dict, init=False)

    def __attrs_post_init__(self) -> None:
        self._tools = tool_set(self.tools)  # two tools of one provider name: refused
        self._specs = tuple(t.spec for t in self._tools.values())
        self._by_safe_name = {t.spec.name: k for k, t in self._tools.items()}
        self._by_safe_name.update(provider_tool_names(self._tools))
        tl = self.timeline
        warm_up(tl.token_counter)  # the tokenizer loads now, not in the first turn
        user_before, user_after = tl.on_before_compaction, tl.on_after_compaction

        def before(stats: CompactionStats) -> None:
            self._emit("compaction_start", stats.as_dict())
            if user_before is not None:
                user_before(stats)

        def after(stats: CompactionStats) -> None:
            self._compactions.append(stats)
            self._emit("compaction_end", stats.as_dict())
            if user_after is not None:
                user_after(stats)

        tl.on_before_compaction = before
        tl.on_after_compaction = after

    def _emit(self, kind: Any, data: Mapping[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(DriverEvent(kind, self.timeline.current_turn_id, data))

    def _window(self) -> int | None:
        """The context window: the driver's, the policy's, the model registry's, else the
        policy's budget."""
        policy = self.timeline.policy
        registry = context_window_for(policy.model) if policy.model else None
        return self.context_window or policy.context_window or registry or policy.max_tokens

    def _tail(self) -> Sequence[Block]:
        return self.tail() if self.tail is not None else ()

    def _call(self) -> tuple[ModelReply, int]:
        """One model call with up to ``max_overflow_retries`` forced, smaller retries."""
        tl = self.timeline
        force = self._force_next and tl.policy.active
        self._force_next = False
        view = tl.render(self.system, tools=self._specs, force_sanitize=force, tail=self._tail())
        retries = 0
        while True:
            try:
                reply = self.model(view)
                break
            except Exception as exc:
                if not tl.policy.active or not is_context_overflow(exc):
                    raise
                if retries >= self.max_overflow_retries:
                    raise ContextOverflowError(
                        f"the provider still reports a context overflow after {retries} "
                        f"forced render(s), the last at {view.tokens} estimated tokens: {exc}",
                        cause=exc,
                        conversation_id=tl.conversation_id,
                    ) from exc
                _log.overflow_retry(tl.conversation_id, view.tokens, exc)
                self._emit("overflow_retry", {"error": str(exc), "tokens": view.tokens})
                retries += 1
                try:
                    view = tl.render(
                        self.system, tools=self._specs, force_sanitize=True, tail=self._tail()
                    )
                except BudgetError as bottom:
                    raise ContextOverflowError(
                        f"the provider reports a context overflow and the prompt cannot "
                        f"shrink further ({bottom}): {exc}",
                        cause=exc,
                        conversation_id=tl.conversation_id,
                    ) from bottom
        self.steps_taken += 1
        if reply.usage is not None and reply.usage.prompt_tokens > 0:
            broke = tl.record_usage(reply.usage)
            if broke is not None:
                self._emit("cache_break", msgspec.to_builtins(broke))
            self._last_usage = reply.usage.prompt_tokens
            self._emit(
                "usage_update",
                {
                    "prompt_tokens": reply.usage.prompt_tokens,
                    "completion_tokens": reply.usage.completion_tokens,
                    "context_window": self._window(),
                },
            )
            if is_usage_overflow(reply.usage.prompt_tokens, self._window()):
                self._force_next = True
        return reply, retries

    def _maybe_checkpoint(self) -> None:
        every = self.checkpoint_every
        if not every or self.store is None or self.steps_taken % every:
            return
        save = getattr(self.store, "save_checkpoint", None)
        if save is None:
            raise DriverError("checkpoint_every needs a store with save_checkpoint()")
        name = f"step-{self.steps_taken:06d}"
        save(self.timeline.conversation_id, name, self.timeline.snapshot())
        self._emit("checkpoint", {"checkpoint_id": name})

    def run_turn(self, prompt: str | Block) -> TurnResult:
        """One user turn: until the model answers without tool calls or ``max_steps``."""
        tl = self.timeline
        tl.begin_turn()
        tl.append(B.user_prompt(prompt) if isinstance(prompt, str) else prompt)
        return self._loop()

    def checkpoints(self) -> list[str]:
        """Names of the checkpoints saved for this conversation, oldest first."""
        lister = getattr(self.store, "list_checkpoints", None)
        if lister is None:
            return []
        return [c.checkpoint_id for c in lister(self.timeline.conversation_id)]

    def resume(self, checkpoint_id: str) -> TurnResult | None:
        """Restore the timeline from a checkpoint and finish the turn it was in (None when
        that turn had already ended)."""
        load = getattr(self.store, "load_checkpoint", None)
        if load is None:
            raise DriverError("resume needs a store with load_checkpoint()")
        self.timeline.restore(load(self.timeline.conversation_id, checkpoint_id))
        blocks = self.timeline.blocks
        if not blocks or blocks[-1].type in ("assistant.completion",):
            return None
        return self._loop()

    def _loop(self) -> TurnResult:
        tl = self.timeline
        turn_id = tl.current_turn_id
        self._compactions = []
        retries = dropped = steps = 0
        text = ""
        continued = False
        stopped: Literal["answer", "step_limit", "max_tokens"] = "step_limit"
        while steps < self.max_steps:
            reply, r = self._call()
            steps += 1
            retries += r
            calls, n_dropped = self._complete_calls(reply)
            dropped += n_dropped
            tl.extend(content_blocks(reply))  # thinking, texts, server tools... in order
            cut_off = reply.finish_reason in _TRUNCATED
            if reply.text:
                text = text + reply.text if continued else reply.text
            if calls:
                self._run_tools(calls)
            self._maybe_checkpoint()
            if calls:
                continued = False
                continue
            if not cut_off:
                stopped = "answer"
                break
            if continued or not self._near_budget():
                stopped = "max_tokens"
                break
            # the context left too little room for the answer: compact, then continue once
            tl.compact(self.system, tools=self._specs, force=True)
            continued = True
        version = tl.persist(self.store) if self.store is not None else None
        usage = self.context_breakdown()
        self._emit("turn_end", attrs.asdict(usage))
        return TurnResult(
            turn_id,
            text,
            steps,
            stopped,
            tuple(self._compactions),
            retries,
            dropped,
            version,
            usage,
        )

    def _near_budget(self) -> bool:
        """The prompt is above what a compaction leaves (``keep_ratio`` of the budget), so
        compacting frees room for the rest of the answer."""
        tl = self.timeline
        budget = tl.policy.budget
        if not tl.policy.active or budget is None:
            return False
        estimate = tl.estimate(self.system, self._tail(), tools=self._specs)
        return estimate > tl.policy.keep_ratio * budget

    def context_breakdown(self) -> ContextUsage:
        tokens = self.timeline.estimate(self.system, self._tail(), tools=self._specs)
        return ContextUsage(
            tokens, self._last_usage, max(0, tokens - self._last_usage), self._window()
        )

    def _complete_calls(self, reply: ModelReply) -> tuple[list[_Call], int]:
        """Each call's params (arguments that are not a JSON object kept whole as
        ``{"_raw": text}``); drop calls cut off by the length limit (their arguments are
        incomplete)."""
        out: list[_Call] = []
        dropped = 0
        for call in reply.tool_calls:
            params, valid = call_params(call.params)
            if not valid and reply.finish_reason in _TRUNCATED and _cut_off(call.params):
                dropped += 1
                continue
            out.append(_Call(call.name, params, call.call_id, valid))
        return out, dropped

    def _run_tools(self, calls: list[_Call]) -> None:
        tl = self.timeline
        appended = [tl.append(B.tool_call(c.name, c.params, call_id=c.call_id)) for c in calls]
        tools = self._tools
        for request, call in zip(calls, appended, strict=True):
            name, params = request.name, request.params
            name = name if name in tools else self._by_safe_name.get(name, name)
            if not request.valid:
                output = ToolOutput("error: the tool arguments were not a valid JSON object", True)
            elif name not in tools:
                output = ToolOutput(f"error: unknown tool {name!r}", True)
            else:
                try:
                    raw = tools[name](params)
                    output = raw if isinstance(raw, ToolOutput) else ToolOutput(str(raw))
                except Exception as exc:  # a failing tool is a result, not a crash
                    output = ToolOutput(f"error: {type(exc).__name__}: {exc}", True)
            tl.append(
                B.tool_result(
                    call.call_id or "",
                    output.text,
                    tool_id=name,
                    is_error=output.is_error,
                    **dict(output.meta),
                )
            )
