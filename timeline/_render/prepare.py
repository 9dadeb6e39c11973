"""The fixed part of a render: the system prompt's cost, the tool definitions' cost, the
volatile tail, the synthetic results of calls still waiting, and the usage calibration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs
import msgspec

from timeline._formats import CONVERSATION_START_TEXT, MISSING_RESULT_TEXT
from timeline._model import (
    CONV_RANGE_SUMMARY,
    Block,
    InvalidBlockError,
    ToolSpec,
    block_type,
    check_tail_block,
    provider_call_id,
)
from timeline._state import Ledger, VisibleStream, track_call
from timeline._tokens import BLOCK_OVERHEAD_TOKENS, BlockTokenMemo

__all__ = [
    "TOOLS_PROMPT_TOKENS",
    "Prep",
    "cut_costs",
    "framing_cost",
    "overhead",
    "prepare",
    "raw_tokens",
    "summary_cost",
    "system_cost",
    "tools_cost",
]

TOOLS_PROMPT_TOKENS: Final = 346
"""What a request with tools costs before its definitions: the tool-use instructions a
provider adds (Anthropic's, for its current models with ``tool_choice`` auto)."""


@attrs.frozen
class Prep:
    """One render's fixed inputs: the system prompt and its cost, the cost of the
    prompt's framing (with the synthetic results of waiting calls), the tool definitions
    and their cost, the tail blocks and their costs."""

    system: str
    system_tokens: int
    """The system prompt alone (0 when it is empty)."""
    framing_tokens: int
    """The prompt's framing whatever its system prompt and blocks, and the synthetic
    results of calls still waiting (see :func:`framing_cost`)."""
    tail: list[Block]
    tail_costs: list[int]
    tools: tuple[ToolSpec, ...] = ()
    tools_tokens: int = 0
    recalled: tuple[Block, ...] = ()
    """The archived blocks the first tail block (the recalled block) shows, if any."""

    @property
    def fixed_tokens(self) -> int:
        """What the prompt costs whatever its blocks: the system prompt, the framing and
        the tools."""
        return self.system_tokens + self.framing_tokens + self.tools_tokens


def system_cost(memo: BlockTokenMemo, system: str) -> int:
    """The system prompt as the text layout shows it (``[SYSTEM]`` label, framing); 0
    when it is empty. Remembered for the last prompt seen (the same string at every
    render)."""
    return memo.system_prompt(system, lambda s: _system_cost(memo, s))


def _system_cost(memo: BlockTokenMemo, system: str) -> int:
    if not system.strip():
        return 0
    return memo.text(f"[SYSTEM]\n{system}") + BLOCK_OVERHEAD_TOKENS


def framing_cost(memo: BlockTokenMemo) -> int:
    """The prompt's fixed framing, whatever its system prompt: the one message of the
    document layout, or the ``[conversation start]`` message a payload opening on the
    assistant side gets."""
    return memo.text(CONVERSATION_START_TEXT) + 2 * BLOCK_OVERHEAD_TOKENS


def tools_cost(memo: BlockTokenMemo, tools: tuple[ToolSpec, ...]) -> int:
    """The tool definitions as every provider form shows them (name, description and
    input schema as JSON text, with framing), plus the provider's tool-use instructions;
    0 without tools. Remembered for the last definitions seen (the same at every render)."""
    if not tools:
        return 0
    return memo.tool_definitions(tools, lambda t: _tools_cost(memo, t))


def _tools_cost(memo: BlockTokenMemo, tools: tuple[ToolSpec, ...]) -> int:
    cost = TOOLS_PROMPT_TOKENS + sum(
        memo.text(t.name) + memo.text(t.description) + memo.text(t.schema_json) for t in tools
    )
    return cost + BLOCK_OVERHEAD_TOKENS * len(tools)


def _tail_blocks(tail: Sequence[Block], current_turn: str) -> list[Block]:
    blocks: list[Block] = []
    for i, raw in enumerate(tail):
        b = check_tail_block(raw)
        spec = block_type(b.type)
        turn = b.turn_id or current_turn
        blocks.append(
            msgspec.structs.replace(
                b,
                id=b.id or f"tail-{i}",
                turn_id=turn,
                author=b.author or spec.default_author or "system",
                path=b.path or spec.default_path(turn, None, None),
            )
        )
    return blocks


def _missing_results(memo: BlockTokenMemo, stream: VisibleStream, tail: Sequence[Block]) -> int:
    """Tokens of the synthetic "no result recorded" results the payloads add for visible
    calls without a visible result (usually none: a render follows the result)."""
    open_calls = stream.open_calls
    if tail:
        open_calls = dict(open_calls)
        for b in tail:
            track_call(open_calls, b, block_type(b.type).render)
    return sum(
        memo.text(f"{MISSING_RESULT_TEXT} {provider_call_id(cid)}") + BLOCK_OVERHEAD_TOKENS
        for cid in open_calls
    )


def prepare(
    ledger: Ledger, system: str, tail: Sequence[Block], tools: tuple[ToolSpec, ...] = ()
) -> Prep:
    """Check and cost the system prompt, the tools and the tail; brings the stream up to
    date."""
    if not isinstance(system, str):
        raise InvalidBlockError(f"system must be a str, got {type(system).__name__}")
    ledger.begin_call()
    memo = ledger.memo
    blocks = _tail_blocks(tail, ledger.state.current_turn_id)
    stream = ledger.refresh_stream()
    framing = framing_cost(memo) + _missing_results(memo, stream, blocks)
    costs = [memo.rendered(b) for b in blocks]
    return Prep(
        system, system_cost(memo, system), framing, blocks, costs, tools, tools_cost(memo, tools)
    )


def overhead(ledger: Ledger) -> int:
    """Calibration from the last usage report: exact while the stream only grew since,
    and (only when positive, to stay conservative) after it changed shape."""
    state = ledger.state
    usage = state.usage
    if usage is None:
        return 0
    delta = usage.prompt_tokens - usage.raw_estimate
    return delta if usage.structure_version == state.structure_version else max(0, delta)


def raw_tokens(stream: VisibleStream, prep: Prep) -> int:
    """The prompt's tokens in our own count (before the calibration)."""
    return prep.fixed_tokens + stream.tokens + sum(prep.tail_costs)


def cut_costs(ledger: Ledger, prep: Prep) -> tuple[list[int], int]:
    """Each block's rendered cost after the latest summary (0 before it), as the cut
    planner takes them, and the tokens no cut changes (system prompt, tail, calibration,
    pinned blocks from before the summary)."""
    stream = ledger.refresh_stream()
    blocks = ledger.blocks
    start = ledger.summary_index + 1
    costs = [0] * len(blocks)
    fixed = prep.fixed_tokens + sum(prep.tail_costs) + max(0, overhead(ledger))
    for pos, index in enumerate(stream.source_index):
        if index >= start:
            costs[index] = stream.costs[pos]
        elif blocks[index].type != CONV_RANGE_SUMMARY:
            fixed += stream.costs[pos]  # pinned blocks already before the summary
    return costs, fixed


def summary_cost(ledger: Ledger) -> int:
    """The rendered cost of the latest summary (0: none), which the next one extends."""
    index = ledger.summary_index
    if index < 0:
        return 0
    stream = ledger.refresh_stream()
    for pos in range(len(stream.source_index) - 1, -1, -1):
        if stream.source_index[pos] == index:
            return stream.costs[pos]
    return 0
