"""Reading a rendered summary's sections, for tests that check what a summary says (the
library itself never parses a summary: its sections travel as data in ``meta``)."""

from __future__ import annotations


def parse_sections(text: str) -> dict[str, list[str]]:
    """A summary's ``## ``/``### `` sections as lists of their non-empty lines (a
    ``<tag>`` line ends a section)."""
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
