"""How to install an optional extra (``langchain``, ``postgres``...) where this package
runs: the install line an error about a missing framework or driver gives.

The package is installed from a checkout (or a wheel built from one), not from a package
index, so ``pip install 'block-timeline[extra]'`` is not a line that works: from a
checkout the editable install with the extra is, and anywhere else the extra's own
packages are.
"""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["extra_packages", "install_hint", "source_tree"]

DISTRIBUTION = "block-timeline"


def source_tree() -> Path | None:
    """The checkout this package runs from (a clone, or an editable install), if any."""
    root = Path(__file__).resolve().parents[2]
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{DISTRIBUTION}"' in pyproject else None


def extra_packages(extra: str) -> list[str]:
    """The requirements of ``extra`` as the installed metadata lists them (``[]`` when
    the package is not installed, only imported from its folder)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        listed = requires(DISTRIBUTION) or []
    except PackageNotFoundError:
        return []
    marker = f"extra == '{extra}'"
    found = []
    for line in listed:
        requirement, _, condition = line.partition(";")
        if condition.strip().replace('"', "'") == marker:
            found.append(requirement.strip())
    return found


def install_hint(extra: str) -> str:
    """The ``pip install`` line that adds ``extra`` here: the checkout's editable install
    with the extra, else the extra's packages themselves."""
    root = source_tree()
    if root is not None:
        return f"pip install -e {shlex.quote(f'{root}[{extra}]')}"
    packages = extra_packages(extra)
    if not packages:
        return f"pip install -e '.[{extra}]' in a checkout of {DISTRIBUTION}"
    listed = " ".join(shlex.quote(p) for p in packages)
    return f"pip install {listed} (the {DISTRIBUTION} [{extra}] extra)"
