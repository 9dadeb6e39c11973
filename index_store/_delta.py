"""Structural deltas of plain data (what ``msgspec`` decodes MessagePack into).

A summary block's ``meta`` repeats most of the previous summary's: the cumulative digest
(requests, files, searches, plans) and the sections its text is written from. The stores
keep a summary's ``meta`` as a delta against the previous summary of the conversation,
so each summary's new part is stored once; :func:`apply` rebuilds the exact
value. A delta is plain data too, so it is encoded like everything else:

- ``[0]``: the same value as the base;
- ``[1, value]``: this value;
- ``[2, [key, delta, key, delta, ...]]``: a mapping with these keys, in this order, each
  value a delta against the base's value for that key (a key the base lacks has ``[1, v]``);
- ``[3, ops]``: a list, ``ops`` copying runs of the base list (``[0, start, stop]``) and
  adding items (``[1, [items]]``);
- ``[4, ops]``: a long string, the same ops over its lines (``keepends``).

Applying a delta that does not fit its base (a damaged row) raises :class:`DeltaError`.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

__all__ = ["DeltaError", "apply", "diff"]

_SAME: Final = 0
_VALUE: Final = 1
_MAP: Final = 2
_LIST: Final = 3
_LINES: Final = 4
_COPY: Final = 0
_ADD: Final = 1
_LINES_FROM: Final = 200
"""Strings at least this long with a line break are diffed by lines."""
_CANDIDATES: Final = 4
"""Base positions tried for each new run (the longest run wins)."""

_encode = msgspec.msgpack.Encoder(order="deterministic").encode


class DeltaError(ValueError):
    """A delta that does not fit the value it is applied to."""


def _size(value: Any) -> int:
    return len(_encode(value))


def diff(base: Any, new: Any) -> Any:
    """A delta turning ``base`` into ``new`` (never larger, encoded, than ``[1, new]``)."""
    whole = [_VALUE, new]
    if type(base) is type(new) and base == new:
        return [_SAME]
    candidate: Any = None
    if isinstance(base, dict) and isinstance(new, dict):
        flat: list[Any] = []
        for key, value in new.items():
            flat += [key, diff(base[key], value) if key in base else [_VALUE, value]]
        candidate = [_MAP, flat]
    elif isinstance(base, list) and isinstance(new, list) and base:
        candidate = [_LIST, _ops(base, new)]
    elif (
        isinstance(base, str)
        and isinstance(new, str)
        and len(new) >= _LINES_FROM
        and "\n" in new
        and "\n" in base
    ):
        candidate = [_LINES, _ops(base.splitlines(True), new.splitlines(True))]
    if candidate is not None and _size(candidate) < _size(whole):
        return candidate
    return whole


def _ops(base: list[Any], new: list[Any]) -> list[Any]:
    """Copy and add operations building ``new`` from runs of ``base`` (greedy: each new
    item continues the current run when it can, else starts the longest run found)."""
    keys = [_encode(v) for v in base]
    new_keys = [_encode(v) for v in new]
    where: dict[bytes, list[int]] = {}
    for i, k in enumerate(keys):
        where.setdefault(k, []).append(i)
    ops: list[Any] = []
    added: list[Any] = []
    j = 0
    while j < len(new):
        starts = where.get(new_keys[j], [])[:_CANDIDATES]
        best, length = -1, 0
        for start in starts:
            n = _run(keys, new_keys, start, j)
            if n > length:
                best, length = start, n
        if length == 0:
            added.append(new[j])
            j += 1
            continue
        if added:
            ops.append([_ADD, added])
            added = []
        ops.append([_COPY, best, best + length])
        j += length
    if added:
        ops.append([_ADD, added])
    return ops


def _run(keys: list[bytes], new_keys: list[bytes], start: int, j: int) -> int:
    n = 0
    while start + n < len(keys) and j + n < len(new_keys) and keys[start + n] == new_keys[j + n]:
        n += 1
    return n


def apply(base: Any, delta: Any) -> Any:
    """``new`` from ``base`` and ``diff(base, new)``; DeltaError when they do not fit."""
    if not isinstance(delta, list) or not delta or not isinstance(delta[0], int):
        raise DeltaError(f"not a delta: {_short(delta)}")
    tag = delta[0]
    if tag == _SAME and len(delta) == 1:
        return base
    if len(delta) != 2:
        raise DeltaError(f"not a delta: {_short(delta)}")
    if tag == _VALUE:
        return delta[1]
    if tag == _MAP and isinstance(base, dict) and isinstance(delta[1], list):
        return _apply_map(base, delta[1])
    if tag == _LIST and isinstance(base, list):
        return _apply_ops(base, delta[1])
    if tag == _LINES and isinstance(base, str):
        parts = _apply_ops(base.splitlines(True), delta[1])
        if not all(isinstance(p, str) for p in parts):
            raise DeltaError("a line delta adds something that is not a string")
        return "".join(parts)
    raise DeltaError(f"delta {_short(delta)} does not fit a base of type {type(base).__name__}")


def _apply_map(base: dict[str, Any], flat: list[Any]) -> dict[str, Any]:
    if len(flat) % 2:
        raise DeltaError("a mapping delta has a key without a value")
    out: dict[str, Any] = {}
    for i in range(0, len(flat), 2):
        key, change = flat[i], flat[i + 1]
        if not isinstance(key, str):
            raise DeltaError(f"a mapping delta has a key that is not a string: {_short(key)}")
        if isinstance(change, list) and change and change[0] == _VALUE:
            out[key] = apply(None, change)
        elif key in base:
            out[key] = apply(base[key], change)
        else:
            raise DeltaError(f"a mapping delta changes {key!r}, which its base lacks")
    return out


def _apply_ops(base: list[Any], ops: Any) -> list[Any]:
    if not isinstance(ops, list):
        raise DeltaError("a list delta's operations are not a list")
    out: list[Any] = []
    for op in ops:
        if isinstance(op, list) and len(op) == 3 and op[0] == _COPY:
            start, stop = op[1], op[2]
            if not (type(start) is int and type(stop) is int and 0 <= start < stop <= len(base)):
                raise DeltaError(f"a list delta copies {start!r}:{stop!r} of {len(base)} items")
            out += base[start:stop]
        elif isinstance(op, list) and len(op) == 2 and op[0] == _ADD and isinstance(op[1], list):
            out += op[1]
        else:
            raise DeltaError(f"not a list operation: {_short(op)}")
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
