"""An import-linter contract type of this project: private modules stay private.

A module or package whose name starts with ``_`` belongs to the package it sits in:
``timeline._render.sanitize`` may be imported only from inside ``timeline._render``, and
``timeline._render`` (that package's interface, its ``__init__``) only from inside
``timeline``. So a layer reaches another only through the other's interface, and nothing
outside the library reaches its implementation. A package may make one of its modules
part of its interface, as a namespace (``from timeline._model import log``), by listing
it in its ``__all__``. Named exceptions are listed in the
contract's ``allow`` (``importer -> imported``: a package and the interface it may use).

Registered in ``pyproject.toml`` (``[tool.importlinter] contract_types``); ``lint-imports``
runs it with the other contracts.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterable
from functools import cache

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

__all__ = ["PrivateModulesContract", "owner_of", "private_imports"]


def owner_of(imported: str) -> str | None:
    """The package a private module belongs to: ``timeline._render.sanitize`` is private
    to ``timeline._render``, ``timeline._render`` to ``timeline``; None for a public one."""
    parts = imported.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[: i + 1] if i + 1 < len(parts) else parts[:i])
    return None


@cache
def interface_of(package: str) -> frozenset[str]:
    """The names a package's ``__init__`` lists in ``__all__`` (read, not imported)."""
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:  # its parent is no package here
        return frozenset()
    if spec is None or spec.origin is None:
        return frozenset()
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def _through_interface(imported: str, lines: Iterable[str]) -> bool:
    """``from package import module`` of a module its package lists in ``__all__``."""
    package, _, name = imported.rpartition(".")
    return name in interface_of(package) and all(
        line.startswith(f"from {package} import ") for line in lines
    )


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def private_imports(
    graph: ImportGraph, roots: Iterable[str], allow: Iterable[tuple[str, str]] = ()
) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every import of a private module from outside its owner: (importer, imported,
    line numbers), but those ``allow`` names (an importer's package, an imported module)."""
    allowed = list(allow)
    ours = tuple(roots)
    found = []
    for module in sorted(graph.modules):
        if not any(_inside(module, root) for root in ours):
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            owner = owner_of(imported)
            if owner is None or _inside(module, owner):
                continue
            if any(_inside(module, a) and imported == b for a, b in allowed):
                continue
            details = graph.get_import_details(importer=module, imported=imported)
            if _through_interface(imported, (d["line_contents"] for d in details)):
                continue
            found.append((module, imported, tuple(sorted(d["line_number"] for d in details))))
    return found


class PrivateModulesContract(Contract):
    """No module imports a private module of another package (see the module docstring).

    Configuration: ``allow``, a list of ``"importer -> imported"`` exceptions."""

    type_name = "private_modules"

    allow = fields.ListField(subfield=fields.StringField(), required=False)

    def _allowed(self) -> list[tuple[str, str]]:
        pairs = []
        for line in self.allow or []:  # type: ignore[attr-defined]
            importer, _, imported = str(line).partition("->")
            pairs.append((importer.strip(), imported.strip()))
        return pairs

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        roots = self.session_options["root_packages"]
        found = private_imports(graph, roots, self._allowed())
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer, imported, lines in check.metadata["found"]:
            where = ", ".join(f"l.{n}" for n in lines)
            output.print_error(f"{importer} imports the private {imported} ({where})")
            output.new_line()
