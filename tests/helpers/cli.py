"""The CLI in a child process or a pseudo-terminal, and the conversations its tests import."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

OPENAI_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful coding agent."},
    {"role": "user", "content": "Why does test_retry fail?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "retry.py"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "def retry(): return backoff(0)"},
    {"role": "tool", "tool_call_id": "call_2", "content": "1 failed: test_retry"},
    {
        "role": "assistant",
        "content": "The backoff starts at zero; the exponential retry never waits.",
    },
    {"role": "user", "content": "Fix it please."},
    {"role": "assistant", "content": "Fixed: backoff now starts at 100 ms."},
]


LONG_MESSAGES: list[dict[str, Any]] = [
    *OPENAI_MESSAGES,
    *(
        message
        for i in range(12)
        for message in (
            {"role": "user", "content": f"Question {i}: " + "why " * 60},
            {"role": "assistant", "content": f"Answer {i}: " + "because " * 60},
        )
    ),
]


ANTHROPIC_MESSAGES: dict[str, Any] = {
    "system": "You are terse.",
    "messages": [
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\nb.py"},
            ],
        },
        {"role": "assistant", "content": "Two files: a.py and b.py."},
    ],
}


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "timeline", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def cli_on_tty(*args: str, cwd: Path | None = None) -> tuple[int, bytes, bytes]:
    """Run the CLI with stderr on a pseudo-terminal: (exit code, stdout, what it drew)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "timeline", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=cwd,
    )
    os.close(follower)
    drawn = _read_all(leader)
    out, _ = proc.communicate(timeout=120)
    os.close(leader)
    return proc.returncode, out, drawn


def import_file(
    src: Path, fmt: str, db: Path | str, conversation: str
) -> subprocess.CompletedProcess[str]:
    """``timeline import SRC --format FMT --db DB --conversation ID``."""
    return cli("import", str(src), "--format", fmt, "--db", str(db), "--conversation", conversation)


def tool_heavy_messages(reads: int) -> list[dict[str, Any]]:
    """A chat where the agent reads ``reads`` files of 2,000 characters each."""
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "read_file", "arguments": f'{{"path": "m{i}.py"}}'},
        }
        for i in range(reads)
    ]
    results = [
        {"role": "tool", "tool_call_id": f"call_{i}", "content": f"# m{i}\n" + "x" * 2_000}
        for i in range(reads)
    ]
    return [
        {"role": "user", "content": "Read the modules."},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *results,
        {"role": "assistant", "content": "Read them all."},
    ]


def stdout_on_tty(*args: str, env: dict[str, str] | None = None) -> str:
    """Run the CLI with stdout on a pseudo-terminal (``env``: its environment, else this
    one without ``NO_COLOR``); returns what it printed."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "timeline", *args], stdout=follower, stderr=subprocess.PIPE, env=env
    )
    os.close(follower)
    shown = _read_all(leader)
    proc.wait(timeout=60)
    os.close(leader)
    return shown.decode()


def _read_all(leader: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closes it."""
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # Linux: EIO once the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)
