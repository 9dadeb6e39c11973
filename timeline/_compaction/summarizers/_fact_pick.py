"""Which facts a summary keeps and how they read.

The facts carried from the previous summary and the window's new ones are merged (a
newer fact with the same key replaces the older ones, the same text is kept once and,
when several calls printed it, worth less), then
chosen by worth per character until the room is spent, whatever their age, and listed
oldest first, one line per block: ``- read_file src/db.py: POOL = 17; TTL = 30
[tc:t5.tool_calls.call_b3.out.json, 8 May 2023]`` (the day only when it changes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from timeline._compaction.sections import Fact

__all__ = ["fact_lines", "merge_facts", "pick_facts"]


def merge_facts(previous: Iterable[Fact], new: Iterable[Fact]) -> list[Fact]:
    """``previous`` then ``new``, without the facts a newer block with the same key
    replaced, and each text once (the newest kept). A text that more than one call
    returned is output those calls print every time (a banner, a usage line), not what a
    later question asks about: the kept one is worth half the least of them."""
    facts = [*previous, *new]
    latest: dict[str, str] = {}
    seen: dict[str, int] = {}
    kept: list[Fact] = []
    for fact in reversed(facts):
        if fact.key:
            path = latest.setdefault(fact.key, fact.path)
            if path != fact.path:
                continue
        norm = " ".join(fact.text.lower().split())
        first = seen.get(norm)
        if first is None:
            seen[norm] = len(kept)
            kept.append(fact)
        elif kept[first].key != fact.key:
            newest = kept[first]
            score = min(newest.score, fact.score) / 2
            kept[first] = msgspec.structs.replace(newest, score=round(score, 4))
    kept.reverse()
    return kept


def fact_lines(facts: Sequence[Fact]) -> list[str]:
    """The facts as lines: consecutive facts of one block share a line naming its
    subject, its path and (when it changes) its day."""
    lines: list[str] = []
    day = ""
    i = 0
    while i < len(facts):
        first = facts[i]
        j = i + 1
        while j < len(facts) and facts[j].path == first.path and facts[j].key == first.key:
            j += 1
        texts = _joined([f.text for f in facts[i:j]])
        head = f"{first.subject}: " if first.subject else ""
        where = first.path
        if first.date and first.date != day:
            where = f"{where}, {first.date}"
            day = first.date
        lines.append(f"- {head}{texts} [{where}]")
        i = j
    return lines


def _joined(texts: list[str]) -> str:
    """One block's facts on one line; a speaker named by the first is not repeated."""
    head, sep, _ = texts[0].partition(": ")
    if sep and len(texts) > 1 and len(head) <= 40:
        lead = head + sep
        texts = texts[:1] + [t.removeprefix(lead) for t in texts[1:]]
    return "; ".join(texts)


def _size(lines: list[str]) -> int:
    return sum(map(len, lines)) + len(lines) - 1 if lines else 0


def pick_facts(facts: Sequence[Fact], room: int) -> list[Fact]:
    """The facts worth most per character whose lines fit in ``room`` characters, in
    their order."""
    if room <= 0 or not facts:
        return []
    if _size(fact_lines(facts)) <= room:
        return list(facts)
    order = sorted(range(len(facts)), key=lambda i: (-facts[i].score, -i))
    chosen: set[int] = set()
    used = 0
    paths: set[tuple[str, str]] = set()
    for i in order:
        f = facts[i]
        cost = len(f.text) + 2
        if (f.path, f.key) not in paths:
            cost += len(f.subject) + len(f.path) + len(f.date) + 10
        if used + cost > room:
            continue
        chosen.add(i)
        paths.add((f.path, f.key))
        used += cost
    picked = [facts[i] for i in sorted(chosen)]
    over = _size(fact_lines(picked)) - room
    while picked and over > 0:  # (the estimate is close; trim the worst until it fits)
        worst = sorted(range(len(picked)), key=lambda k: (picked[k].score, -k))
        drop: set[int] = set()
        for k in worst:
            drop.add(k)
            over -= len(picked[k].text) + 2
            if over <= 0:
                break
        picked = [f for k, f in enumerate(picked) if k not in drop]
        over = _size(fact_lines(picked)) - room
    return picked
