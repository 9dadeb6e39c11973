"""Summarize a mutmut run by subpackage: ``python scripts/mutation_report.py [mutants]``.

mutmut keeps one ``.meta`` file per mutated source file under ``mutants/`` with the
exit code of every mutant it ran; this prints, per subpackage of ``timeline``, how many
mutants were killed (a test failed, or the mutant timed out looping forever), survived,
had no test reaching them, or were not run yet, and the score killed / (killed +
survived + no tests) over the mutants that ran. ``--survivors`` lists the survivors'
names (``mutmut show NAME`` prints one's diff).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from mutmut.stats import status_by_exit_code

_COUNTED = ("killed", "timeout", "survived", "no tests", "suspicious", "not checked")


def collect(root: Path) -> tuple[dict[str, Counter[str]], list[str]]:
    """Counts of each status per subpackage, and the names of the surviving mutants."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: list[str] = []
    for meta in sorted(root.glob("timeline/**/*.py.meta")):
        package = meta.relative_to(root).parts[1]
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            counts[package][status] += 1
            if status == "survived":
                survivors.append(name)
    return counts, survivors


def score(counts: Counter[str]) -> float:
    """Killed (timeouts included) over the mutants that ran, counting unreached ones."""
    killed = counts["killed"] + counts["timeout"]
    ran = killed + counts["survived"] + counts["no tests"] + counts["suspicious"]
    return killed / ran if ran else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="mutants", type=Path)
    parser.add_argument("--survivors", action="store_true")
    args = parser.parse_args()
    counts, survivors = collect(args.root)
    total: Counter[str] = Counter()
    print("| subpackage | " + " | ".join(_COUNTED) + " | score |")
    print("|---" * (len(_COUNTED) + 2) + "|")
    for package in sorted(counts):
        total.update(counts[package])
        row = " | ".join(str(counts[package][s]) for s in _COUNTED)
        print(f"| {package} | {row} | {score(counts[package]):.1%} |")
    row = " | ".join(str(total[s]) for s in _COUNTED)
    print(f"| **all** | {row} | {score(total):.1%} |")
    if args.survivors:
        print("\n".join(survivors))


if __name__ == "__main__":
    main()
