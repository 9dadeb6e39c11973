"""Public names say where they are imported from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import FunctionType

import attrs
import msgspec

__all__ = ["name_home"]


def name_home(module: str, names: Iterable[str], namespace: Mapping[str, object]) -> None:
    """Make ``module`` the home of each class and function in ``names`` (what help(),
    reprs, tracebacks and pickles show), so no implementation path leaks out.

    A class's string annotations are resolved against its module's namespace; msgspec and
    attrs resolve them once and keep them, so that is done first, where they were written.
    """
    for name in names:
        obj = namespace[name]
        if isinstance(obj, type):
            if issubclass(obj, msgspec.Struct):
                msgspec.json.Decoder(obj)
            elif attrs.has(obj):
                attrs.resolve_types(obj)
        if isinstance(obj, type | FunctionType):
            obj.__module__ = module
