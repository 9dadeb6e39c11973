"""Seeded multi-session chats between two people, and questions about them.

The shape of public long-conversation memory benchmarks: two people talk in 22-30 dated
sessions of about 20 utterances each (a session is one turn; one person is the user, the
other the assistant). Between the small talk each says things about their life (what
they research, events they went to, pets, jobs and job changes, trips they plan,
favourites, race times, relatives, hobbies, purchases). After the last session the
questions are asked: one fact, when something happened (the session's date), a fact
that changed (the newest value), and lists gathered over several sessions.
"""

from __future__ import annotations

import collections
import datetime as dt
import random
from collections.abc import Callable
from typing import Any

from benchmarks.recall import chat_words as W
from benchmarks.recall.model import Question, Role, Say, Session, Step, Turn

SYSTEM = (
    "You are the memory of a long-running chat between two friends. Answer questions "
    "about what they said, citing the session when you can."
)

TAILS = (
    "It's been taking up most of my evenings, but I think it's worth it.",
    "I'm still figuring out how I feel about it.",
    "Everyone I told seemed really excited for me.",
    "I didn't expect it to feel this good, honestly.",
    "It was a bit chaotic, but in the best way.",
    "I'll tell you all about it next time.",
    "My partner thinks I'm a little obsessed now.",
    "It's one of those things I'd been putting off for years.",
)


class _Facts:
    """The facts one person tells, as (utterance, questions) pairs; questions name the
    utterance's key with ``@`` and the session header's with ``@header``."""

    def __init__(self, rng: random.Random, name: str) -> None:
        self.rng = rng
        self.name = name
        self.used: set[str] = set()
        self.job: tuple[str, str] | None = None  # (company, role)

    def pick(self, pool: Any) -> str:
        for _ in range(50):
            value = str(self.rng.choice(pool))
            if value not in self.used:
                self.used.add(value)
                return value
        return str(self.rng.choice(pool))

    def tail(self) -> str:
        return self.rng.choice(TAILS)

    def makers(self) -> list[Callable[[], tuple[str, list[dict[str, Any]]]]]:
        return [
            self.research,
            self.event,
            self.event,
            self.pet,
            self.job_fact,
            self.trip,
            self.favorite,
            self.favorite,
            self.race,
            self.relative,
            self.hobby,
            self.hobby,
            self.purchase,
        ]

    def say(self, *templates: str, **values: Any) -> str:
        """One of ``templates`` filled in, with a closing remark."""
        return self.rng.choice(templates).format(**values) + " " + self.tail()

    def ask(
        self, slot: str, templates: tuple[str, ...], answers: tuple[str, ...], **extra: Any
    ) -> dict[str, Any]:
        """A question in one of ``templates``' wordings; ``slot`` names what it asks, so two
        facts answering the same question can be told apart (and left out)."""
        text = self.rng.choice(templates).format(n=self.name)
        return {"text": text, "answers": answers, "slot": f"{self.name}/{slot}", **extra}

    def research(self) -> tuple[str, list[dict[str, Any]]]:
        topic = self.pick(W.TOPICS)
        text = self.say(
            "I've been researching {t} lately.",
            "I spent the whole week reading about {t}, it's a rabbit hole.",
            "Lately I've been looking into {t}, comparing options every night.",
            t=topic,
        )
        q = ("What has {n} been researching?", "What was {n} looking into lately?")
        return text, [self.ask("research", q, (topic,))]

    def event(self) -> tuple[str, list[dict[str, Any]]]:
        event, place = self.pick(W.EVENTS), self.pick(W.PLACES)
        when = self.rng.choice(("Yesterday", "Last weekend", "On Friday", "This morning"))
        text = self.say(
            "{w} I went to a {e} at {p}.",
            "{w} I finally made it to the {e} at {p}.",
            "Guess where I was {lw}: a {e} over at {p}!",
            w=when,
            lw=when.lower(),
            e=event,
            p=place,
        )
        where = (f"Where did {{n}} go to the {event}?", f"Where was the {event} {{n}} attended?")
        date = (f"When did {{n}} go to the {event}?", f"On what date did {{n}} attend the {event}?")
        return text, [
            self.ask(f"where:{event}", where, (place,)),
            self.ask(f"when:{event}", date, ("@date", event), kind="temporal"),
        ]

    def pet(self) -> tuple[str, list[dict[str, Any]]]:
        kind, pet = self.pick(W.PET_KINDS), self.pick(W.PET_NAMES)
        text = self.say(
            "We just adopted a {k}! We named it {p}.",
            "Meet the newest family member: a {k} called {p}.",
            "The kids begged for months, so now we have a {k}. {p} is already spoiled.",
            k=kind,
            p=pet,
        )
        q = (f"What is the name of {{n}}'s {kind}?", f"What did {{n}} call the new {kind}?")
        return text, [self.ask(f"pet:{kind}", q, (pet,))]

    def job_fact(self) -> tuple[str, list[dict[str, Any]]]:
        company, role = self.pick(W.COMPANIES), self.pick(W.ROLES)
        employer = ("Where does {n} work now?", "Who is {n}'s current employer?")
        if self.job is None:
            self.job = (company, role)
            text = self.say(
                "Big news: I started a new job as a {r} at {c}.",
                "I got the offer! I'm the new {r} at {c} starting Monday.",
                r=role,
                c=company,
            )
            return text, [
                self.ask(
                    "role", ("What job did {n} start?", "What is {n}'s new profession?"), (role,)
                ),
                self.ask("employer", employer, (company,), id="job"),
            ]
        old, _ = self.job
        self.job = (company, role)
        text = self.say(
            "I left {o} last month, I'm now working at {c} as a {r}.",
            "So I quit {o}. As of this week I'm a {r} at {c}.",
            o=old,
            c=company,
            r=role,
        )
        return text, [self.ask("employer", employer, (company,), kind="update", id="job")]

    def trip(self) -> tuple[str, list[dict[str, Any]]]:
        city, month = self.pick(W.CITIES), self.rng.choice(W.MONTHS)
        text = self.say(
            "We're planning a trip to {c} in {m}, I can't wait.",
            "We booked flights! {c} in {m}, just the two of us.",
            c=city,
            m=month,
        )
        where = ("Where is {n} planning to travel?", "Which city is {n} going to visit?")
        when = (f"When is {{n}}'s trip to {city}?", f"In which month will {{n}} be in {city}?")
        return text, [
            self.ask("trip", where, (city,)),
            self.ask(f"trip:{city}", when, (f"{city} in {month}",)),
        ]

    def favorite(self) -> tuple[str, list[dict[str, Any]]]:
        kind = self.pick(list(W.FAVORITE_KINDS))
        thing = self.pick(W.FAVORITE_KINDS[kind])
        text = self.say(
            "Have I ever told you my favorite {k} is {t}?",
            "Nothing beats {t}, honestly. Still my favorite {k}.",
            k=kind,
            t=thing,
        )
        q = (f"What is {{n}}'s favorite {kind}?", f"Which {kind} does {{n}} love most?")
        return text, [self.ask(f"favorite:{kind}", q, (thing,))]

    def race(self) -> tuple[str, list[dict[str, Any]]]:
        race = self.pick(W.RACES)
        m, s = self.rng.randint(20, 130), self.rng.randint(0, 59)
        time = f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"
        text = self.say(
            "I finished the {r} in {t}, a personal best!",
            "Official result from the {r} came in: {t}. My legs are jelly.",
            r=race,
            t=time,
        )
        q = (f"What was {{n}}'s time in the {race}?", f"How fast did {{n}} run the {race}?")
        return text, [self.ask(f"race:{race}", q, (time,))]

    def relative(self) -> tuple[str, list[dict[str, Any]]]:
        rel, who = self.pick(W.RELATIVES), self.pick(W.REL_NAMES)
        age = self.rng.randint(3, 95)
        text = self.say(
            "My {r} {w} turns {a} next week, so we're planning a surprise party.",
            "Can you believe {w}, my {r}, turns {a} soon? We're baking a huge cake.",
            r=rel,
            w=who,
            a=age,
        )
        name = (f"What is the name of {{n}}'s {rel}?", f"What is {{n}}'s {rel} called?")
        old = (f"How old is {{n}}'s {rel} turning?", f"What birthday is {{n}}'s {rel} celebrating?")
        return text, [
            self.ask(f"name:{rel}", name, (who,)),
            self.ask(f"age:{rel}", old, (f"turns {age}",)),
        ]

    def hobby(self) -> tuple[str, list[dict[str, Any]]]:
        hobby = self.pick(W.HOBBIES)
        text = self.say(
            "I've taken up {h} on the weekends.",
            "New obsession: {h}. I signed up for a beginners' group.",
            h=hobby,
        )
        return text, [{"hobby": hobby}]

    def purchase(self) -> tuple[str, list[dict[str, Any]]]:
        item, shop = self.pick(W.ITEMS), self.pick(W.SHOPS)
        price = self.rng.randint(12, 900)
        text = self.say(
            "I picked up a {i} from {s} for ${p}.",
            "Scored a {i} at {s}, only ${p}!",
            i=item,
            s=shop,
            p=price,
        )
        what = (f"What did {{n}} buy from {shop}?", f"What did {{n}} pick up at {shop}?")
        cost = (f"How much did {{n}} pay for the {item}?", f"What was the price of {{n}}'s {item}?")
        return text, [
            self.ask(f"bought:{shop}", what, (item,)),
            self.ask(f"price:{item}", cost, (f"${price}",)),
        ]


def _date_text(when: dt.datetime) -> str:
    return f"{when.day} {when:%B %Y}"


def generate(seed: int, sessions: int | None = None) -> Session:
    """The chat of ``seed`` (the same seed gives the same chat); ``sessions`` sets how
    many sessions it has (else 22-30)."""
    rng = random.Random(f"chat-{seed}")
    a, b = rng.sample(W.NAMES, 2)
    people = {a: _Facts(rng, a), b: _Facts(rng, b)}
    other = {a: b, b: a}
    role: dict[str, Role] = {a: "user", b: "assistant"}
    when = dt.datetime(rng.randint(2021, 2024), rng.randint(1, 12), rng.randint(1, 28), 9)
    steps: list[Step] = []
    questions: dict[str, dict[str, Any]] = {}  # qid -> spec, newest evidence wins for ids
    counter = 0
    count = rng.randint(22, 30)
    for n in range(sessions or count):
        when += dt.timedelta(days=rng.randint(3, 21), minutes=rng.randint(0, 600))
        steps.append(Turn(when))
        header_key = f"s{n}h"
        date = _date_text(when)
        greet = rng.choice(W.GREETINGS).format(other=b)
        header = f"[{when:%A}, {date}, {when:%I:%M %p}]\n{a}: {greet}"
        steps.append(Say("user", header, key=header_key))
        steps.append(Say("assistant", f"{b}: " + rng.choice(W.GREETINGS).format(other=a)))
        last = b
        facts = [rng.choice((a, b)) for _ in range(rng.randint(3, 5))]
        for speaker in facts:
            for _ in range(rng.randint(0, 2)):
                for who in (other[last], last):
                    steps.append(Say(role[who], f"{who}: " + rng.choice(W.SMALL_TALK)))
            if last == speaker:
                filler = rng.choice(W.SMALL_TALK)
                steps.append(Say(role[other[speaker]], f"{other[speaker]}: {filler}"))
            counter += 1
            key = f"c{counter}"
            maker = rng.choice(people[speaker].makers())
            text, specs = maker()
            steps.append(Say(role[speaker], f"{speaker}: {text}", key=key))
            reaction = rng.choice(W.REACTIONS).format(other=speaker)
            steps.append(Say(role[other[speaker]], f"{other[speaker]}: {reaction}"))
            last = other[speaker]
            _collect(rng, questions, specs, speaker, key, header_key, date, counter)
        closer = other[last]
        steps.append(Say(role[closer], f"{closer}: " + rng.choice(W.FAREWELLS).format(other=last)))
    final = [_question(qid, spec) for qid, spec in questions.items() if "hobby" not in spec]
    final += _hobby_questions(questions)
    return Session("chat", seed, SYSTEM, tuple(steps), _unambiguous(final))


def _unambiguous(questions: list[Question]) -> tuple[Question, ...]:
    """The questions asked once only: two facts that answer the same words are left out."""
    slots = collections.Counter(q.qid.rsplit("#", 1)[-1] for q in questions)
    return tuple(q for q in questions if slots[q.qid.rsplit("#", 1)[-1]] == 1)


def _collect(
    rng: random.Random,
    out: dict[str, dict[str, Any]],
    specs: list[dict[str, Any]],
    speaker: str,
    key: str,
    header_key: str,
    date: str,
    counter: int,
) -> None:
    for i, spec in enumerate(specs):
        if "hobby" in spec:
            wording = rng.choice(("What hobbies has {n} taken up?", "What does {n} do for fun?"))
            hobbies = out.setdefault(
                f"{speaker}/hobbies", {"hobby": [], "speaker": speaker, "wording": wording}
            )
            hobbies["hobby"].append((spec["hobby"], key))
            continue
        qid = f"{speaker}/{spec['id']}" if "id" in spec else f"q{counter}.{i}#{spec['slot']}"
        answers = tuple(date if x == "@date" else x for x in spec["answers"])
        evidence = (header_key, key) if "@date" in spec["answers"] else (key,)
        out[qid] = {**spec, "answers": answers, "evidence": evidence}


def _question(qid: str, spec: dict[str, Any]) -> Question:
    return Question(
        qid=qid,
        text=spec["text"],
        evidence=spec["evidence"],
        answers=spec["answers"],
        kind=spec.get("kind", "single"),
    )


def _hobby_questions(specs: dict[str, dict[str, Any]]) -> list[Question]:
    out = []
    for qid, spec in specs.items():
        if "hobby" not in spec or len(spec["hobby"]) < 2:
            continue
        hobbies = spec["hobby"]
        out.append(
            Question(
                qid=qid,
                text=spec["wording"].format(n=spec["speaker"]),
                evidence=tuple(k for _, k in hobbies),
                answers=tuple(h for h, _ in hobbies),
                kind="multi",
            )
        )
    return out
