"""Field validators of the compaction policies: each raises a :class:`PolicyError` that
names the field (``keep_ratio: must be in (0, 1), got 1.5``), which ``from_mapping``
prefixes with the path of the section it was loading."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import attrs

from timeline._model import PolicyError

__all__ = [
    "bool_type",
    "failure_policy",
    "float_type",
    "int_type",
    "keywords_only",
    "non_negative",
    "opt_ratio",
    "opt_seconds",
    "opt_instance",
    "opt_str",
    "opt_str_map",
    "positive_float",
    "positive_or_none",
    "ratio",
    "ratio_incl",
]


def int_type(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyError(f"must be an int, got {type(value).__name__} {value!r}", field=name)


def float_type(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError(f"must be a number, got {type(value).__name__} {value!r}", field=name)


def bool_type(_: Any, attribute: attrs.Attribute[bool], value: Any) -> None:
    if not isinstance(value, bool):
        raise PolicyError(f"must be a bool, got {type(value).__name__}", field=attribute.name)


def opt_str(_: Any, attribute: attrs.Attribute[str | None], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise PolicyError(
            f"must be a str or None, got {type(value).__name__}", field=attribute.name
        )


def opt_seconds(_: Any, attribute: attrs.Attribute[float | None], value: Any) -> None:
    if value is None:
        return
    float_type(attribute.name, value)
    if not 0 < value < float("inf"):
        raise PolicyError(f"must be a positive number, got {value!r}", field=attribute.name)


def opt_str_map(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise PolicyError("must be a mapping of str to str", field=attribute.name)


def ratio(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
    float_type(attribute.name, value)
    if not 0.0 < value < 1.0:
        raise PolicyError(f"must be in (0, 1), got {value!r}", field=attribute.name)


def opt_ratio(_: Any, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None:
        ratio(_, attribute, value)


def ratio_incl(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
    float_type(attribute.name, value)
    if not 0.0 < value <= 1.0:
        raise PolicyError(f"must be in (0, 1], got {value!r}", field=attribute.name)


def positive_or_none(_: Any, attribute: attrs.Attribute[int | None], value: int | None) -> None:
    if value is not None:
        int_type(attribute.name, value)
    if value is not None and value <= 0:
        raise PolicyError(f"must be a positive integer, got {value!r}", field=attribute.name)


def positive_float(_: Any, attribute: attrs.Attribute[float | None], value: float | None) -> None:
    if value is not None:
        float_type(attribute.name, value)
    if value is not None and not value > 0:
        raise PolicyError(f"must be a positive number, got {value!r}", field=attribute.name)


def failure_policy(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in ("fallback", "skip"):
        raise PolicyError(f"must be 'fallback' or 'skip', got {value!r}", field=attribute.name)


def non_negative(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
    int_type(attribute.name, value)
    if value < 0:
        raise PolicyError(f"must be >= 0, got {value!r}", field=attribute.name)


def keywords_only(
    cls: type,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    aliases: Mapping[str, str] | None = None,
) -> None:
    """A policy is built from keywords it knows: a positional value or an unknown name is
    a :class:`PolicyError` naming the call to write instead (not a bare ``TypeError``).
    ``aliases``: words users reach for, and the field they mean."""
    name = cls.__name__
    fields = [f.name for f in attrs.fields(cls)]
    if args:
        hint = f"{name}({fields[0]}={args[0]!r})" if len(args) == 1 else f"{name}({fields[0]}=...)"
        raise PolicyError(f"{name} takes keyword arguments only, e.g. {hint}")
    for key in kwargs:
        if key not in fields:
            alias = (aliases or {}).get(key)
            close = [alias] if alias else difflib.get_close_matches(key, fields, n=1)
            hint = f"did you mean {close[0]}?" if close else f"its fields: {', '.join(fields)}"
            raise PolicyError(f"{name} has no field {key!r}; {hint}")


def opt_instance(cls: type) -> Any:
    """A validator: the field holds a ``cls`` or None (a nested policy section)."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not isinstance(value, cls):
            raise PolicyError(
                f"must be a {cls.__name__} or None, got {type(value).__name__}",
                field=attribute.name,
            )

    return check
