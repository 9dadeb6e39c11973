"""The per-block token memo: each block's text tokenized at most once, cheap upper bounds
until an exact count is needed, and the per-block framing overhead."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final

import attrs

from timeline._model import Block, ToolSpec, block_type, media_ref, native_item, sent_type
from timeline._tokens.binary import binary_token_estimate
from timeline._tokens.counters import TokenCounter
from timeline._tokens.walk import REFERENCE_TOKENS, walk

__all__ = ["BLOCK_OVERHEAD_TOKENS", "BlockTokenMemo"]

BLOCK_OVERHEAD_TOKENS: Final = 4
LINES_HELD: Final = 256
HIDDEN_HELD: Final = 4096
"""Hidden forms whose costs :meth:`BlockTokenMemo.hidden` remembers (then it starts over)."""
"""Summary lines whose counts a memo generation remembers (:meth:`BlockTokenMemo.summary_text`)."""
"""Per-block framing overhead (role markers, part separators): the 3 a message and 1 a
content part that :func:`timeline._tokens.payload.payload_tokens` counts."""


@attrs.define
class BlockTokenMemo:
    """Per-block token costs, each block's text tokenized at most once.

    Looked up by block id, and each entry keeps the block it was counted for: a cost
    serves only that block object or one equal to it. An id alone can name different
    content over time (a restored snapshot whose block was edited, an id freed again by
    a refused append), so it never serves a block whose content differs; the identity
    check makes the usual hit (the same stored block) cost one ``is``. ``chars_tokenized``
    and ``calls`` measure the tokenizer work for benchmarks and tests.
    """

    counter: TokenCounter
    lazy_bounds: bool = True
    """Use the counter's ``upper_bound`` (when it has one) until an exact count is needed;
    False counts every block exactly (the reference engine, ``Timeline(incremental=False)``)."""
    _bound: Callable[[str], int] | None = attrs.field(default=None, init=False)
    _costs: dict[str, tuple[Block, int]] = attrs.field(factory=dict, init=False)
    """Block id -> (the block counted, its cost)."""
    _strings: dict[str, int] = attrs.field(factory=dict, init=False)
    _lines: dict[str, int] = attrs.field(factory=dict, init=False)
    _older_lines: dict[str, int] = attrs.field(factory=dict, init=False)
    _hidden: dict[str, tuple[Block, int]] = attrs.field(factory=dict, init=False)
    chars_tokenized: int = attrs.field(default=0, init=False)
    calls: int = attrs.field(default=0, init=False)
    _last_system: tuple[str, int] | None = attrs.field(default=None, init=False)
    """The last system prompt costed and its cost (:meth:`system_prompt`)."""
    _last_tools: tuple[tuple[ToolSpec, ...], int] | None = attrs.field(default=None, init=False)
    """The last tool definitions costed and their cost (:meth:`tool_definitions`)."""

    def __attrs_post_init__(self) -> None:
        bound = getattr(self.counter, "upper_bound", None)
        self._bound = bound if callable(bound) and self.lazy_bounds else None

    @property
    def lazy(self) -> bool:
        """The counter offers a cheap upper bound, so exact counts can wait."""
        return self._bound is not None

    def known(self, block: Block) -> int | None:
        """The exact cost if already counted (for this block, not just its id)."""
        entry = self._costs.get(block.id)
        if entry is None:
            return None
        held = entry[0]
        return entry[1] if held is block or held == block else None

    def bound(self, block: Block) -> int:
        """A cheap upper bound of :meth:`block` (requires a lazy counter): the bound of
        the text plus one of its document-layout label, built without copying the text."""
        upper = self._bound
        assert upper is not None
        spec = block_type(block.type)
        render = spec.render
        if render in ("header", "summary"):
            return self.block(block)
        if render in ("tool_call", "tool_result"):
            label = _TOOL_LABEL_BOUND + upper(block.tool_id or "") + upper(block.call_id or "")
            cost = upper(block.text) + label
        elif render == "attachment":
            from timeline._formats import block_text

            cost = upper(block_text(block))
        else:
            cost = upper(block.text) + (upper(spec.label) + 1 if spec.label else 0)
        ids = _provider_ids(block)
        if ids:
            cost += upper(ids)
        return self._media(block, cost, upper) + BLOCK_OVERHEAD_TOKENS

    def _media(self, block: Block, cost: int, count: Callable[[str], int]) -> int:
        """``cost`` (the block's text) with what its data or reference adds: a provider
        item is sent in place of the text to its own provider, so the larger of the two;
        bytes by their estimate; a reference by its media estimate plus the note a
        provider that does not take it gets."""
        item = native_item(block)
        if item is not None:
            return max(cost, walk(item, count))
        if block.data is not None:
            return cost + binary_token_estimate(block.data, sent_type(block))
        ref = media_ref(block)
        if ref is not None:
            note = f"[tool output ({ref.media} at {ref.label}){_REFERENCE_NOTE}]"
            return cost + REFERENCE_TOKENS[ref.media] + count(note)
        return cost

    def _count(self, text: str) -> int:
        self.calls += 1
        self.chars_tokenized += len(text)
        return self.counter.count(text)

    def block(self, block: Block) -> int:
        """Cost of ``block`` as rendered in full (text, tool name, binary, overhead)."""
        entry = self._costs.get(block.id)
        if entry is not None:  # the hot path: view.tokens looks up every pending block
            held, cost = entry
            if held is block or held == block:
                return cost
        cost = self._block_cost(block)
        self._costs[block.id] = (block, cost)
        return cost

    def uncached(self, block: Block) -> int:
        """What :meth:`block` would return, without remembering it (for a block that may
        never be added)."""
        cost = self.known(block)
        return cost if cost is not None else self._block_cost(block)

    def remember(self, block: Block, cost: int) -> None:
        """Record ``cost`` (from :meth:`uncached`) once ``block`` has been added."""
        self._costs[block.id] = (block, cost)

    def _block_cost(self, block: Block) -> int:
        from timeline._formats import block_text

        if block_type(block.type).render == "summary":
            return self._count_lines(block_text(block)) + BLOCK_OVERHEAD_TOKENS
        return self.rendered(block)

    def rendered(self, block: Block) -> int:
        """Cost of ``block`` as any payload format shows it: its document-layout text
        (labels, tool name and call id included; the longest of the formats), the
        provider-safe ids when they differ, binary data, and per-part framing."""
        from timeline._formats import block_text

        text = block_text(block)
        cost = self._count(text) if text else 0
        ids = _provider_ids(block)
        if ids:
            cost += self._count(ids)
        return self._media(block, cost, self._count) + BLOCK_OVERHEAD_TOKENS

    def hidden(self, block: Block) -> int:
        """:meth:`rendered` of a block in the form it is shown by once hidden or cleared
        (its placeholder), remembered apart from its full cost (the two share an id):
        every rebuild of the stream shows each cleared block again."""
        entry = self._hidden.get(block.id)
        if entry is not None and (entry[0] is block or entry[0] == block):
            return entry[1]
        cost = self.rendered(block)
        if len(self._hidden) >= HIDDEN_HELD:
            self._hidden.clear()
        self._hidden[block.id] = (block, cost)
        return cost

    def summary_text(self, text: str) -> int:
        """Tokens of a summary's text, counted as a summary block's are (line by line,
        with the memo its cost will use): what a summarizer sizes itself with."""
        return self._count_lines(text)

    def _count_lines(self, text: str) -> int:
        """Tokens of a summary, line by line with a memo: each incremental summary repeats
        most of the previous one's lines, so only new lines are tokenized. Never below the
        exact count: tokens do not cross newlines except runs of newlines, and each
        newline is counted as one token.

        The memo has two generations of at most :data:`LINES_HELD` lines: when the newer
        is full it becomes the older, and a line found in the older moves to the newer.
        Lines of the summaries that come between (the sizing of a summary, the requests
        announced with it) never push the last summary's out."""
        lines = text.split("\n")
        memo = self._lines
        older = self._older_lines
        total = len(lines) - 1
        for line in lines:
            if not line:
                continue
            cost = memo.get(line)
            if cost is None:
                cost = older.get(line)
                if cost is None:
                    cost = self._count(line)
                if len(memo) >= LINES_HELD:
                    self._older_lines = older = memo
                    self._lines = memo = {}
                memo[line] = cost
            total += cost
        return total

    def text(self, text: str) -> int:
        """Cost of a free string (system prompt, replacement text), memoized by value."""
        cost = self._strings.get(text)
        if cost is None:
            if len(self._strings) > 4096:
                self._strings.clear()
            cost = self._count(text)
            self._strings[text] = cost
        return cost

    def reset(self) -> None:
        """Forget every remembered cost (the reference engine counts from scratch)."""
        self._costs = {}
        self._strings = {}
        self._lines = {}
        self._older_lines = {}
        self._hidden = {}
        self._last_system = None
        self._last_tools = None

    def system_prompt(self, system: str, cost: Callable[[str], int]) -> int:
        """``cost(system)``, remembered for the last prompt seen (the same string at
        every render)."""
        last = self._last_system
        if last is not None and (last[0] is system or last[0] == system):
            return last[1]
        counted = cost(system)
        self._last_system = (system, counted)
        return counted

    def tool_definitions(
        self, tools: tuple[ToolSpec, ...], cost: Callable[[tuple[ToolSpec, ...]], int]
    ) -> int:
        """``cost(tools)``, remembered for the last definitions seen (the same at every
        render)."""
        last = self._last_tools
        if last is not None and (last[0] is tools or last[0] == tools):
            return last[1]
        counted = cost(tools)
        self._last_tools = (tools, counted)
        return counted

    def forget(self, keep: Callable[[str], bool]) -> None:
        """Drop memo entries of blocks no longer held (after eviction or clear)."""
        self._costs = {k: v for k, v in self._costs.items() if keep(k)}


_REFERENCE_NOTE: Final = " not sent: the provider does not take it here"
"""The end of the note a provider that does not take a reference gets in its place
(``timeline._formats._parts``); a reference is charged the whole note besides its text."""

_TOOL_LABEL_BOUND: Final = 32
"""Characters of a tool call or result label besides its tool name and call id:
``[TOOL RESULT `` + `` call_id=`` + `` error]`` and the newline (see ``block_text``)."""


def _provider_ids(block: Block) -> str:
    """The provider-safe tool name and call id a payload sends in place of the stored
    ones, when they differ (they are not in the document-layout text)."""
    if not block.call_id and not block.tool_id:
        return ""
    return _provider_ids_of(block.call_id or "", block.tool_id or "")


@functools.lru_cache(maxsize=1024)  # (the blocks a window shows, and some)
def _provider_ids_of(call_id: str, tool_id: str) -> str:
    from timeline._model import provider_call_id, provider_tool_name

    out = []
    if call_id and provider_call_id(call_id) != call_id:
        out.append(provider_call_id(call_id))
    if tool_id and provider_tool_name(tool_id) != tool_id:
        out.append(provider_tool_name(tool_id))
    return " ".join(out)
