"""The one rule for text from the conversation that a summary quotes.

A summary's structure is its own lines: ``## Goal`` and the other headings, the
``<read-files>`` / ``<modified-files>`` lists, the ``[MID-TURN COMPACTION n]`` markers.
Text from the conversation (a prompt, a reply, a tool name, a file path, a line of tool
output, a tagged note) enters a summary only through :func:`quote`, which makes it one
line that cannot read as any of these:

- every line break (``\\n``, ``\\r``, and the ones only ``str.splitlines`` knows) and every
  run of whitespace becomes one space, so quoted text never starts a line of its own;
- a leading ``#`` (a heading once the line stands alone, as a listed file path does) is
  escaped as ``\\#``;
- the summary's own tags and markers anywhere in it are escaped (``&lt;/read-files>``,
  ``\\[MID-TURN COMPACTION 1]``), so no line holding a quote opens or closes a section.

Quoting a quote changes nothing, so text quoted when it was stored can be quoted again
when it is written.
"""

from __future__ import annotations

import re
from typing import Final

from timeline._compaction.truncation import cut_at_word

__all__ = ["quote", "quote_capped"]

_OWN_TAGS: Final = re.compile(
    r"<(?=\s*/?\s*(?:read-files|modified-files)\b)|(?<!\\)\[(?=\s*/?\s*MID-TURN\s+COMPACTION\b)",
    re.IGNORECASE,
)
_ESCAPED: Final = {"<": "&lt;", "[": "\\["}
_MARKER: Final = re.compile(r" \[\.\.\. (\d+) more chars\]$")


def _escape(match: re.Match[str]) -> str:
    return _ESCAPED[match.group()]


def quote(text: str) -> str:
    """``text`` on one line, unable to read as a heading, a tag or a marker of a summary."""
    line = " ".join(text.split())
    if ("<" in line or "[" in line) and _OWN_TAGS.search(line):
        line = _OWN_TAGS.sub(_escape, line)
    return f"\\{line}" if line.startswith("#") else line


def quote_capped(text: str, cap: int) -> str:
    """:func:`quote` of ``text``, cut at a word after ``cap`` characters with the rest
    counted (``[... N more chars]``); ``cap <= 0``: not cut. A text cut before (a request
    carried capped) is cut again only where it is longer than ``cap``, and then counts
    what both cuts left out."""
    earlier = 0
    if text.endswith(" more chars]"):
        tail = text[-40:]
        marked = _MARKER.search(tail)
        if marked is not None:
            earlier = int(marked.group(1))
            text = text[: len(text) - len(tail) + marked.start()]
    window = 4 * cap + 8
    long = cap > 0 and len(text) > window  # (only as much is collapsed as the cut can reach)
    line = quote(text[:window] if long else text)
    if cap <= 0 or (len(line) <= cap and not long):
        return f"{line} [... {earlier} more chars]" if earlier else line
    kept = cut_at_word(line, cap)
    total = len(text.strip()) if long else len(line)
    return f"{kept} [... {total - len(kept) + earlier} more chars]"
