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
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Final

from timeline._compaction.digest_tools import call_params
from timeline._compaction.quoting import quote_capped
from timeline._compaction.sections import Fact
from timeline._compaction.summarizers._units import Unit, defining, units_of
from timeline._model import (
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    Block,
)

__all__ = ["LINE_CHARS", "SENTENCE_CHARS", "day_of", "window_facts"]

LINE_CHARS: Final = 160
"""A fact quoting a line of tool output keeps at most this many characters."""
SENTENCE_CHARS: Final = 200
"""A fact quoting a sentence keeps at most this many characters."""
_PER_RESULT: Final = 3
_PER_MESSAGE: Final = 2
_FACT_OVERHEAD: Final = 24
"""Characters a fact costs besides its text (its share of the line naming its path)."""
_SPECIFIC: Final = 1.6
_SUBJECT_CHARS: Final = 48
_CALENDAR_TEXT: Final = """monday tuesday wednesday thursday friday saturday sunday mon tue
    wed thu fri sat sun january february march april may june july august september october
    november december jan feb mar apr jun jul aug sep sept oct nov dec am pm utc gmt"""
_CALENDAR: Final = frozenset(_CALENDAR_TEXT.split())
"""Words that only say when: a unit of nothing else is no fact (the fact's day says it)."""
_TIME_CHARS: Final = "0123456789:./-"
"""What a date or a time of day is written with (``2023-05-08``, ``11:10``)."""
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
_QUERY_KEYS: Final = ("pattern", "query", "q", "regex", "search")
"""The parameters of a search call that say what it searched for."""
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
    subject = quote_capped(f"{call.tool_id or 'tool'} {main}".strip(), _SUBJECT_CHARS)
    digest = hashlib.blake2b(f"{call.tool_id}\x00{call.text}".encode(), digest_size=8)
    return subject, digest.hexdigest()


def _worth(unit: Unit, weight: dict[str, float], once: set[str]) -> float:
    """What the unit says: 0 unless it names something specific or has two words no
    other unit of the window has (small talk says neither), and says more than a time."""
    words, specific = unit.words, unit.specific
    if not (specific or len(words & once) >= 2):
        return 0.0
    rest = words - _CALENDAR
    if len(rest) <= 4 and all(not w.strip(_TIME_CHARS) for w in rest):
        return 0.0
    # (summed exactly: a sum over a set in its hash order could differ between runs)
    total = math.fsum(map(weight.__getitem__, words))
    if specific:
        total += (_SPECIFIC - 1) * math.fsum(map(weight.__getitem__, specific))
    return total * unit.bonus


def _per_char(value: float, unit: Unit) -> float:
    """What a unit is worth per character it would cost as a fact."""
    return value / (min(len(unit.text), _cap(unit)) + _FACT_OVERHEAD)


def _cap(unit: Unit) -> int:
    return LINE_CHARS if unit.form == "line" else SENTENCE_CHARS


def _block_facts(scored: list[tuple[float, Unit]], call: Block | None, floor: float) -> list[Fact]:
    """A block's best units as facts: its error lines (or the definition it searched
    for) first, whatever their worth, then the units worth most per character, if more
    than ``floor``."""
    block = scored[0][1].block
    limit = _PER_RESULT if block.type == REACT_TOOL_RESULT else _PER_MESSAGE
    best: list[int] = []
    said: set[str] = set()
    # a failure's own lines (or the definition searched for) first, then by worth per
    # character spent, as the summary chooses
    order = sorted(
        range(len(scored)),
        key=lambda i: (not scored[i][1].lead, -_per_char(*scored[i])),
    )
    for i in order:
        words = scored[i][1].words
        if words <= said:
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
        if value <= 0 or (not unit.lead and value / len(unit.text) < floor):
            continue
        text = quote_capped(unit.text, _cap(unit))
        facts.append(
            Fact(
                text=text,
                path=block.path,
                turn_id=block.turn_id,
                date=day,
                subject=subject,
                key=key,
                score=round(value / (len(text) + _FACT_OVERHEAD), 4),
                kind=unit.kind,
            )
        )
    return facts


def _printed_elsewhere(per_block: list[list[Unit]], calls: dict[str, Block]) -> None:
    """A line that the results of more than one call printed (a banner, a rule, a usage
    line) says nothing new: it is worth nothing. Runs of one call (the same command again)
    count once: their repeated error is still the news."""
    callers: dict[str, set[str]] = {}
    for units in per_block:
        if units and units[0].form == "line":
            call = calls.get(units[0].block.call_id or "")
            caller = f"{call.tool_id}\x00{call.text}" if call is not None else units[0].block.id
            for unit in units:
                callers.setdefault(unit.text, set()).add(caller)
    for units in per_block:
        for unit in units:
            if unit.form == "line" and len(callers[unit.text]) > 1:
                unit.bonus = 0.0


def _asked(calls: dict[str, Block]) -> dict[str, str]:
    """The name each search call looked for (a ``pattern`` or ``query`` that is an
    identifier), by call id."""
    out: dict[str, str] = {}
    for call_id, call in calls.items():
        params = call_params(call)
        asked = next((params[k] for k in _QUERY_KEYS if isinstance(params.get(k), str)), "")
        if asked.isidentifier():
            out[call_id] = asked
    return out


def _definitions(per_block: list[list[Unit]], asked: dict[str, str]) -> None:
    """In the result of a search for a name (``asked``), the line defining it (``def
    name(``, ``class name``) is what a later question about the name asks: it is worth
    more than the usages around it."""
    for units in per_block:
        if not units or units[0].form != "line":
            continue
        name = asked.get(units[0].block.call_id or "", "")
        if not name:
            continue
        defines = defining(name)
        for unit in units:
            if name in unit.text and defines.search(unit.text) is not None:
                unit.mark_definition()


def window_facts(
    blocks: Sequence[Block], *, messages: bool = True, confirming: Collection[str] = ()
) -> list[Fact]:
    """The facts of ``blocks`` in their order: each block's best units worth more per
    character than the window's text on average. ``messages=False`` leaves the user's
    and the assistant's messages out but the decisions the assistant states (the agent
    form lists the requests and the progress elsewhere); the results of the
    ``confirming`` calls (writes, patches) give only their errors."""
    calls = {b.call_id: b for b in blocks if b.type == REACT_TOOL_CALL and b.call_id}
    asked = _asked(calls)
    per_block = units_of(blocks, messages=messages, confirming=confirming, asked=asked)
    speakers = {units[0].speaker for units in per_block if units and units[0].speaker}
    names = {w.lower() for name in speakers for w in name.split()}
    _printed_elsewhere(per_block, calls)
    _definitions(per_block, asked)
    df: Counter[str] = Counter()
    for units in per_block:
        for unit in units:
            if names and unit.words & names:  # the people talking are named everywhere
                unit.words, unit.specific = unit.words - names, unit.specific - names
            df.update(unit.words)
    weight = {w: 1.0 / math.sqrt(n) for w, n in df.items()}
    once = {w for w, n in df.items() if n == 1}
    scored = [[(_worth(u, weight, once), u) for u in units] for units in per_block if units]
    worth = sum(w for pairs in scored for w, _ in pairs)
    chars = sum(len(u.text) for pairs in scored for _, u in pairs)
    floor = worth / chars if chars else 0.0
    facts: list[Fact] = []
    for pairs in scored:
        call_id = pairs[0][1].block.call_id
        facts += _block_facts(pairs, calls.get(call_id) if call_id else None, floor)
    return facts
