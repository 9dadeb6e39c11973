"""Terminal output for the CLI: colour only on a TTY (honouring ``NO_COLOR``), JSON for
scripts, and progress bars (rich, on a TTY only) for long work."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["color_enabled", "emit_json", "paint", "progress"]


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
