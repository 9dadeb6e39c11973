"""The Goal of a summary: the task the user asked for, never a greeting."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from timeline._compaction.quoting import quote_capped
from timeline._compaction.summarizers._units import content_words
from timeline._compaction.textscan import sentences

__all__ = ["goal_of", "is_request"]

_REQUEST: Final = re.compile(
    r"^(?:[A-Z][\w.'-]*: )?(?:(?:hi|hey|hello|ok|okay|so|now|also|and|but|then)\b[ ,!.]*)*"
    r"(?:please\b|(?:can|could|would|will) (?:you|we)\b|i (?:need|want|would like|'d like)\b|"
    r"we (?:need|want|should|must)\b|let's\b|help\b|(?:add|build|change|check|clean|convert|"
    r"create|debug|delete|deploy|design|draft|explain|find|fix|generate|give|implement|"
    r"improve|install|investigate|list|look|make|migrate|move|optimi[sz]e|plan|prepare|"
    r"refactor|remove|rename|rewrite|review|run|set up|show|summari[sz]e|tell|test|"
    r"translate|update|upgrade|write)\b)",
    re.IGNORECASE,
)


def is_request(sentence: str) -> bool:
    """The sentence asks for something: ``please ...``, ``can you ...``, ``I need ...``
    or an imperative (``fix ...``, ``write ...``), after a greeting or a speaker name."""
    return _REQUEST.match(sentence) is not None


def goal_of(texts: Iterable[str], cap: int, *, people: bool = False) -> str:
    """The task the user asked for, quoted: from the first sentence that asks for
    something (a question with content counts too) to the end of its message; else the
    first message with three words of content, else the first that is no greeting; else
    ``""`` (a greeting is never a goal).
    Between ``people`` only a request counts (their questions and news are not a task)."""
    fallback = other = ""
    for text in texts:
        for s in sentences(text):
            if is_request(s) or (not people and s.endswith("?") and content_words(s) >= 2):
                return quote_capped(text[text.find(s) :], cap)
        if people or fallback:
            continue
        words = content_words(text)
        if words >= 3:
            fallback = text
        elif not other and (words or len(text.strip()) >= 40):
            other = text  # not a greeting either
    found = fallback or other
    return quote_capped(found, cap) if found else ""
