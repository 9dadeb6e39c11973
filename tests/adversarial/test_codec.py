"""The codec corpus: anything that is not a record this library wrote is a CodecError
(never a TypeError, UnicodeDecodeError or RecursionError), and arguments are checked."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from timeline import Block, CodecError, TimelineError, blocks, decode_block, encode_block
from timeline._model.codec import SCHEMA_VERSION, decode_record, encode_record

GOOD = Block(
    type="react.tool.result",
    text="a.py b.py",
    id="b3",
    turn_id="t1",
    path="tc:t1.tool_calls.c1.out.json",
    call_id="c1",
    meta={"is_error": False, "n": [1, 2.5, None]},
)


def _envelope(fmt: str, **changes: Any) -> bytes:
    body: Any = msgspec.to_builtins(GOOD)
    env: dict[str, Any] = {"schema": "block", "v": 1, "body": body, **changes}
    env = {k: v for k, v in env.items() if v is not _DROP}
    return msgspec.json.encode(env) if fmt == "json" else msgspec.msgpack.encode(env)


_DROP = object()


def _nest(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def _cases() -> dict[str, tuple[Any, str]]:
    out: dict[str, tuple[Any, str]] = {}
    for fmt in ("json", "msgpack"):
        good = encode_block(GOOD, fmt)
        for cut in (0, 1, 2, 5, 10, len(good) // 3, len(good) // 2, len(good) - 2, len(good) - 1):
            out[f"{fmt}-truncated-at-{cut}"] = (good[:cut], fmt)
        out[f"{fmt}-trailing-bytes"] = (good + b"\x00", fmt)
        out[f"{fmt}-schema-window"] = (_envelope(fmt, schema="window"), fmt)
        out[f"{fmt}-schema-int"] = (_envelope(fmt, schema=5), fmt)
        out[f"{fmt}-version-newer"] = (_envelope(fmt, v=SCHEMA_VERSION + 1), fmt)
        out[f"{fmt}-version-zero"] = (_envelope(fmt, v=0), fmt)
        out[f"{fmt}-version-negative"] = (_envelope(fmt, v=-1), fmt)
        out[f"{fmt}-version-string"] = (_envelope(fmt, v="1"), fmt)
        out[f"{fmt}-version-float"] = (_envelope(fmt, v=1.5), fmt)
        out[f"{fmt}-version-missing"] = (_envelope(fmt, v=_DROP), fmt)
        out[f"{fmt}-body-missing"] = (_envelope(fmt, body=_DROP), fmt)
        out[f"{fmt}-body-list"] = (_envelope(fmt, body=[1, 2]), fmt)
        out[f"{fmt}-body-text-int"] = (_envelope(fmt, body={"type": "x", "text": 5}), fmt)
        out[f"{fmt}-body-no-type"] = (_envelope(fmt, body={"text": "x"}), fmt)
        out[f"{fmt}-body-type-empty"] = (_envelope(fmt, body={"type": "", "text": "x"}), fmt)
        out[f"{fmt}-body-type-blank"] = (_envelope(fmt, body={"type": " x ", "text": "x"}), fmt)
        out[f"{fmt}-body-hidden-str"] = (_envelope(fmt, body={"type": "x", "hidden": "no"}), fmt)
        out[f"{fmt}-meta-nested-65"] = (_envelope(fmt, body={"type": "x", "meta": _nest(65)}), fmt)
        out[f"{fmt}-id-nul"] = (_envelope(fmt, body={"type": "x", "id": "a\x00"}), fmt)
        out[f"{fmt}-envelope-list"] = (
            msgspec.json.encode([1]) if fmt == "json" else msgspec.msgpack.encode([1]),
            fmt,
        )
        out[f"{fmt}-envelope-string"] = (
            msgspec.json.encode("x") if fmt == "json" else msgspec.msgpack.encode("x"),
            fmt,
        )
    deep = b'{"schema":"block","v":1,"body":{"type":"x","meta":' + b'{"a":' * 100_000
    out["json-meta-nested-100000"] = (deep, "json")
    out["json-array-nested-100000"] = (b"[" * 100_000, "json")
    out["msgpack-array-nested-100000"] = (b"\x91" * 100_000, "msgpack")
    out["json-meta-big-int"] = (_envelope("json", body={"type": "x", "meta": {"n": 2**70}}), "json")
    out["json-nan-literal"] = (
        b'{"schema":"block","v":1,"body":{"type":"x","meta":{"n":NaN}}}',
        "json",
    )
    out["json-escaped-surrogate"] = (
        b'{"schema":"block","v":1,"body":{"type":"x","text":"\\ud800"}}',
        "json",
    )
    out["json-invalid-utf8"] = (b'{"schema":"block","v":1,"body":{"type":"\xff"}}', "json")
    out["msgpack-invalid-utf8"] = (
        encode_block(GOOD, "msgpack").replace(b"a.py", b"\xff.py"),
        "msgpack",
    )
    out["json-of-msgpack"] = (encode_block(GOOD, "msgpack"), "json")
    out["msgpack-of-json"] = (encode_block(GOOD, "json"), "msgpack")
    out["empty"] = (b"", "json")
    out["str-not-bytes"] = (encode_block(GOOD, "json").decode(), "json")
    out["none"] = (None, "json")
    out["int"] = (5, "msgpack")
    out["list-of-bytes"] = ([b"x"], "json")
    out["format-xml"] = (encode_block(GOOD, "json"), "xml")
    out["format-none"] = (encode_block(GOOD, "json"), None)
    return out


CASES = _cases()


@pytest.mark.parametrize("name", [pytest.param(n, id=f"typed-codec-decode-{n}") for n in CASES])
def test_decode_refuses(name: str) -> None:
    """Not a record of this library: CodecError, nothing half-decoded."""
    data, fmt = CASES[name]
    with pytest.raises(TimelineError) as info:
        decode_block(data, fmt)
    assert type(info.value) is CodecError, f"{type(info.value).__name__}: {info.value}"


ENCODE_BAD: dict[str, tuple[Any, Any]] = {
    "dict": ({"type": "x"}, "json"),
    "none": (None, "json"),
    "str": ("block", "msgpack"),
    "meta-nan": (Block(type="x", meta={"v": math.nan}), "json"),
    "meta-set": (Block(type="x", meta={"v": {1}}), "msgpack"),
    "meta-deep": (Block(type="x", meta=_nest(70)), "json"),
    "meta-int-key": (Block(type="x", meta={1: "a"}), "json"),
    "id-surrogate": (Block(type="x", id="\ud800"), "json"),
    "path-nul": (Block(type="x", path="p\x00"), "msgpack"),
    "type-empty": (Block(type=""), "json"),
    "format-yaml": (GOOD, "yaml"),
}


@pytest.mark.parametrize(
    "name", [pytest.param(n, id=f"typed-codec-encode-{n}") for n in ENCODE_BAD]
)
def test_encode_refuses(name: str) -> None:
    """encode_block takes a valid Block and a known format: CodecError otherwise."""
    value, fmt = ENCODE_BAD[name]
    with pytest.raises(TimelineError) as info:
        encode_block(value, fmt)
    assert type(info.value) is CodecError, f"{type(info.value).__name__}: {info.value}"


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(Block(type="x", text="\x00nul\x00"), id="valid-codec-nul-text"),
        pytest.param(Block(type="x", meta=_nest(64)), id="valid-codec-meta-nested-64"),
        pytest.param(Block(type="x", data=bytes(range(256))), id="valid-codec-binary-data"),
        pytest.param(blocks.tool_call("t", {"a": [1, 2.5, None, True]}), id="valid-codec-params"),
    ],
)
@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_round_trip_of_odd_but_valid_blocks(block: Block, fmt: Any) -> None:
    """Odd but valid blocks decode to exactly what was encoded."""
    assert decode_block(encode_block(block, fmt), fmt) == block


def test_decode_record_checks_format_and_type() -> None:
    """decode_record/encode_record: unknown formats and unencodable bodies are CodecError."""
    with pytest.raises(CodecError):
        decode_record(b"", "block", Block, "yaml")
    with pytest.raises(CodecError):
        encode_record("x", {"v": object()})
