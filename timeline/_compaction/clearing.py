"""The clearing tier: old tool results (and, if asked, old tool inputs and the thinking of
earlier turns) are shown as one-line placeholders before anything is summarized.

Tool output is most of an agent's context and the part it needs least once acted on;
clearing it keeps every user message and reply verbatim where a summary would fold them.
Cleared content is never lost: the block itself is unchanged in the timeline, the turn log
and search; only its rendered form changes (the ledger keeps which blocks render cleared),
and the placeholder names the path ``read_path`` brings it back from.

A clearing pass changes the prompt from its first cleared block on, so it invalidates the
provider's cache from there: it runs only when a compaction is due, clears everything
eligible in that one step, and only when that frees at least
:attr:`ClearingPolicy.clear_at_least_tokens` (the render pipeline decides; this module
says what is eligible and what each block would show).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any, Final, Literal

import attrs
import msgspec

from timeline._compaction.digest_records import classify_tool
from timeline._compaction.digest_tools import call_params, paths_of
from timeline._compaction.validators import bool_type, non_negative, opt_ratio, positive_or_none
from timeline._model import Block, PolicyError, block_type

__all__ = [
    "ClearReason",
    "ClearingCandidate",
    "ClearingPolicy",
    "clearing_candidates",
    "key_arguments",
    "signature",
]

ClearReason = Literal["old", "superseded", "input", "thinking"]

_KEY_ORDER: Final = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "target_file",
    "command",
    "cmd",
    "query",
    "q",
    "pattern",
    "url",
    "name",
    "id",
)
_ARG_WIDTH: Final = 60
_FILE_OPS: Final = frozenset({"read", "write", "patch"})


def _tool_names(value: Any) -> Any:
    """A list, tuple or set of names as a sorted tuple (anything else is left for the
    validator to refuse: a bare string would otherwise become its characters)."""
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(sorted(value, key=str))
    return value


def _names_type(_: Any, attribute: attrs.Attribute[tuple[str, ...]], value: Any) -> None:
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise PolicyError("must be a list of tool names", field=attribute.name)


def _opt_count(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        non_negative(_, attribute, value)


@attrs.frozen(kw_only=True)
class ClearingPolicy:
    """How the clearing tier runs (``CompactionPolicy(clearing=ClearingPolicy())``).

    When a compaction is due, old tool results are cleared first; if that brings the
    prompt under the keep target (``keep_ratio`` of the budget) nothing is summarized.
    The defaults are the measured ones (``docs/compaction.md``, "Choosing the defaults").
    """

    keep_tool_results: int = attrs.field(default=3, validator=non_negative)
    """The newest N tool results (and, with ``clear_tool_inputs``, calls) stay whole."""
    clear_at_least_tokens: int | None = attrs.field(default=None, validator=_opt_count)
    """A clearing pass runs only when it frees at least this much (None: a tenth of the
    budget): the cache is invalidated rarely and for a real gain."""
    exclude_tools: tuple[str, ...] = attrs.field(
        default=(), converter=_tool_names, validator=_names_type
    )
    """Tools whose calls and results are never cleared."""
    clear_tool_inputs: bool = attrs.field(default=False, validator=bool_type)
    """Also clear old tool-call arguments (large file writes are the typical case)."""
    dedupe_reads: bool = attrs.field(default=True, validator=bool_type)
    """A read of a path that a later read, write or patch of the same path superseded is
    cleared even among the newest ``keep_tool_results``."""
    clear_thinking: bool = attrs.field(default=True, validator=bool_type)
    """Thinking and reasoning blocks of earlier turns are left out (both providers accept
    that; only the running turn's must be sent back)."""
    offload_over_tokens: int | None = attrs.field(default=None, validator=positive_or_none)
    """A tool result over this many tokens is shown as a preview from the first request
    on (its head and tail lines, its size, the path ``read_path`` reads it back from);
    the block is kept whole. None: every result is shown whole until cleared."""
    summary_keep_ratio: float | None = attrs.field(default=0.4, validator=opt_ratio)
    """When clearing is not enough and a summary is made, the share of the budget it keeps
    verbatim (None: the policy's ``keep_ratio``). Below ``keep_ratio``, so that the next
    clearing passes have room before another summary is needed."""

    def least_tokens(self, budget: int) -> int:
        """The smallest gain a clearing pass needs under ``budget``."""
        if self.clear_at_least_tokens is not None:
            return self.clear_at_least_tokens
        return budget // 10


@attrs.frozen
class ClearingCandidate:
    """One block a clearing pass would clear, and the text it would show instead
    (``""``: left out entirely, as thinking is)."""

    index: int
    block: Block
    text: str
    reason: ClearReason


def _one_line(value: str) -> str:
    return msgspec.json.encode(value).decode()


def key_arguments(params: Mapping[str, Any]) -> str:
    """The call's arguments worth naming in a placeholder, on one line: path-like and
    command-like ones first, at most three, long strings cut (other long strings and
    nested values left out)."""
    keys = [k for k in _KEY_ORDER if k in params]
    keys += sorted(k for k in params if k not in _KEY_ORDER)
    out: list[str] = []
    for key in keys:
        value = params[key]
        if isinstance(value, str):
            if len(value) > _ARG_WIDTH:
                if key not in _KEY_ORDER:
                    continue
                value = value[: _ARG_WIDTH - 1] + "…"
            shown = _one_line(value)
        elif value is None or isinstance(value, bool | int | float):
            shown = msgspec.json.encode(value).decode()
        else:
            continue
        out.append(f"{_one_line(key)[1:-1]}={shown}")
        if len(out) == 3:
            break
    return " ".join(out)


def signature(call: Block | None, tool: str | None) -> str:
    """``tool(key=value ...)``: a call named by its tool and key arguments."""
    name = " ".join((tool or (call.tool_id if call else None) or "tool").split())
    args = key_arguments(call_params(call)) if call is not None else ""
    return f"{name}({args})"


def _size(block: Block) -> str:
    if block.data is not None:
        return f"{len(block.data):,} bytes {block.mime}"
    return f"{len(block.text):,} chars"


def _result_text(result: Block, call: Block | None, later: str | None) -> str:
    why = f", superseded by a later {later} of the same path" if later else ""
    return (
        f"[cleared: {signature(call, result.tool_id)} result, {_size(result)}{why}; "
        f"read_path {result.path} to restore]"
    )


def _input_text(call: Block) -> str:
    return (
        f"[cleared input: {signature(call, call.tool_id)}, {_size(call)}; "
        f"read_path {call.path} to restore]"
    )


def _superseded(
    blocks: Sequence[Block],
    calls: Iterable[int],
    classification: Mapping[str, str] | None,
) -> dict[str, str]:
    """Call ids of reads superseded by a later read, write or patch of the same path,
    with the tool that superseded each."""
    touched: dict[str, tuple[int, str]] = {}  # path -> (last call index, its tool)
    reads: list[tuple[int, Block, list[str]]] = []
    for i in calls:
        call = blocks[i]
        category = classify_tool(call.tool_id, classification)
        if category not in _FILE_OPS:
            continue
        paths = paths_of(call_params(call))
        for p in paths:
            touched[p] = (i, call.tool_id or "tool")
        if category == "read" and call.call_id:
            reads.append((i, call, paths))
    out: dict[str, str] = {}
    for i, call, paths in reads:
        later = [touched[p] for p in paths if touched[p][0] > i]
        if later and call.call_id:
            out[call.call_id] = max(later)[1]
    return out


def _scan(
    blocks: Sequence[Block], start: int, policy: ClearingPolicy, current_turn: str
) -> tuple[dict[str, int], list[int], list[int], list[int]]:
    """The region's tool calls (by call id, and in order), tool results, and the
    thinking of earlier turns (when cleared at all), as indices."""
    calls: dict[str, int] = {}
    call_order: list[int] = []
    results: list[int] = []
    thinking: list[int] = []
    for i in range(start, len(blocks)):
        render = block_type(blocks[i].type).render
        if render == "tool_call":
            call_order.append(i)
            calls.setdefault(blocks[i].call_id or "", i)
        elif render == "tool_result":
            results.append(i)
        elif render == "reasoning" and policy.clear_thinking and blocks[i].turn_id != current_turn:
            thinking.append(i)
    return calls, call_order, results, thinking


def clearing_candidates(
    blocks: Sequence[Block],
    start: int,
    policy: ClearingPolicy,
    *,
    carried: Set[str],
    current_turn: str,
    cleared: Mapping[str, str],
    classification: Mapping[str, str] | None = None,
) -> list[ClearingCandidate]:
    """Every block of ``blocks[start:]`` a clearing pass would clear, in order: tool
    results older than the newest ``keep_tool_results`` (and superseded reads), with
    ``clear_tool_inputs`` the calls older than the newest as many, with
    ``clear_thinking`` the thinking of turns before ``current_turn``. Never a carried
    (pinned) block, a hidden one, nor an excluded tool's; one already ``cleared`` only
    when its placeholder there is longer (an offloaded result's preview)."""
    calls, call_order, results, thinking = _scan(blocks, start, policy, current_turn)
    keep = policy.keep_tool_results
    kept_results = set(results[len(results) - keep :]) if keep else set()
    kept_calls = set(call_order[len(call_order) - keep :]) if keep else set()
    superseded = _superseded(blocks, call_order, classification) if policy.dedupe_reads else {}
    excluded = set(policy.exclude_tools)
    answered = {blocks[i].call_id for i in results}

    def eligible(b: Block) -> bool:
        return not (b.hidden or b.id in carried or b.tool_id in excluded)

    def shorter(b: Block, text: str) -> bool:
        """Not cleared yet, or shown by a longer placeholder (an offloaded preview)."""
        return b.id not in cleared or len(text) < len(cleared[b.id])

    found: list[ClearingCandidate] = []
    for i in results:
        b = blocks[i]
        cid = b.call_id or ""
        call = blocks[calls[cid]] if cid in calls else None
        if not eligible(b) or (call is not None and call.tool_id in excluded):
            continue
        later = superseded.get(cid)
        if later is None and i in kept_results:
            continue
        reason: ClearReason = "superseded" if later else "old"
        text = _result_text(b, call, later)
        if shorter(b, text):
            found.append(ClearingCandidate(i, b, text, reason))
    if policy.clear_tool_inputs:
        for i in call_order:
            b = blocks[i]
            if i in kept_calls or b.call_id not in answered or not eligible(b):
                continue
            if shorter(b, text := _input_text(b)):
                found.append(ClearingCandidate(i, b, text, "input"))
    for i in thinking:
        if eligible(blocks[i]) and shorter(blocks[i], ""):
            found.append(ClearingCandidate(i, blocks[i], "", "thinking"))
    found.sort(key=lambda c: c.index)
    return found
