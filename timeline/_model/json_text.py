"""What may enter a block: JSON values checked with their path, storable strings.

``params`` and ``meta`` hold JSON values only: dicts with str keys, lists, str, int
(64-bit), finite float, bool and None, nested at most :data:`MAX_DEPTH` deep. Anything
else would be changed silently on the way to a store (NaN written as null, a tuple read
back as a list) or fail there, so it is refused up front with the path named
(``params.a.b[3]``).

Strings must be storable by every backend: a lone surrogate cannot be encoded as UTF-8,
and PostgreSQL ``text`` cannot hold NUL. Identifiers (ids, paths, call ids, tool names,
conversation ids, keys) that break this are refused; free text (block text, replacement
text) gets U+FFFD in place of each lone surrogate (see ``docs/errors.md``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

from timeline._model.errors import InvalidBlockError

__all__ = ["MAX_DEPTH", "check_identifier", "check_json", "clean_text", "no_json_constant"]

MAX_DEPTH: Final = 64
"""Deepest nesting of dicts and lists accepted in ``params`` and ``meta``."""

_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")

Error = Callable[[str], Exception]


def _invalid(message: str) -> Exception:
    return InvalidBlockError(message)


def _unencodable(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def no_json_constant(name: str) -> Any:
    """``json.loads(..., parse_constant=no_json_constant)``: ``NaN`` and ``Infinity`` are
    not JSON values (Python's parser takes them)."""
    raise ValueError(f"{name} is not a JSON value")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged when valid)."""
    if _unencodable(text):
        return _SURROGATE.sub("\ufffd", text)
    return text


def check_identifier(value: str, where: str, error: Error = _invalid) -> None:
    """Refuse a string a store cannot hold as a key: lone surrogates or NUL."""
    if _unencodable(value):
        raise error(f"{where} is not valid Unicode (lone surrogate): {value!r}")
    if "\x00" in value:
        raise error(f"{where} contains a NUL character: {value!r}")


def check_json(value: Any, where: str, error: Error = _invalid) -> None:
    """Refuse anything but a JSON value, naming the path of the first bad element."""
    _check(value, where, 0, error)


def _check(value: Any, where: str, depth: int, error: Error) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        if _unencodable(value):
            raise error(f"{where} is not valid Unicode (lone surrogate)")
        return
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise error(f"{where}: integer {value} does not fit in 64 bits")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise error(f"{where}: {value} is not a JSON number (NaN and infinities are refused)")
        return
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            raise error(f"{where}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, list):
            for i, item in enumerate(value):
                _check(item, f"{where}[{i}]", depth + 1, error)
            return
        for key, item in value.items():
            if not isinstance(key, str):
                raise error(f"{where}: key {key!r} is a {type(key).__name__}, not a str")
            check_identifier(key, f"{where} key", error)
            _check(item, f"{where}.{key}", depth + 1, error)
        return
    raise error(f"{where}: a {type(value).__name__} is not a JSON value")
