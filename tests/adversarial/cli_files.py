"""The CLI import corpus: files each format must refuse with one error line (typed
cases), raw bytes that are not a usable JSON file, and odd files that must import."""

from __future__ import annotations

import json
from typing import Any

import pytest

GOOD_OPENAI = [
    {"role": "user", "content": "hello"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
]


def call(arguments: Any, call_id: Any = "c1", name: Any = "ls") -> list[Any]:
    fn = {"name": name, "arguments": arguments}
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "function": fn}]},
    ]


def deep_args(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


OPENAI_BAD: dict[str, Any] = {
    "arguments-object": call({"a": 1}),
    "call-id-int": call("{}", call_id=5),
    "call-id-object": call("{}", call_id={"x": 1}),
    "call-id-nul": call("{}", call_id="c\x00"),
    "function-name-int": call("{}", name=7),
    "tool-calls-number": [{"role": "assistant", "content": None, "tool_calls": 5}],
    "tool-calls-string": [{"role": "assistant", "content": None, "tool_calls": "x"}],
    "tool-calls-item-string": [{"role": "assistant", "tool_calls": ["x"]}],
    "image-url-string": [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": "data:image/png;base64,AA=="}],
        }
    ],
    "image-url-bad-base64": [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}],
        }
    ],
    "part-type-list": [{"role": "user", "content": [{"type": ["text"], "text": "x"}]}],
    "part-text-number": [{"role": "user", "content": [{"type": "text", "text": 5}]}],
    "part-not-object": [{"role": "user", "content": ["x"]}],
    "content-number": [{"role": "user", "content": 5}],
    "assistant-content-number": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": 5},
    ],
    "role-unknown": [{"role": "wizard", "content": "x"}],
    "role-list": [{"role": ["user"], "content": "x"}],
    "message-list": [["user", "x"]],
    "message-string": ["hello"],
    "messages-string": {"messages": "x"},
    "top-level-number": 5,
    "top-level-null": None,
    "tool-without-call-id": [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}],
    "tool-call-id-int": [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": 3, "content": "y"},
    ],
    "tool-orphan": [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "zz", "content": "y"},
    ],
}

ANTHROPIC_BAD: dict[str, Any] = {
    "type-list": [{"role": "user", "content": [{"type": ["text"], "text": "x"}]}],
    "type-object": [{"role": "user", "content": [{"type": {"a": 1}, "text": "x"}]}],
    "text-number": [{"role": "user", "content": [{"type": "text", "text": 1.5}]}],
    "content-number": [{"role": "user", "content": 5}],
    "role-missing": [{"content": "x"}],
    "tool-use-input-list": [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": [1]}],
        },
    ],
    "tool-use-input-string": [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": "{}"}],
        },
    ],
    "tool-use-input-deep": [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "ls", "input": json.loads(deep_args(70))}
            ],
        },
    ],
    "tool-use-id-int": [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": 1, "name": "ls", "input": {}}],
        },
    ],
    "tool-result-content-number": [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 5}]},
    ],
    "tool-result-is-error-string": [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": "yes"}],
        },
    ],
    "tool-result-orphan": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz"}]}
    ],
    "tool-result-no-id": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}],
    "image-bad-base64": [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "@@"},
                }
            ],
        }
    ],
    "source-string": [{"role": "user", "content": [{"type": "image", "source": "x"}]}],
}

RAW_BAD: dict[str, bytes] = {
    "not-json": b"{oops",
    "empty": b"",
    "nan-literal": b'[{"role": "user", "content": NaN}]',
    "invalid-utf8": b'[{"role": "user", "content": "\xff\xfe"}]',
    "nested-100000": b"[" * 100_000,
    "nested-object-10000": b'{"a":' * 10_000,
    "nested-under-messages": b'{"messages": [' + b"[" * 200 + b"]" * 200 + b"]}",
    "trailing-garbage": b'[{"role": "user", "content": "x"}] extra',
    "utf16": json.dumps([{"role": "user", "content": "x"}]).encode("utf-16"),
}

VALID_FILES: dict[str, tuple[str, bytes]] = {
    "bom": ("openai", b"\xef\xbb\xbf" + json.dumps(GOOD_OPENAI).encode()),
    "escaped-lone-surrogate-text": ("openai", b'[{"role": "user", "content": "a\\ud800b"}]'),
    # issue #24: a provider produced these, so they import (a reused call id gets a
    # unique internal id; an image by URL is kept as a reference, nothing fetched)
    "openai-duplicate-call-id": (
        "openai",
        json.dumps(
            [{"role": "user", "content": "hello"}, *call("{}")[1:], *call("{}")[1:]]
        ).encode(),
    ),
    "openai-image-url-remote": (
        "openai",
        json.dumps(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                    ],
                }
            ]
        ).encode(),
    ),
    "anthropic-image-url-source": (
        "anthropic",
        json.dumps(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "image", "source": {"type": "url", "url": "https://x"}},
                    ],
                }
            ]
        ).encode(),
    ),
    "system-list-with-junk": (
        "anthropic",
        json.dumps(
            {"system": [5, {"text": "s"}], "messages": [{"role": "user", "content": "x"}]}
        ).encode(),
    ),
}


RESPONSES_BAD: dict[str, Any] = {
    "arguments-object": [
        {"type": "function_call", "call_id": "c", "name": "x", "arguments": {"a": 1}}
    ],
    "output-orphan": [{"type": "function_call_output", "call_id": "zz", "output": "x"}],
    "input-number": {"input": 5},
    "call-id-number": [{"type": "function_call", "call_id": 5, "name": "x", "arguments": "{}"}],
    "text-number": [{"role": "user", "content": [{"type": "input_text", "text": 5}]}],
}


ARGUMENTS_TEXTS: dict[str, str] = {
    "list-json": "[1]",
    "nan": '{"a": NaN}',
    "infinity": '{"a": -Infinity}',
    "not-json": "{oops",
    "cut-off": '{"path": "src/ma',
    "nested-100": deep_args(100),
    "nested-5000": deep_args(5000),
    "open-5000": "[" * 5000,
    "escaped-surrogate-key": '{"\\ud800": 1}',
    "integer-past-64-bits": '{"n": 123456789012345678901234567890}',
}
"""Tool-call arguments that are not a JSON object a block can hold. Models write such
text and the APIs send it back as written, so an import keeps it (``{"_raw": text}``,
the call's own form for its provider): tests/formats/test_broken_arguments.py."""


def file_cases() -> list[Any]:
    out = []
    for name, data in RESPONSES_BAD.items():
        out.append(
            pytest.param("responses", json.dumps(data).encode(), id=f"typed-cli-responses-{name}")
        )
    for name, data in OPENAI_BAD.items():
        out.append(pytest.param("openai", json.dumps(data).encode(), id=f"typed-cli-openai-{name}"))
    for name, data in ANTHROPIC_BAD.items():
        out.append(
            pytest.param("anthropic", json.dumps(data).encode(), id=f"typed-cli-anthropic-{name}")
        )
    for name, raw in RAW_BAD.items():
        out.append(pytest.param("openai", raw, id=f"typed-cli-file-{name}"))
    return out
