"""The sections of an inventory summary read back: the parse of a previous summary's
text, and the items the next summary carries from it without parsing it again.

Consecutive compactions each read the previous summary. When that text is the one this
process's inventory summarizer just wrote (compared by value, so a timeline loaded from a
store hits as well), its sections are known already: :func:`carried` returns them, exactly
what :func:`parse_sections` and :func:`items` would give. Only the newest summary is
kept. Anything else (another summarizer's text, a summary with a split-turn part, an item
the parse would read differently) is parsed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Final

from timeline.compaction.textscan import newline_only

__all__ = [
    "carried",
    "items",
    "parse_by_lines",
    "parse_sections",
    "plain_block",
    "read",
    "remember",
    "whole_items",
]


def parse_sections(text: str) -> dict[str, list[str]]:
    """A summary's ``## ``/``### `` sections as lists of their non-empty lines."""
    return _parse_by_section(text) if newline_only(text) else parse_by_lines(text)


def parse_by_lines(text: str) -> dict[str, list[str]]:
    """:func:`parse_sections` looking at every line (any line break ``splitlines`` knows);
    the faster section scan must equal it (``tests/test_textscan.py``)."""
    sections: dict[str, list[str]] = {}
    lines: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if raw.startswith(("### ", "## ")):
            name = raw[4 if raw.startswith("### ") else 3 :].strip()
            lines = sections.setdefault(name, []) if name else None
        elif raw.startswith("<") and line.endswith(">"):
            lines = None
        elif lines is not None:
            lines.append(line)
    return {name: lines for name, lines in sections.items() if lines}


def _special_starts(text: str) -> list[int]:
    """Where the lines starting with ``#`` or ``<`` start, in order (single-character
    ``str.find`` is a memchr; the rest of a found line is skipped)."""
    starts: list[int] = []
    for c in "#<":
        i = text.find(c)
        while i >= 0:
            if i == 0 or text[i - 1] == "\n":
                starts.append(i)
                i = text.find("\n", i)
                if i < 0:
                    break
            i = text.find(c, i + 1)
    starts.sort()
    return starts


def _parse_by_section(text: str) -> dict[str, list[str]]:
    """:func:`parse_sections` for a text whose only line break is ``\\n``: the heading and
    ``<tag>`` lines are found with ``str.find``, the lines between taken in one go."""
    sections: dict[str, list[str]] = {}
    lines: list[str] | None = None
    pos = 0  # the first line not read yet
    n = len(text)
    for start in _special_starts(text):
        eol = text.find("\n", start)
        eol = n if eol < 0 else eol
        raw = text[start:eol]
        heading = raw.startswith(("### ", "## "))
        if not heading and not (raw.startswith("<") and raw.strip().endswith(">")):
            continue  # an ordinary line: read with the ones around it
        if lines is not None and start > pos:
            lines += filter(None, map(str.strip, text[pos:start].split("\n")))
        if heading:
            name = raw[4 if raw.startswith("### ") else 3 :].strip()
            lines = sections.setdefault(name, []) if name else None
        else:
            lines = None
        pos = eol + 1
    if lines is not None and pos < n:
        lines += filter(None, map(str.strip, text[pos:].split("\n")))
    return {name: lines for name, lines in sections.items() if lines}


_previous_sections = functools.lru_cache(maxsize=8)(parse_sections)
"""The previous summary parsed once: consecutive compactions pass the same text (read
only: the lists are shared)."""
_MARKER = re.compile(r"(?:[-*]\s*(?:\[[ x]\]\s*)?|\d+\.\s*)")


def items(lines: Iterable[str]) -> list[str]:
    """Bullet text without list markers."""
    out = []
    for line in lines:
        marker = _MARKER.match(line)
        item = line[marker.end() :].strip() if marker else line
        if item and not (item[0] == "(" and item[-1] == ")"):
            out.append(item)
    return out


_USED: Final = (
    "Not Started",
    "Constraints & Preferences",
    "Done",
    "In Progress",
    "Blocked",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
    "Original Request",
    "Early Progress",
    "Context for Suffix",
)
"""The sections a summary carries items from (``Goal`` is carried as lines)."""


def read(text: str) -> tuple[dict[str, list[str]], bool]:
    """The items of each section of the previous summary ``text`` (``Goal``: its lines),
    and whether they came from :func:`carried` (read only: the lists are shared)."""
    known = carried(text)
    if known is not None:
        return known, True
    parsed = _previous_sections(text)
    out: dict[str, list[str]] = {name: items(parsed[name]) for name in _USED if name in parsed}
    if "Goal" in parsed:
        out["Goal"] = parsed["Goal"]
    return {name: lines for name, lines in out.items() if lines}, False


_latest: tuple[str, dict[str, list[str]]] | None = None


def carried(text: str) -> dict[str, list[str]] | None:
    """What :func:`read` parses out of ``text``, when ``text`` is the latest summary
    :func:`remember` was given (the comparison is by value)."""
    latest = _latest
    if latest is not None and latest[0] == text:
        return latest[1]
    return None


def remember(text: str, sections: dict[str, list[str]] | None) -> None:
    """Keep ``sections`` (exactly what :func:`read` would parse out of ``text``) for the
    next summary; None forgets. Only one summary is kept."""
    global _latest
    _latest = None if sections is None else (text, sections)


def whole_items(found: list[str]) -> bool:
    """Each item reads back as itself from a bullet line (``- ``, ``- [x] ``, ``- [ ] ``,
    ``1. ``): one line without outer whitespace, not ``(...)`` (a note the parse drops)
    and without a checkbox of its own (``- [x] a`` reads back as ``a``)."""
    joined = "\n".join(found)
    if not newline_only(joined) or joined.count("\n") != len(found) - 1:
        return False
    for item in found:
        if (
            not item
            or item.strip() != item
            or (item[0] == "(" and item[-1] == ")")
            or item.startswith(("[ ]", "[x]"))
        ):
            return False
    return True


def plain_block(text: str) -> bool:
    """No line of ``text`` starts with ``#``, ``<`` or ``[`` (a heading, a tag or a
    mid-turn marker to a parse) and its only line break is ``\\n``."""
    if not newline_only(text) or text.startswith(("#", "<", "[")):
        return False
    return not any(c in text and f"\n{c}" in text for c in "#<[")
