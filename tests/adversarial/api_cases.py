"""Bad inputs to the Python API: block fields, JSON values, identifiers, arguments, restore.

Each case runs against a timeline holding one committed turn (``cases.base``).
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from collections.abc import Callable
from typing import Any

import msgspec

from tests.adversarial.api_call_cases import argument_cases, nest, policy_cases, restore_cases
from tests.adversarial.cases import VALID, Case, new_tl
from timeline import (
    Block,
    InvalidBlockError,
    InvalidConversationIdError,
    Timeline,
    blocks,
)

IBE = InvalidBlockError

BAD_KEYS_TEXT = {
    "high-surrogate": "\ud800",
    "low-surrogate-inside": "a\udfffb",
    "surrogate-pair-reversed": "\udc00\ud800",
    "nul": "\x00",
    "nul-inside": "id\x00x",
}
"""Strings no store can hold as a key: refused in every identifier field."""

SURROGATE_TEXT = {
    "high": ("\ud800", "\ufffd"),
    "low-inside": ("a\udc00b", "a\ufffdb"),
    "half-emoji": ("smile \ud83d!", "smile \ufffd!"),
    "reversed-pair": ("\udfff\ud800", "\ufffd\ufffd"),
}
"""Free text with lone surrogates, and what it is stored as (U+FFFD each)."""

NOT_JSON: dict[str, Any] = {
    "nan": math.nan,
    "inf": math.inf,
    "minus-inf": -math.inf,
    "set": {1, 2},
    "frozenset": frozenset(),
    "bytes": b"x",
    "bytearray": bytearray(b"x"),
    "object": object(),
    "tuple": (1, 2),
    "complex": 1j,
    "decimal": decimal.Decimal("1.5"),
    "datetime": datetime.datetime(2026, 1, 1),
    "int-over-64-bits": 2**64,
    "int-under-64-bits": -(2**63) - 1,
    "lone-surrogate": "\ud800",
    "a-type": int,
    "a-function": len,
}
"""Values that are not JSON (or would change on the way to a store)."""

BAD_KEYS: dict[str, Any] = {
    "int": 1,
    "tuple": ("a",),
    "none": None,
    "float": 1.5,
    "surrogate": "\ud800",
    "nul": "a\x00b",
}

ID_FIELDS = ("type", "id", "author", "turn_id", "ts", "mime", "path", "call_id", "tool_id")
STR_FIELDS = ("type", "text", "id", "author", "turn_id", "ts", "mime", "path")
OPT_STR_FIELDS = ("call_id", "tool_id", "replacement_text")


def with_field(name: str, value: Any) -> Block:
    """A block whose field ``name`` is ``value`` (of a type where the field matters)."""
    if name == "call_id":
        return Block(type="react.tool.result", text="out", call_id=value)
    if name == "tool_id":
        return Block(type="react.tool.call", text="{}", tool_id=value, call_id="c-new")
    return msgspec.structs.replace(Block(type="user.prompt", text="x"), **{name: value})


def _append(block: Callable[[], Block]) -> Callable[[Timeline], object]:
    return lambda tl: tl.append(block())


def _stored_text(expected: str) -> Callable[[Timeline, Any], bool]:
    def check(tl: Timeline, stored: Any) -> bool:
        assert stored.text == expected
        assert tl.blocks[-1].text == expected
        return True

    return check


FORMATS = ("to_anthropic", "to_openai", "to_openai_responses", "to_document", "to_text")
"""Every payload a rendered context gives, for checks that must hold in all of them."""


def _payloads_carry(text: str) -> Callable[[Timeline, Any], bool]:
    """Every format's payload encodes as UTF-8 JSON (a lone surrogate left anywhere makes
    it unsendable) and carries ``text``, the cleaned form of the input."""

    def check(tl: Timeline, view: Any) -> bool:
        for name in FORMATS:
            encoded = json.dumps(getattr(view, name)(), ensure_ascii=False)
            encoded.encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
            assert text in encoded, f"{name} lost {text!r}"
        return True

    return check


def field_cases() -> list[Case]:
    out: list[Case] = []
    for field in ID_FIELDS:
        for name, value in BAD_KEYS_TEXT.items():
            out.append(
                Case(
                    f"field-{field}-{name}",
                    _append(lambda f=field, v=value: with_field(f, v)),
                    IBE,
                    match=f"Block.{field}",
                )
            )
    for field in STR_FIELDS + OPT_STR_FIELDS:
        for tname, value in {"int": 5, "bytes": b"x", "list": ["x"]}.items():
            out.append(
                Case(
                    f"field-{field}-is-{tname}",
                    _append(lambda f=field, v=value: with_field(f, v)),
                    IBE,
                    match=f"Block.{field}",
                )
            )
    for field, value in {
        "text-none": ("text", None),
        "meta-list": ("meta", []),
        "meta-str": ("meta", "x"),
        "meta-none": ("meta", None),
        "hidden-int": ("hidden", 1),
        "hidden-str": ("hidden", "yes"),
        "hidden-none": ("hidden", None),
        "data-str": ("data", "x"),
        "data-bytearray": ("data", bytearray(b"x")),
        "data-memoryview": ("data", memoryview(b"x")),
    }.items():
        out.append(
            Case(
                f"field-{field}",
                _append(lambda f=value[0], v=value[1]: with_field(f, v)),
                IBE,
                match=f"Block.{value[0]}",
            )
        )
    return out


FREE_TEXT: dict[str, Callable[[str], Block]] = {
    "user-prompt": blocks.user_prompt,
    "completion": blocks.assistant_completion,
    "note": blocks.note,
    "tool-result": lambda t: blocks.tool_result("call-1", t),
    "custom": lambda t: blocks.custom("react.plan", t),
    "attachment": lambda t: blocks.user_attachment(name="f.txt", mime="text/plain", text=t),
    "raw-block": lambda t: Block(type="user.prompt", text=t),
}


def free_text_cases() -> list[Case]:
    out = [
        Case(
            f"surrogate-{kind}-{name}",
            _append(lambda make=make, raw=raw: make(raw)),
            VALID,
            _stored_text(clean),
        )
        for kind, make in FREE_TEXT.items()
        for name, (raw, clean) in SURROGATE_TEXT.items()
    ]
    for kind in ("user-prompt", "tool-result", "completion", "note"):
        text = "before\x00after\x00"
        out.append(
            Case(
                f"nul-in-text-{kind}",
                _append(lambda make=FREE_TEXT[kind], t=text: make(t)),
                VALID,
                _stored_text(text),
            )
        )

    def hidden(tl: Timeline, _: Any) -> bool:
        return tl.blocks[2].replacement_text == "gone \ufffd"

    out.append(
        Case(
            "surrogate-hide-replacement",
            lambda tl: tl.hide([tl.blocks[2].path], "gone \udc00"),
            VALID,
            hidden,
        )
    )
    out.append(
        Case(
            "surrogate-system-prompt",
            lambda tl: tl.render("system \ud800"),
            VALID,
            _payloads_carry("system \ufffd"),
        )
    )
    out.append(
        Case(
            "surrogate-tail-text",
            lambda tl: tl.render("s", tail=[blocks.note("tail \ud800")]),
            VALID,
            _payloads_carry("tail \ufffd"),
        )
    )
    return out


def json_cases() -> list[Case]:
    out: list[Case] = []
    positions: dict[str, tuple[Callable[[Any], Any], str]] = {
        "top": (lambda v: {"k": v}, "k"),
        "nested": (lambda v: {"a": {"b": [0, 1, 2, v]}}, "a.b[3]"),
        "in-list": (lambda v: {"l": [v]}, "l[0]"),
    }
    for vname, value in NOT_JSON.items():
        for pname, (wrap, path) in positions.items():
            out.append(
                Case(
                    f"meta-{pname}-{vname}",
                    _append(lambda w=wrap, v=value: blocks.note("x", **w(v))),
                    IBE,
                    match=f"meta.{path}",
                )
            )
            if pname != "in-list":
                out.append(
                    Case(
                        f"params-{pname}-{vname}",
                        _append(lambda w=wrap, v=value: blocks.tool_call("t", w(v))),
                        IBE,
                        match=f"params.{path}",
                    )
                )
    for kname, key in BAD_KEYS.items():
        out.append(
            Case(
                f"meta-key-{kname}",
                _append(lambda k=key: Block(type="react.note", text="x", meta={"a": {k: 1}})),
                IBE,
                match="meta.a",
            )
        )
        out.append(
            Case(
                f"params-key-{kname}",
                _append(lambda k=key: blocks.tool_call("t", {"a": [{k: 1}]})),
                IBE,
                match="params.a[0]",
            )
        )
    return out


RAW_PARAMS = {
    "list": "[1]",
    "string": '"x"',
    "number": "5",
    "null": "null",
    "truncated": '{"a": 1',
    "nan-literal": '{"a": NaN}',
    "escaped-surrogate": '{"a": "\\ud800"}',
    "overflow-float": '{"a": 1e999}',
    "nested-70": '{"a":' * 70 + "1" + "}" * 70,
    "nested-100000": "[" * 100_000,
}
"""Tool-call params text that is not a JSON object (or not JSON at all)."""


def json_nesting_cases() -> list[Case]:
    """Nesting over the limit (and at it), and raw tool-call params that are not an
    object."""
    out: list[Case] = []
    for levels in (65, 200, 100_000):
        out.append(
            Case(
                f"meta-nested-{levels}",
                _append(lambda n=levels: Block(type="react.note", text="x", meta=nest(n))),
                IBE,
                match="nested deeper than 64",
            )
        )
        out.append(
            Case(
                f"params-nested-{levels}",
                _append(lambda n=levels: blocks.tool_call("t", nest(n))),
                IBE,
                match="nested deeper than 64",
            )
        )
    out.append(
        Case(
            "meta-nested-64",
            _append(lambda: Block(type="react.note", text="x", meta=nest(64))),
            VALID,
            lambda tl, b: b.meta == nest(64),
        )
    )
    out.append(
        Case(
            "params-nested-64",
            _append(lambda: blocks.tool_call("t", nest(64))),
            VALID,
            lambda tl, b: msgspec.json.decode(b.text) == nest(64),
        )
    )
    for name, text in RAW_PARAMS.items():
        out.append(
            Case(
                f"raw-params-{name}",
                _append(lambda t=text: Block(type="react.tool.call", text=t, tool_id="t")),
                IBE,
            )
        )
    out.append(
        Case(
            "raw-params-unsorted-is-canonicalized",
            _append(lambda: Block(type="react.tool.call", text='{"b": 1, "a": 2}', tool_id="t")),
            VALID,
            lambda tl, b: b.text == '{"a":2,"b":1}',
        )
    )
    return out


def conversation_id_cases() -> list[Case]:
    bad = {"empty": "", **BAD_KEYS_TEXT, "int": 5, "none": None, "bytes": b"c", "list": ["c"]}
    return [
        Case(f"conversation-id-{name}", lambda tl, v=value: new_tl(v), InvalidConversationIdError)
        for name, value in bad.items()
    ]


def all_cases() -> list[Case]:
    return (
        field_cases()
        + free_text_cases()
        + json_cases()
        + json_nesting_cases()
        + conversation_id_cases()
        + restore_cases()
        + argument_cases()
        + policy_cases()
    )
