"""The facts of the blocks a summary replaces, each scored by what it is worth to a later
question.

A unit is one line of a tool result or one sentence of a message or note. Its worth is
the sum of its content words, each weighted by how rare it is in the window (a word in
one unit counts 1, in ``n`` units ``1/sqrt(n)``: the boilerplate every result repeats is
worth little, the line only one result holds is what a later question asks about) and
more for specific words (numbers, paths, identifiers, names); errors count more. A
fact's ``score`` is that worth per character it costs. Each block gives its best few
units; a unit worth less per character than the window's own text is not a fact (quoting
it would not beat the text it replaces).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Sequence
from typing import Final

from timeline.compaction.digest_tools import call_params
from timeline.compaction.quoting import quote_capped
from timeline.compaction.sections import Fact
from timeline.compaction.speakers import message_body, speaker_of
from timeline.compaction.textscan import has_text, sentences
from timeline.model.block import (
    ASSISTANT_COMPLETION,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    USER_PROMPT,
    Block,
)
from timeline.model.block_types import block_type

__all__ = [
    "LINE_CHARS",
    "SENTENCE_CHARS",
    "STOP_WORDS",
    "content_words",
    "day_of",
    "window_facts",
]

LINE_CHARS: Final = 160
"""A fact quoting a line of tool output keeps at most this many characters."""
SENTENCE_CHARS: Final = 200
"""A fact quoting a sentence keeps at most this many characters."""
_PER_RESULT: Final = 3
_PER_MESSAGE: Final = 2
_SCAN_HEAD: Final = 24_000
_SCAN_TAIL: Final = 6_000
"""Of a longer tool result, only its first and last this many characters are read."""
_FACT_OVERHEAD: Final = 24
"""Characters a fact costs besides its text (its share of the line naming its path)."""
_CLAUSE: Final = re.compile(r"(?<=\w)[,;:]\s+(?=[a-z]|I\b)|\s+[-\u2013\u2014]+\s+")
_CLAUSE_FROM: Final = 80
"""A sentence longer than this is quoted clause by clause."""
_CLAUSE_MIN: Final = 16
_LONG: Final = 40
"""A longer word (base64, a run of one character, a digest) is no content word."""
_SPECIFIC: Final = 1.6
_ERROR: Final = 2.0
_OUTCOME: Final = 1.5

_RULE: Final = re.compile(r"([=\-_*#~+.])\1{2,}")
_RULE_CHARS: Final = frozenset("=-_*#~+.")
_WORD: Final = re.compile(r"\w[\w./:@#+-]*\w|\w")
_ERROR_WORD: Final = re.compile(
    r"\w*(?:Error|Exception)\b|\bFAIL(?:ED|URE)?\b|\b(?:failed|failure|fatal|panic|"
    r"Traceback|denied|refused|timed out|errors?)\b"
)
_CALENDAR_TEXT: Final = """monday tuesday wednesday thursday friday saturday sunday mon tue
    wed thu fri sat sun january february march april may june july august september october
    november december jan feb mar apr jun jul aug sep sept oct nov dec am pm utc gmt"""
_CALENDAR: Final = frozenset(_CALENDAR_TEXT.split())
_TIME_CHARS: Final = "0123456789:./-"
"""What a date or a time of day is written with (``2023-05-08``, ``11:10``)."""
"""Words that only say when: a unit of nothing else is no fact (the fact's day says it)."""
_SUBJECT_KEYS: Final = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "command",
    "cmd",
    "query",
    "q",
    "pattern",
    "url",
)
_MONTHS: Final = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_STOP_TEXT: Final = """
    a about above after again all also am an and any are aren't as at be because been
    before being below between both but by can can't could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's like me
    more most much my myself no nor not now of off on once only or other ought our ours
    ourselves out over own really same she she'd she'll she's should shouldn't so some such
    than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up us very was wasn't we
    we'd we'll we're we've were weren't what what's when when's where where's which while
    who who's whom why why's will with won't would wouldn't yeah yes you you'd you'll you're
    you've your yours yourself yourselves oh ok okay hi hey hello haha lol wow thanks thank
    cool awesome great nice sure totally yep nope hmm well sounds sound good glad love
    know think feel get got going go really things thing lot still even way"""
STOP_WORDS: Final = frozenset(_STOP_TEXT.split())
"""Words that say nothing a later question asks about (function words, greetings)."""


def content_words(text: str) -> int:
    """How many words of ``text`` carry content (not a stop word, three letters or a
    number)."""
    return sum(
        1
        for w in _WORD.findall(text)
        if (len(w) >= 3 or w.isdigit()) and w.lower() not in STOP_WORDS
    )


def day_of(ts: str) -> str:
    """The day of an ISO timestamp as people write it (``8 May 2023``); ``""`` if none."""
    if len(ts) < 10 or ts[4] != "-" or ts[7] != "-":
        return ""
    year, month, day = ts[:4], ts[5:7], ts[8:10]
    if not (year.isdigit() and month.isdigit() and day.isdigit()) or not 1 <= int(month) <= 12:
        return ""
    return f"{int(day)} {_MONTHS[int(month) - 1]} {year}"


def _subject(call: Block | None) -> tuple[str, str]:
    """What a tool result answered (``read_file src/db.py``) and the key a newer result
    of the same call replaces it by."""
    if call is None:
        return "", ""
    params = call_params(call)
    main = next((params[k] for k in _SUBJECT_KEYS if isinstance(params.get(k), str)), "")
    subject = quote_capped(f"{call.tool_id or 'tool'} {main}".strip(), 80)
    digest = hashlib.blake2b(f"{call.tool_id}\x00{call.text}".encode(), digest_size=8)
    return subject, digest.hexdigest()


def _specific(word: str, first: bool) -> bool:
    """A number, a path, an identifier or a name (a capital letter not starting the unit)."""
    if not word.isalpha():
        return True
    return (not first and word[0].isupper()) or any(c.isupper() for c in word[1:])


class _Unit:
    """A candidate fact: one line or sentence of a block, and its content words (each
    marked specific or not)."""

    __slots__ = ("block", "bonus", "error", "kind", "speaker", "text", "words")

    def __init__(self, block: Block, text: str, kind: str, speaker: str = "") -> None:
        self.block = block
        self.speaker = speaker
        self.text = f"{speaker}: {text}" if speaker else text
        self.kind = kind
        self.error = _ERROR_WORD.search(text) is not None if kind == "line" else False
        self.bonus = _ERROR if self.error else 1.0
        words: dict[str, bool] = {}
        for i, word in enumerate(_WORD.findall(text)):
            low = word.lower()
            if low in STOP_WORDS or (len(low) < 3 and not low.isdigit()) or len(low) > _LONG:
                continue
            words[low] = words.get(low, False) or _specific(word, i == 0)
        self.words = words


def _lines(text: str) -> Iterator[str]:
    """The lines of a tool result that say something (of a long one, its head and tail),
    without their rules (``=====``)."""
    if len(text) > _SCAN_HEAD + _SCAN_TAIL:
        text = f"{text[:_SCAN_HEAD]}\n{text[-_SCAN_TAIL:]}"
    for line in text.splitlines():
        if _RULE_CHARS.intersection(line):
            line = _RULE.sub(" ", line)
        line = line.strip()
        if len(line) > 3:
            yield line


def _sentences(block: Block) -> Iterator[_Unit]:
    """A message's sentences, each naming its speaker (whose name is not a content word:
    every message of theirs has it)."""
    speaker = speaker_of(block)
    text = message_body(block.text)
    if speaker and text.startswith(f"{speaker}:"):
        text = text[len(speaker) + 1 :]
    for s in sentences(text):
        for clause in _clauses(s):
            yield _Unit(block, clause, "sentence", speaker)


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


def _units(blocks: Sequence[Block]) -> list[list[_Unit]]:
    """The candidate facts of each block that has any, block by block."""
    out: list[list[_Unit]] = []
    for b in blocks:
        if b.hidden or not has_text(b.text):
            continue
        if b.type == REACT_TOOL_RESULT:
            units = [_Unit(b, line, "line") for line in _lines(b.text)]
            if units:
                last = units[-1]
                last.bonus *= _OUTCOME  # how a command ended is read last
                if b.meta.get("is_error") and not any(u.error for u in units):
                    last.error, last.bonus = True, last.bonus * _ERROR
            out.append(units)
        elif block_type(b.type).render == "text":
            out.append(list(_sentences(b)))
    return out


def _worth(unit: _Unit, df: dict[str, int]) -> float:
    """What the unit says: 0 unless it names something specific or has two words no
    other unit of the window has (small talk says neither), and says more than a time."""
    total = 0.0
    specific = unique = 0
    for word, is_specific in unit.words.items():
        n = df[word]
        total += (_SPECIFIC if is_specific else 1.0) / math.sqrt(n)
        specific += is_specific
        unique += n == 1
    if not (specific or unique >= 2) or all(
        w in _CALENDAR or not w.strip(_TIME_CHARS) for w in unit.words
    ):
        return 0.0
    return total * unit.bonus


def _block_facts(scored: list[tuple[float, _Unit]], call: Block | None, floor: float) -> list[Fact]:
    """A block's best units (worth more per character than ``floor``) as facts."""
    block = scored[0][1].block
    limit = _PER_RESULT if block.type == REACT_TOOL_RESULT else _PER_MESSAGE
    best: list[int] = []
    said: set[str] = set()
    for i in sorted(range(len(scored)), key=lambda i: -scored[i][0]):
        words = scored[i][1].words
        if words.keys() <= said:
            continue  # nothing a better unit of the block does not say
        said.update(words)
        best.append(i)
        if len(best) == limit:
            break
    subject, key = _subject(call)
    day = day_of(block.ts)
    facts = []
    for i in sorted(best):
        value, unit = scored[i]
        if value <= 0 or value / len(unit.text) < floor:
            continue
        text = quote_capped(unit.text, LINE_CHARS if unit.kind == "line" else SENTENCE_CHARS)
        facts.append(
            Fact(
                text=text,
                path=block.path,
                turn_id=block.turn_id,
                date=day,
                subject=subject,
                key=key,
                score=round(value / (len(text) + _FACT_OVERHEAD), 4),
                error=unit.error,
            )
        )
    return facts


def window_facts(blocks: Sequence[Block], *, messages: bool = True) -> list[Fact]:
    """The facts of ``blocks`` in their order: each block's best units worth more per
    character than the window's text on average. ``messages=False`` leaves the user's
    and the assistant's messages out (the agent form lists those elsewhere)."""
    calls = {b.call_id: b for b in blocks if b.type == REACT_TOOL_CALL and b.call_id}
    per_block = _units(
        [b for b in blocks if messages or b.type not in (USER_PROMPT, ASSISTANT_COMPLETION)]
    )
    names = {w.lower() for units in per_block for u in units for w in u.speaker.split()}
    df: dict[str, int] = {}
    for units in per_block:
        for unit in units:
            if names:  # the people talking are named everywhere: no content
                unit.words = {w: s for w, s in unit.words.items() if w not in names}
            for word in unit.words:
                df[word] = df.get(word, 0) + 1
    scored = [[(_worth(u, df), u) for u in units] for units in per_block if units]
    worth = sum(w for pairs in scored for w, _ in pairs)
    chars = sum(len(u.text) for pairs in scored for _, u in pairs)
    floor = worth / chars if chars else 0.0
    facts: list[Fact] = []
    for pairs in scored:
        call_id = pairs[0][1].block.call_id
        facts += _block_facts(pairs, calls.get(call_id) if call_id else None, floor)
    return facts
