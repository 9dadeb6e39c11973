"""Estimate the mutation score from a seeded uniform random sample of mutmut's mutants.

A full ``mutmut run`` over the core layers is about 12,000 mutants and takes a day on a
small machine; a uniform random sample of a few hundred gives the score within a few
points, with a confidence interval that says how many. Run it from the project root of a
clean checkout of the commit to measure (mutmut copies ``tests/`` into ``mutants/`` at
every run, so tests written while it runs must not be in that tree)::

    nice -n 19 python scripts/mutation_sample.py run --n 400 --seed 23 \\
        --max-children 2 --stop-at 17:10
    python scripts/mutation_sample.py report --seed 23

``run`` lets mutmut generate the mutants (its own first step of ``mutmut run``), lists
every mutant name of the ``only_mutate`` files from mutmut's ``mutants/**/*.py.meta``
files, draws ``--n`` of them uniformly at random without replacement (``--seed`` makes
the draw and its order repeatable), saves the draw as ``mutants/sample-<seed>.json`` and
runs exactly those mutants through mutmut's own runner in the drawn order. mutmut runs
the fastest mutants first, so a run stopped early would check a biased subset; this
script hands mutmut the drawn order instead (its sort key, nothing else), so a run
stopped at ``--stop-at`` (UTC) has checked a random prefix of the draw, which is itself a
uniform sample. ``report`` (printed after ``run`` too) reads the verdicts back from the
meta files and estimates, per subpackage and overall, the share of mutants killed (a
test failed or the mutant timed out) with a 95% Wilson interval, over the longest prefix
of the drawn order whose mutants all finished; survivors, unreached mutants and
mutants finished outside that prefix are listed by name (``mutmut show NAME``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import signal
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

_MUTANTS = Path("mutants")
_KILLED = frozenset({"killed", "timeout"})
_UNFINISHED = frozenset({"not checked", "check was interrupted by user"})
_Z95 = 1.959964


@dataclass(frozen=True)
class Estimate:
    """``killed`` of ``checked`` sampled mutants, with its 95% Wilson interval."""

    killed: int
    checked: int

    @property
    def score(self) -> float:
        return self.killed / self.checked if self.checked else 0.0

    def interval(self) -> tuple[float, float]:
        """The Wilson score interval: sound near 0 and 1 and for small counts."""
        n = self.checked
        if n == 0:
            return 0.0, 1.0
        p = self.killed / n
        denominator = 1 + _Z95**2 / n
        centre = (p + _Z95**2 / (2 * n)) / denominator
        half = _Z95 * math.sqrt(p * (1 - p) / n + _Z95**2 / (4 * n * n)) / denominator
        return max(0.0, centre - half), min(1.0, centre + half)

    def row(self, label: str) -> str:
        low, high = self.interval()
        return (
            f"| {label} | {self.checked} | {self.killed} | {self.checked - self.killed} "
            f"| {self.score:.1%} | {low:.1%} - {high:.1%} |"
        )


def wilson(killed: int, checked: int) -> tuple[float, float]:
    """The 95% Wilson interval of ``killed / checked``."""
    return Estimate(killed, checked).interval()


def subpackage(name: str) -> str:
    """``timeline._core.persist.x_apersist__mutmut_3`` -> ``core``."""
    parts = name.split(".")
    return parts[1].lstrip("_") if len(parts) > 2 else parts[0]


def meta_files() -> list[Path]:
    """The meta file of every source file mutmut mutates (``only_mutate``, minus
    ``do_not_mutate``), as mutmut itself selects them."""
    from mutmut.utils.file_utils import walk_mutatable_files

    return sorted(_MUTANTS / f"{path}.meta" for path in walk_mutatable_files())


def verdicts() -> dict[str, str]:
    """Every generated mutant's name and mutmut's status for it ("not checked" if none)."""
    from mutmut.stats import status_by_exit_code

    out: dict[str, str] = {}
    for meta in meta_files():
        if not meta.exists():
            continue
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        for name, code in codes.items():
            out[name] = str(status_by_exit_code[code])
    return out


def generate(max_children: int) -> None:
    """mutmut's own first step of ``mutmut run``: copy the project to ``mutants/`` and
    write the mutants of every changed source file with their meta files."""
    import mutmut.__main__ as mutmut_main
    from mutmut.mutation.trampoline import set_mutant_under_test
    from mutmut.utils.file_utils import (
        copy_also_copy_files,
        copy_src_dir,
        setup_source_paths,
    )

    set_mutant_under_test("mutant_generation")
    _MUTANTS.mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    mutmut_main.store_lines_covered_by_tests()
    stats = mutmut_main.create_mutants(max_children)
    print(f"generated: {stats.mutated} files mutated, {stats.unmodified} unchanged", flush=True)


def draw(names: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` names drawn uniformly without replacement, in a random order; the same
    names and order for the same seed and population."""
    population = sorted(names)
    return random.Random(seed).sample(population, min(n, len(population)))


def sample_path(seed: int) -> Path:
    return _MUTANTS / f"sample-{seed}.json"


def save_sample(seed: int, population: int, names: list[str]) -> None:
    record = {"seed": seed, "population": population, "order": names}
    sample_path(seed).write_text(json.dumps(record, indent=1) + "\n")


def load_sample(seed: int) -> tuple[int, list[str]]:
    record = json.loads(sample_path(seed).read_text())
    return int(record["population"]), [str(name) for name in record["order"]]


def arm_deadline(stop_at: str | None) -> threading.Timer | None:
    """Interrupt the main thread at ``stop_at`` (``HH:MM`` UTC, today or tomorrow), as
    Ctrl-C would: mutmut then stops its workers and keeps the verdicts it has."""
    if stop_at is None:
        return None
    # a shell starting us in the background (`cmd &`) leaves SIGINT ignored, and Python
    # then installs no KeyboardInterrupt handler: the deadline would pass unnoticed
    signal.signal(signal.SIGINT, signal.default_int_handler)
    now = datetime.now(UTC)
    hour, minute = (int(part) for part in stop_at.split(":"))
    when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if when <= now:
        when += timedelta(days=1)
    main_ident = threading.main_thread().ident
    assert main_ident is not None

    def interrupt() -> None:
        print(f"\n[mutation_sample] deadline {stop_at} UTC reached: stopping", flush=True)
        signal.pthread_kill(main_ident, signal.SIGINT)

    timer = threading.Timer((when - now).total_seconds(), interrupt)
    timer.daemon = True
    timer.start()
    return timer


def run_in_order(names: list[str], max_children: int) -> None:
    """Run exactly ``names`` through mutmut's ``run``, submitted in the given order.

    mutmut sorts the mutants it runs by their tests' estimated time; replacing that sort
    key with the position in ``names`` changes the order and nothing else (which tests
    run, the time limits and the verdicts are mutmut's own)."""
    import mutmut.__main__ as mutmut_main

    position = {name: float(i) for i, name in enumerate(names)}

    def rank(name: str) -> float:
        return position.get(name, math.inf)

    vars(mutmut_main)["estimated_worst_case_time"] = rank
    try:
        mutmut_main._run(names, max_children)
    except (SystemExit, KeyboardInterrupt) as stop:
        print(f"[mutation_sample] mutmut stopped: {stop!r}", flush=True)


def checked_prefix(order: list[str], status: dict[str, str]) -> int:
    """How many mutants at the start of the drawn order all have a verdict."""
    for i, name in enumerate(order):
        if status.get(name, "not checked") in _UNFINISHED:
            return i
    return len(order)


def report(seed: int) -> int:
    """Print the estimate of the sample saved for ``seed``; return the number checked."""
    population, order = load_sample(seed)
    status = verdicts()
    prefix = checked_prefix(order, status)
    checked = order[:prefix]
    per: dict[str, Counter[str]] = {}
    for name in checked:
        per.setdefault(subpackage(name), Counter())[status[name]] += 1
    drawn = Counter(subpackage(name) for name in order)
    print(f"population: {population} mutants; drawn: {len(order)} (seed {seed});")
    print(f"checked: {prefix} (the first {prefix} of the drawn order all finished)\n")
    print("| subpackage | checked | killed | not killed | score | 95% CI (Wilson) |")
    print("|---|---|---|---|---|---|")
    total = Counter[str]()
    for package in sorted(drawn):
        counts = per.get(package, Counter())
        total.update(counts)
        killed = sum(counts[s] for s in _KILLED)
        print(Estimate(killed, sum(counts.values())).row(package))
    killed = sum(total[s] for s in _KILLED)
    print(Estimate(killed, sum(total.values())).row("**all**"))
    print("\nstatuses in the checked prefix: " + ", ".join(f"{s}: {c}" for s, c in total.items()))
    print("\nnot killed (in the checked prefix):")
    for name in checked:
        if status[name] not in _KILLED:
            print(f"  {status[name]}: {name}")
    outside = [name for name in order[prefix:] if status.get(name) not in _UNFINISHED]
    if outside:
        print(f"\nfinished after the prefix (not in the estimate): {len(outside)}")
        for name in outside:
            if status[name] not in _KILLED:
                print(f"  {status[name]}: {name}")
    return prefix


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="generate, draw, run the draw, report")
    run.add_argument("--n", type=int, default=400, help="mutants to draw (default 400)")
    run.add_argument("--seed", type=int, default=23)
    run.add_argument("--max-children", type=int, default=2)
    run.add_argument("--stop-at", help="HH:MM (UTC): stop mutmut then and report")
    rep = commands.add_parser("report", help="the estimate of a saved draw")
    rep.add_argument("--seed", type=int, default=23)
    listing = commands.add_parser("list", help="count the generated mutants per subpackage")
    listing.add_argument("--max-children", type=int, default=2)
    args = parser.parse_args(argv)
    if args.command == "report":
        report(args.seed)
        return
    generate(args.max_children)
    names = sorted(verdicts())
    if args.command == "list":
        for package, count in sorted(Counter(map(subpackage, names)).items()):
            print(f"{package}: {count}")
        print(f"all: {len(names)}")
        return
    order = draw(names, args.n, args.seed)
    save_sample(args.seed, len(names), order)
    print(f"drew {len(order)} of {len(names)} mutants (seed {args.seed})", flush=True)
    timer = arm_deadline(args.stop_at)
    started = datetime.now(UTC)
    run_in_order(order, args.max_children)
    if timer is not None:
        timer.cancel()
    print(f"\n[mutation_sample] ran {datetime.now(UTC) - started} from {started:%H:%M} UTC\n")
    report(args.seed)


if __name__ == "__main__":
    main()
