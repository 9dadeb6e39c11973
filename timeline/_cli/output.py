"""Terminal output for the CLI: colour only on a TTY (honouring ``NO_COLOR``), JSON for
scripts, and progress bars (rich, on a TTY only) for long work."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["color_enabled", "emit_json", "invoked_as", "paint", "printable", "progress"]

_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
"""What a terminal acts on instead of showing: C0 controls (ESC starts every escape
sequence, OSC 52 included), DEL, C1 controls (CSI and OSC as single characters), and the
bidirectional and line-separator formatting characters that reorder or hide text."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` safe to print on a terminal: every control character shown as its escape
    (``\\x1b``, ``\\u202e``), so text from a conversation (a tool's output, an id)
    cannot move the cursor, clear the screen, set the clipboard (OSC 52) or hide text.
    ``lines=True`` keeps newlines and tabs (multi-line text); otherwise the result is
    one line. ``--json`` output is never passed through this: it stays exact."""
    if lines:
        return "\n".join(
            _CONTROL.sub(lambda m: "\t" if m.group() == "\t" else _escape(m), part)
            for part in text.split("\n")
        )
    return _CONTROL.sub(_escape, text)


def _runnable(path: str, name: str) -> str:
    """``name`` when the shell finds it as ``path``; else ``path`` as given (relative to the
    working directory when it was typed that way), quoted for the shell."""
    found = shutil.which(name)
    if found is not None and os.path.realpath(found) == os.path.realpath(path):
        return name
    return shlex.quote(path)


def invoked_as(argv0: str | None = None) -> str:
    """The command that runs this CLI again from the same shell, as the user started it:
    ``timeline`` when it is on ``PATH``, else the script's own path
    (``.venv/bin/timeline`` after an install into a venv that is not activated), or
    ``<python> -m timeline``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(argv0) in ("__main__.py", "-m", "-c") or not os.path.exists(argv0):
        python = sys.executable or "python3"
        return f"{_runnable(python, os.path.basename(python))} -m timeline"
    return _runnable(argv0, "timeline")


def color_enabled(stream: IO[str]) -> bool:
    """Colour on a terminal unless ``NO_COLOR`` is set to anything non-empty."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, code: str, stream: IO[str]) -> str:
    """``text`` in ANSI colour ``code`` when :func:`color_enabled` for ``stream``."""
    return f"\x1b[{code}m{text}\x1b[0m" if color_enabled(stream) else text


def emit_json(value: Any) -> None:
    """One JSON document on stdout (indented, UTF-8 as is)."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def progress(description: str, total: float | None) -> Iterator[Callable[[float], None]]:
    """Yields ``advance(amount)``; draws a rich progress bar on stderr only when stderr is
    a terminal, so pipes, files and tests see no control characters."""
    if not sys.stderr.isatty():
        yield lambda amount: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda amount: bar.advance(task, amount)
