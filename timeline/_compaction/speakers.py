"""Who speaks in a message: conversations between people are often kept with each
message starting with its speaker's name (``Caroline: ...``), sometimes after a time stamp
line (``[Monday, 8 May 2023, 1:56 PM]``)."""

from __future__ import annotations

import re
from typing import Final

from timeline._compaction.quoting import quote
from timeline._model import Block

__all__ = ["message_body", "speaker_of", "speaks"]

_SPEAKER: Final = re.compile(r"([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s")
_LABEL_LINE: Final = re.compile(r"\[[^\[\]]*\]\s*$")
_ROLES: Final = ("user", "assistant", "system", "tool", "")


def message_body(text: str) -> str:
    """A message without a first line that is one bracketed label (a time stamp: the
    summary says the day on its own)."""
    text = text.lstrip()
    if text.startswith("["):
        line, _, rest = text.partition("\n")
        if _LABEL_LINE.match(line):
            return rest.lstrip()
    return text


def speaks(text: str) -> bool:
    """The message starts with a speaker's name (``Caroline: ...``)."""
    return _SPEAKER.match(message_body(text)[:40]) is not None


def speaker_of(block: Block) -> str:
    """Who speaks in a message: a ``Name:`` it starts with, a custom author, or ``""``."""
    match = _SPEAKER.match(message_body(block.text)[:40])
    if match is not None:
        return match.group(1)
    if block.author not in _ROLES:
        return quote(block.author)[:40]
    return ""
