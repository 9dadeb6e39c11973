"""Offload on arrival (``ClearingPolicy(offload_over_tokens=N)``): a tool result over N
tokens is shown as a preview from the first request on, and never whole.

A build log, a file listing or a JSON dump of tens of thousands of tokens mostly sits in
the prompt unread until a compaction removes it, paid for at every request in between;
offloading shows its head and tail lines, its size and the path ``read_path`` reads it
back from (a range of lines at a time) instead. The block itself is appended whole: the
timeline keeps it as the clearing tier keeps a cleared block (only its rendered form
changes), the turn log stores it at persist, and search finds it.
"""

from __future__ import annotations

from typing import Final

from timeline._compaction.clearing import signature
from timeline._compaction.truncation import cut_at_word
from timeline._model import Block

__all__ = ["HEAD_LINES", "TAIL_LINES", "offload_preview"]

HEAD_LINES: Final = 20
TAIL_LINES: Final = 10
_HEAD_CHARS: Final = 1_600
_TAIL_CHARS: Final = 800
_LINE_CHARS: Final = 240


def _clip(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else cut_at_word(line, _LINE_CHARS) + " …"


def _take(lines: list[str], most: int, chars: int) -> list[str]:
    """Up to ``most`` of ``lines`` (each clipped) within about ``chars`` characters."""
    out: list[str] = []
    used = 0
    for line in lines[:most]:
        shown = _clip(line)
        if out and used + len(shown) > chars:
            break
        out.append(shown)
        used += len(shown) + 1
    return out


def offload_preview(result: Block, call: Block | None, tokens: int) -> str:
    """What an offloaded tool result shows: what it is and how big, its first and last
    lines, and how to read the rest (``tokens``: its cost in the prompt, whole)."""
    lines = result.text.splitlines()
    head = _take(lines, HEAD_LINES, _HEAD_CHARS)
    rest = lines[len(head) :]
    tail = list(reversed(_take(list(reversed(rest)), TAIL_LINES, _TAIL_CHARS)))
    hidden = len(rest) - len(tail)
    about = (
        f"[offloaded: {signature(call, result.tool_id)} result, {len(result.text):,} chars "
        f"in {len(lines):,} lines, about {tokens:,} tokens; the first {len(head)} and last "
        f"{len(tail)} lines shown. read_path {result.path} (with offset and limit for a "
        "range of lines) reads it verbatim]"
    )
    body = [*head, f"[... {hidden:,} lines not shown ...]", *tail] if hidden else [*head, *tail]
    return "\n".join([about, *body])
