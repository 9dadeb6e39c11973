"""The same benchmarks on an earlier commit and on this tree, alternately, side by side.

``python -m benchmarks.before_after REF [--rounds N] [--modules render_speed end_to_end]``

Checks out REF into a temporary git worktree, then runs each module's table (``python -m
benchmarks.<module>``) in REF's tree and in this one, alternating for ``--rounds`` rounds,
so load on a shared machine falls on both sides alike. Prints every run's table rows
labelled ``before`` / ``after``: compare the medians of the rounds, not one run. Used for
the redesign of #23 (``REF`` = 3bc69b3, the last commit before it): docs/architecture.md.

``--this-script ARG...`` runs this tree's script of each module on both packages instead,
with those arguments (e.g. ``--this-script --no-payload`` for ``render_speed``: options
REF's script does not have).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _table_rows(tree: Path, module: str, script_args: list[str] | None = None) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", f"benchmarks.{module}"]
    if script_args is not None:  # this tree's script, the package of ``tree``
        command = [sys.executable, str(ROOT / "benchmarks" / f"{module}.py"), *script_args]
    out = subprocess.run(
        command,
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if line.startswith("|")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modules", nargs="+", default=["render_speed", "end_to_end"])
    parser.add_argument("--this-script", nargs=argparse.REMAINDER, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(before), args.ref],
            cwd=ROOT,
            check=True,
        )
        try:
            for module in args.modules:
                for round_ in range(1, args.rounds + 1):
                    for side, tree in (("before", before), ("after", ROOT)):
                        print(f"## {module}, round {round_}, {side}", flush=True)
                        rows = _table_rows(tree, module, args.this_script)
                        print("\n".join(rows), flush=True)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(before)], cwd=ROOT, check=True
            )


if __name__ == "__main__":
    main()
