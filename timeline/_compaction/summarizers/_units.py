"""The candidate facts of a block: one line of a tool result, or one sentence (or clause
of a long sentence) of a message or note, with the content words each holds.

A content word is three characters or more (or a number), not a stop word
(:data:`timeline._model.search_text.STOP_WORDS`, and the small talk of :data:`CHAT_WORDS`)
and not longer than :data:`LONG_WORD`. It is *specific* when it is a number, a path or an
identifier (anything but letters) or holds a capital letter other than the one starting
the text (a name, ``CamelCase``, ``ALL_CAPS``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import accumulate, filterfalse, islice
from typing import Final

from timeline._compaction.speakers import message_body, speaker_of
from timeline._compaction.summarizers._sentences import DECISION, matching_sentences
from timeline._compaction.textscan import has_text, sentences
from timeline._model import (
    ASSISTANT_COMPLETION,
    REACT_TOOL_RESULT,
    STOP_WORDS,
    USER_PROMPT,
    Block,
    block_type,
)

__all__ = [
    "CHAT_WORDS",
    "DEFINITION",
    "DECISION_BONUS",
    "ERROR",
    "LONG_WORD",
    "NOISE",
    "SETTING",
    "Unit",
    "content_words",
    "defining",
    "units_of",
]

_CHAT_TEXT: Final = """oh ok okay hi hey hello haha lol wow thanks thank cool awesome great
    nice sure totally yep nope yeah yes hmm well sounds sound good glad love know think
    feel get got going go really things thing lot still even way"""
CHAT_WORDS: Final = frozenset(_CHAT_TEXT.split())
"""Small talk: words that say nothing a later question asks about."""
NOISE: Final = STOP_WORDS | CHAT_WORDS
LONG_WORD: Final = 40
"""A longer word (base64, a run of one character, a digest) is no content word."""
ERROR: Final = 1.3
"""How much more an error line (``TypeError: ...``, ``FAILED``, ``failed``) is worth."""
DECISION_BONUS: Final = 1.3
"""How much more a decision the agent stated is worth (it says why the work went so)."""
SETTING: Final = 2.0
"""How much more a line setting a value (``KEY = 17``, ``"p99_ms": 2311``) is worth."""
DEFINITION: Final = 1.5
"""How much more a line of a search's result is worth when it defines the name searched
for (``def name(`` among the usages a grep found)."""
_OUTCOME: Final = 1.2
"""How much more a result's last line is worth (how a command ended is read last)."""
_SETTING: Final = re.compile(
    r"[\w\]\"'-]\s*(?:==|=|:)\s*[\"']?[-+]?[\w.:/-]*\d[\w.:/%-]*[\"']?[,;]?\s*$"
)
"""A value a line ends on: a number or a version after ``=``, ``==`` or ``:``."""
_SETTING_ENDS: Final = frozenset(
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\"',;%"
)
_EXPECTED: Final = re.compile(r"\bassert\b|\bexpected\b", re.IGNORECASE)
"""What a failed result's assertion said (``assert 3 == 4``, ``Expected: 5``)."""
_DEFINING: Final = "def|class|function|fn|func|const|let|var|type|struct|enum|interface|trait"
"""The words that define a name in the common languages."""
_ALL_LINES: Final = 16
"""A tool result of at most this many lines has every line scored."""
_HEAD_LINES: Final = 4
_TAIL_LINES: Final = 4
"""Of a longer one, its first and last this many lines are candidates..."""
_MARKED: Final = 32
"""... and at most this many lines between that say something definite."""
_SCAN_HEAD: Final = 12_000
_SCAN_TAIL: Final = 4_000
"""Of a longer tool result, only its first and last this many characters are read."""
_WORD: Final = re.compile(r"\w[\w./:@#+-]+\w|\d+")
_ERROR_WORD: Final = re.compile(
    r"(?:Error|Exception)(?::\s|$)|\bFAIL(?:ED|URE)?\b|\b(?:failed|fatal|panic|Traceback|"
    r"denied|refused|timed out)\b|\berror:"
)
_LONG: Final = re.compile(rf"\S{{{LONG_WORD + 1},}}")
_RULE: Final = re.compile(r"([=\-_*#~+.])\1{2,}")
_ERROR_PARTS: Final = (
    "error",
    "exception",
    "fail",
    "fatal",
    "panic",
    "traceback",
    "denied",
    "refused",
    "timed out",
)
_FAILING: Final = (*_ERROR_PARTS, "assert", "expected")
"""What a line that may say how something failed holds, in lower case (a quick test
before :data:`_ERROR_WORD` and :data:`_EXPECTED`)."""
_CLAUSE: Final = re.compile(r"(?<=\w)[,;:]\s+(?=[a-z]|I\b)|\s+[-\u2013\u2014]+\s+")
_CLAUSE_FROM: Final = 80
"""A sentence longer than this is quoted clause by clause."""
_CLAUSE_MIN: Final = 16
_EMPTY: Final[frozenset[str]] = frozenset()

Words = tuple[frozenset[str] | set[str], frozenset[str] | set[str]]


def _words(text: str) -> Words:
    """The content words of ``text`` (lower case) and the specific ones among them."""
    raw = _WORD.findall(text)
    if not raw:
        return _EMPTY, _EMPTY
    forms = set(raw)
    lows = set(map(str.lower, forms))
    content = lows - NOISE
    if not content:
        return _EMPTY, _EMPTY
    if max(map(len, content)) > LONG_WORD:
        return _words(_LONG.sub(" ", text))
    specific = set(map(str.lower, forms - lows))  # the forms holding a capital letter
    first = raw[0]
    if first[:1].isupper() and first[1:].islower() and raw.count(first) == 1:
        specific.discard(first.lower())  # capitalized only because it starts the text
    specific.update(filterfalse(str.isalpha, content))
    return content, specific & content


def content_words(text: str) -> int:
    """How many content words ``text`` holds."""
    return len(_words(text)[0])


class Unit:
    """A candidate fact: one line or sentence of a block, its content words and the
    specific ones among them, and what it is worth more (an error, an outcome)."""

    __slots__ = (
        "block",
        "bonus",
        "form",
        "kind",
        "lead",
        "speaker",
        "specific",
        "text",
        "words",
    )

    def __init__(self, block: Block, text: str, form: str, words: Words, speaker: str = "") -> None:
        self.block = block
        self.speaker = speaker
        self.text = f"{speaker}: {text}" if speaker else text
        self.form = form
        """``"line"`` of tool output or ``"sentence"``."""
        self.kind = ""
        """What the fact will be: ``"error"``, ``"decision"`` or ``""``."""
        self.bonus = 1.0
        self.lead = False
        """The block's answer (an error, a definition searched for): chosen first."""
        self.words, self.specific = words

    def mark_error(self) -> None:
        self.kind = "error"
        self.bonus *= ERROR
        self.lead = True

    def mark_definition(self) -> None:
        self.bonus *= DEFINITION
        self.lead = True


def _may_fail(text: str) -> bool:
    """``text`` holds a part of an error word (a quick test before the exact one)."""
    low = text.lower()
    return any(part in low for part in _ERROR_PARTS)


def _lines(text: str) -> list[str]:
    """The lines of a tool result that say something (of a long one, its head and tail),
    without their rules (``=====``)."""
    if len(text) > _SCAN_HEAD + _SCAN_TAIL:
        text = f"{text[:_SCAN_HEAD]}\n{text[-_SCAN_TAIL:]}"
    if _RULE.search(text) is not None:  # (most results have none)
        text = _RULE.sub(" ", text)
    return [line for line in map(str.strip, text.splitlines()) if len(line) > 3]


def _clauses(sentence: str) -> list[str]:
    """A long sentence's clauses (cut at a comma, semicolon, colon or dash before a
    lower-case word or ``I``), so a fact quotes the part that says something and not its
    tail; a clause too short to stand alone stays with its neighbour, as written."""
    if len(sentence) <= _CLAUSE_FROM:
        return [sentence]
    out: list[str] = []
    start = 0
    for cut in _CLAUSE.finditer(sentence):
        part = sentence[start : cut.start()]
        if len(part) >= _CLAUSE_MIN and len(sentence) - cut.end() >= _CLAUSE_MIN:
            out.append(part)
            start = cut.end()
    out.append(sentence[start:])
    return out


def _sets_value(line: str) -> bool:
    """``line`` ends on a value set (:data:`_SETTING`); the exact pattern runs only on a
    line whose last word holds a digit, from its first ``=`` or ``:`` on (no match can
    start before: the pattern is a word character, spaces, then that sign)."""
    if line[-1] not in _SETTING_ENDS:
        return False
    end = line.rstrip()
    if not any(map(str.isdigit, end[end.rfind(" ") + 1 :])):
        return False
    signs = [i for i in (line.find("="), line.find(":")) if i > 0]
    if not signs:
        return False
    start = min(signs)
    while start > 0 and line[start - 1].isspace():
        start -= 1
    return _SETTING.search(line, max(start - 1, 0)) is not None


def _holding(text: str, starts: list[int], needles: Iterable[str]) -> Iterator[int]:
    """The lines of ``text`` (that start at ``starts``) holding any of ``needles``."""
    for needle in needles:
        at = text.find(needle)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            yield i
            at = text.find(needle, starts[i + 1]) if i + 1 < len(starts) else -1


def _candidates(text: str, may_fail: bool, asked: str) -> list[str]:
    """The lines of a tool result a fact may quote: every line of a short one; of a
    longer one, its first and last lines and the ones that say something definite, at
    most :data:`_MARKED` of those (an error or what was expected and the definition of
    the name searched for first, then values set): scoring every line of a long file or
    log costs more than the few facts a result gives are worth."""
    lines = _lines(text)
    n = len(lines)
    if n <= _ALL_LINES:
        return lines
    middle = lines[_HEAD_LINES : n - _TAIL_LINES]
    first: set[int] = set()
    if may_fail or asked:
        joined = "\n".join(middle)
        starts = list(accumulate((len(line) + 1 for line in middle[:-1]), initial=0))
        if may_fail:
            first.update(_holding(joined.lower(), starts, _FAILING))
        if asked:
            defines = defining(asked)
            naming = _holding(joined, starts, (asked,))
            first.update(i for i in naming if defines.search(middle[i]) is not None)
    chosen = sorted(first)[:_MARKED]
    if len(chosen) < _MARKED:
        settings = (
            i
            for i, line in enumerate(middle)
            if i not in first and ("=" in line or ":" in line) and _sets_value(line)
        )
        chosen = sorted(chosen + list(islice(settings, _MARKED - len(chosen))))
    return [*lines[:_HEAD_LINES], *(middle[i] for i in chosen), *lines[n - _TAIL_LINES :]]


@lru_cache(maxsize=256)
def defining(name: str) -> re.Pattern[str]:
    """What a line defining ``name`` holds in the common languages (``def name``,
    ``class name``, ``const name``...)."""
    return re.compile(rf"\b(?:{_DEFINING})\s+{re.escape(name)}\b")


def _result_units(block: Block, memo: dict[str, Words], confirms: bool, asked: str) -> list[Unit]:
    """A tool result's candidate lines (:func:`_candidates`; a line repeated in the
    window is analysed once). A value set on a line (``POOL = 17``, ``"p99_ms": 2311``,
    ``httpx==0.27.2``) is worth more; in a failed result, so are its errors and what it
    expected; a tool that ``confirms`` a change (a write, a patch) says only its errors."""
    failed = bool(block.meta.get("is_error"))
    may_fail = failed or _may_fail(block.text)  # (most results do not)
    units = []
    for line in _candidates(block.text, may_fail, asked):
        words = memo.get(line)
        if words is None:
            words = memo[line] = _words(line)
        unit = Unit(block, line, "line", words)
        if _sets_value(line):
            unit.bonus = SETTING
        units.append(unit)
    if not units:
        return units
    if may_fail:
        for unit in units:
            if _may_fail(unit.text) and _ERROR_WORD.search(unit.text) is not None:
                unit.mark_error()
        if failed or any(u.kind for u in units):
            for unit in units:
                if not unit.kind and _EXPECTED.search(unit.text) is not None:
                    unit.mark_error()
    last = units[-1]
    if failed and not any(u.kind for u in units):
        last.mark_error()
    elif not last.kind:
        last.bonus = max(last.bonus, _OUTCOME)
    if confirms:
        for unit in units:
            if not unit.kind:
                unit.bonus = 0.0
    return units


def _message_units(block: Block) -> list[Unit]:
    """A message's sentences (clauses of a long one), each naming its speaker (whose
    name is not a content word: every message of theirs has it)."""
    speaker = speaker_of(block)
    text = message_body(block.text)
    if speaker and text.startswith(f"{speaker}:"):
        text = text[len(speaker) + 1 :]
    return [
        Unit(block, clause, "sentence", _words(clause), speaker)
        for s in sentences(text)
        for clause in _clauses(s)
    ]


def _decision_units(block: Block) -> list[Unit]:
    """The sentences of an agent's reply that state a decision."""
    units = []
    for s in matching_sentences([block.text], DECISION):
        unit = Unit(block, s, "sentence", _words(s))
        unit.kind, unit.bonus = "decision", DECISION_BONUS
        units.append(unit)
    return units


def units_of(
    blocks: Sequence[Block],
    *,
    messages: bool = True,
    confirming: Collection[str] = (),
    asked: Mapping[str, str] | None = None,
) -> list[list[Unit]]:
    """The candidate facts of each block that has any, block by block. Without
    ``messages`` (an agent's work) the user's messages give none and the assistant's only
    the decisions they state; the results of the ``confirming`` calls (writes and
    patches, by call id) give only their errors; a result's lines naming what its call
    searched for (``asked``: call id -> the name) are always candidates."""
    asked = asked or {}
    out: list[list[Unit]] = []
    memo: dict[str, Words] = {}
    for b in blocks:
        if b.hidden or not has_text(b.text):
            continue
        if b.type == REACT_TOOL_RESULT:
            call_id = b.call_id or ""
            out.append(_result_units(b, memo, call_id in confirming, asked.get(call_id, "")))
        elif not messages and b.type in (USER_PROMPT, ASSISTANT_COMPLETION):
            if b.type == ASSISTANT_COMPLETION:
                out.append(_decision_units(b))
        elif block_type(b.type).render == "text":
            out.append(_message_units(b))
    return out
