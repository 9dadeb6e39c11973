"""Seeded coding-agent sessions, and questions about lines of their tool output.

The shape of a coding agent's day: each turn the user gives a task, the agent calls 1-5
tools (reads files, runs the tests, greps, checks versions and history, runs commands,
curls a health endpoint, writes and edits files), then says what it did. About one tool
result in four holds a fact, one line that occurs in no other block: a constant's value,
a setting, a failing test's assertion, where a function is defined, a package version,
a commit's hash, the error a command raised, a figure a service reported. A few turns end
on a decision. Each fact is asked about 10, 50 or 150 turns later, as the next user
prompt, in words that name where it came from but not the answer.
"""

from __future__ import annotations

import collections
import datetime as dt
import random
from collections.abc import Callable
from typing import Any

from benchmarks.recall import coding_words as W
from benchmarks.recall.model import Ask, Call, Question, Say, Session, Step, Turn

SYSTEM = (
    "You are a careful coding agent working in the user's repository. Use the tools to "
    "read, search, run and edit; say what you changed and why."
)
DISTANCES = (10, 50, 150)
Fact = tuple[str, str, str]  # (question, answer, kind)


class _Project:
    """One session's repository: its files, and the facts its tools may reveal."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pkg = rng.choice(W.PACKAGES)
        self.mods = rng.sample(W.MODULES, 14)
        self.used: set[str] = set()
        self.config = rng.choice(("config/settings.toml", "deploy/app.toml", "settings.ini"))

    def path(self, mod: str | None = None) -> str:
        return f"src/{self.pkg}/{mod or self.rng.choice(self.mods)}.py"

    def test(self, mod: str | None = None) -> str:
        return f"tests/test_{mod or self.rng.choice(self.mods)}.py"

    def fresh(self, make: Callable[[], str]) -> str | None:
        """A value not used before in this session (None after a few tries)."""
        for _ in range(20):
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value
        return None

    def func(self) -> str:
        return f"{self.rng.choice(W.VERBS)}_{self.rng.choice(W.NOUNS)}"

    def code(self, n: int) -> list[str]:
        """``n`` plausible lines of Python."""
        r, out = self.rng, []
        for _ in range(n):
            noun, func = r.choice(W.NOUNS), self.func()
            out.append(
                r.choice(
                    (
                        f"def {func}(self, {noun}: {noun.title()}) -> {noun.title()} | None:",
                        f"    {noun} = self._{func}({noun}, strict={r.choice(('True', 'False'))})",
                        f"    if not {noun}:",
                        f'        raise {r.choice(W.ERRORS)}(f"empty {noun}: {{{noun}!r}}")',
                        f"    return {noun}",
                        f"from {self.pkg}.{r.choice(self.mods)} import {noun.title()}",
                        f'    logger.info("{func}", extra={{"{noun}_id": {noun}.id}})',
                        f"    for {noun} in self.{noun}s:",
                        f"        total += {noun}.{r.choice(W.NOUNS)}_count",
                        "",
                        f"class {noun.title()}{r.choice(('Store', 'Client', 'Error', 'View'))}:",
                        f'    """{func.replace("_", " ").capitalize()} for one {noun}."""',
                    )
                )
            )
        return out


def _read_file(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    mod = p.rng.choice(p.mods)
    path, start = p.path(mod), p.rng.randint(1, 400)
    lines = p.code(p.rng.randint(30, 110))
    fact = None
    if p.rng.random() < 0.35:
        name = p.fresh(lambda: f"{mod.upper()}_{p.rng.choice(W.CONSTANTS)}")
        if name:
            value = p.rng.choice((p.rng.randint(2, 9999), round(p.rng.uniform(0.1, 99), 2)))
            line = f"{name} = {value}"
            lines.insert(p.rng.randint(0, len(lines)), line)
            fact = (f"What is {name} set to in {path}?", line, "tool:constant")
    body = "\n".join(f"{start + i:>5}  {text}" for i, text in enumerate(lines))
    return {"path": path, "start": start, "end": start + len(lines)}, body, fact


def _read_config(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r = p.rng
    lines = []
    for section in r.sample(("database", "worker", "http", "cache", "observability"), 3):
        lines.append(f"[{section}]")
        for key in r.sample(W.SETTINGS, r.randint(3, 6)):
            lines.append(f"{key} = {r.randint(1, 5000)}")
        lines.append("")
    fact = None
    key = p.fresh(lambda: r.choice(W.SETTINGS) + r.choice(("", "_primary", "_replica", "_eu")))
    if key and r.random() < 0.7:
        line = f"{key} = {r.randint(1, 90000)}"
        lines.insert(r.randint(1, len(lines)), line)
        fact = (f"What is {key} set to in {p.config}?", line, "tool:setting")
    return {"path": p.config}, "\n".join(lines), fact


def _run_tests(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r, mod = p.rng, p.rng.choice(p.mods)
    test = p.test(mod)
    cmd = f"pytest {test} -q"
    passed = r.randint(3, 40)
    if r.random() < 0.55:
        return {"cmd": cmd}, f"{'.' * passed}\n{passed} passed in {r.uniform(0.2, 9):.2f}s", None
    name = p.fresh(lambda: f"test_{p.func()}")
    got, want = r.randint(100, 99999), r.randint(100, 99999)
    assertion = f"assert {got} == {want}"
    trace = "\n".join(p.code(r.randint(4, 12)))
    out = (
        f"{'.' * passed}F\n=================================== FAILURES ===\n"
        f"___ {name} ___\n{trace}\n>       {assertion}\nE       AssertionError: {assertion}\n"
        f"{test}:{r.randint(10, 400)}: AssertionError\n"
        f"FAILED {test}::{name} - AssertionError\n1 failed, {passed} passed"
    )
    q = f"When {name} failed in {test}, what did the assertion say?"
    return {"cmd": cmd}, out, (q, assertion, "tool:assert") if name else None


def _grep(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r, func = p.rng, p.func()
    hits = [f"{p.path()}:{r.randint(1, 900)}:    {line}" for line in p.code(r.randint(3, 25))]
    fact = None
    path = p.path()
    where = p.fresh(lambda: f"{path}:{r.randint(10, 900)}")
    if where and r.random() < 0.5:
        hits.insert(r.randint(0, len(hits)), f"{where}:def {func}(")
        fact = (f"On which line of {path} is {func} defined?", where, "tool:grep")
    return {"pattern": func, "path": "src"}, "\n".join(hits), fact


def _versions(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r = p.rng
    libs = r.sample(W.LIBRARIES, r.randint(2, 6))
    lines = [f"{lib}=={r.randint(0, 5)}.{r.randint(0, 40)}.{r.randint(0, 20)}" for lib in libs]
    target = r.choice(libs)
    line = next(x for x in lines if x.startswith(f"{target}=="))
    q = f"Which version of {target} did pip freeze show?"
    return (
        {"cmd": "pip freeze | grep -E '" + "|".join(libs) + "'"},
        "\n".join(lines),
        (
            q,
            line,
            "tool:version",
        ),
    )


def _git_log(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r = p.rng
    topics = r.sample(W.COMMIT_TOPICS, 5)
    lines = [f"{r.getrandbits(28):07x} {topic}" for topic in topics]
    pick = r.randrange(5)
    sha, topic = lines[pick].split(" ", 1)
    q = f"What is the hash of the commit '{topic}'?"
    return {"cmd": "git log --oneline -5"}, "\n".join(lines), (q, sha, "tool:commit")


def _command(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r, mod = p.rng, p.rng.choice(p.mods)
    cmd = f"python -m {p.pkg}.{mod} --{r.choice(W.VERBS)} data/{r.choice(W.NOUNS)}s.csv"
    error = r.choice(W.ERRORS)
    message = f"{error}: {r.choice(W.ERROR_DETAILS[error])}"
    frames = "\n".join(
        f'  File "{p.path()}", line {r.randint(5, 600)}, in {p.func()}\n    {line.strip()}'
        for line in p.code(r.randint(2, 6))
    )
    out = f"Traceback (most recent call last):\n{frames}\n{message}"
    return {"cmd": cmd}, out, (f"What error did `{cmd}` raise?", message, "tool:error")


def _health(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    r = p.rng
    metrics = r.sample(
        ("db_latency_ms", "queue_depth", "p99_ms", "error_rate_pct", "open_conns"), 3
    )
    values = {m: r.randint(1, 9999) for m in metrics}
    body = "{" + ", ".join(f'"{m}": {v}' for m, v in values.items()) + ', "status": "degraded"}'
    metric = r.choice(metrics)
    port = r.choice((8000, 8080, 9000))
    cmd = f"curl -s localhost:{port}/health"
    q = f"What {metric} did `{cmd}` report?"
    return {"cmd": cmd}, body, (q, f'"{metric}": {values[metric]}', "tool:metric")


def _write(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    path = p.path()
    lines = p.code(p.rng.randint(5, 40))
    params = {"path": path, "content": "\n".join(lines)}
    return params, f"Wrote {len(lines)} lines to {path}", None


def _edit(p: _Project) -> tuple[dict[str, Any], str, Fact | None]:
    path = p.path()
    old, new = p.code(2), p.code(2)
    params = {"path": path, "old": "\n".join(old), "new": "\n".join(new)}
    return params, f"Applied 1 edit to {path}", None


TOOLS: tuple[
    tuple[str, Callable[[_Project], tuple[dict[str, Any], str, Fact | None]], int], ...
] = (
    ("read_file", _read_file, 30),
    ("read_file", _read_config, 5),
    ("bash", _run_tests, 18),
    ("grep", _grep, 12),
    ("bash", _versions, 3),
    ("bash", _git_log, 3),
    ("bash", _command, 6),
    ("bash", _health, 3),
    ("write_file", _write, 10),
    ("edit_file", _edit, 10),
)


def generate(seed: int, turns: int = 300) -> Session:
    """The coding session of ``seed``: the same seed gives the same session."""
    rng = random.Random(f"coding-{seed}")
    p = _Project(rng)
    when = dt.datetime(2025, rng.randint(1, 12), rng.randint(1, 28), 9)
    per_turn: list[list[Step]] = []
    facts: list[tuple[int, str, Fact]] = []  # (turn, key, fact)
    for t in range(turns):
        steps: list[Step] = []
        mod = rng.choice(p.mods)
        task = rng.choice(W.TASKS).format(
            test=p.test(mod),
            mod=mod,
            noun=rng.choice(W.NOUNS),
            lib=rng.choice(W.LIBRARIES),
            path=p.path(mod),
        )
        steps.append(Say("user", task))
        for _ in range(rng.randint(1, 5)):
            name, tool, _w = rng.choices(TOOLS, weights=[w for *_, w in TOOLS])[0]
            params, result, fact = tool(p)
            step_text = rng.choice(W.ASSISTANT_STEPS).format(
                path=p.path(mod), mod=mod, func=p.func()
            )
            steps.append(Say("assistant", step_text, render=False))
            key = f"t{t}.{len(steps)}" if fact else None
            steps.append(Call(name, params, result, key=key))
            if fact and key:
                facts.append((t, key, fact))
        steps.append(_closing(p, rng, mod, t, facts))
        per_turn.append(steps)
    asks = _schedule(rng, facts, turns, per_turn)
    out: list[Step] = []
    for t, steps in enumerate(per_turn):
        when += dt.timedelta(minutes=rng.randint(2, 40))
        out.append(Turn(when))
        out.extend(Ask(q) for q in asks.get(t, ()))
        out.extend(steps)
    return Session("coding", seed, SYSTEM, tuple(out))


def _closing(p: _Project, rng: random.Random, mod: str, t: int, facts: list[Any]) -> Say:
    """The turn's last words: what was done, now and then a decision and its reason."""
    path = p.path(mod)
    if rng.random() < 0.12:
        subject, choice, alt = rng.choice(W.DECISIONS)
        subject = subject.format(mod=mod, noun=rng.choice(W.NOUNS))
        if p.fresh(lambda: subject):
            answer = f"{choice} for {subject}"
            text = (
                f"Decision: I went with {answer} instead of {alt}, because it keeps "
                f"{mod} simpler to test. " + rng.choice(W.DONE).format(path=path, mod=mod)
            )
            key = f"t{t}.decision"
            facts.append((t, key, (f"What did we decide for {subject}?", answer, "decision")))
            return Say("assistant", text, key=key, render=False)
    return Say("assistant", rng.choice(W.DONE).format(path=path, mod=mod), render=False)


def _schedule(
    rng: random.Random,
    facts: list[tuple[int, str, Fact]],
    turns: int,
    per_turn: list[list[Step]],
) -> dict[int, list[Question]]:
    """Each fact whose answer is in one block only and whose question names it alone,
    asked 10, 50 or 150 turns later."""
    texts = [
        s.result if isinstance(s, Call) else s.text
        for steps in per_turn
        for s in steps
        if isinstance(s, Call | Say)
    ]
    seen = collections.Counter()
    for text in texts:
        for _, _, (_, answer, _) in facts:
            if answer in text:
                seen[answer] += 1
    asked = collections.Counter(question for _, _, (question, _, _) in facts)
    asks: dict[int, list[Question]] = collections.defaultdict(list)
    for n, (t, key, (question, answer, kind)) in enumerate(facts):
        choices = [d for d in DISTANCES if t + d < turns]
        unique = seen[answer] == 1 and asked[question] == 1
        if not choices or not unique or answer in question:
            continue
        d = rng.choice(choices)
        asks[t + d].append(Question(f"f{n}", question, (key,), (answer,), kind, distance=d))
    return asks
