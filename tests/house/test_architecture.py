"""The house as drawn in docs/architecture.md: what import-linter's contracts do not check
(they run in CI as ``lint-imports``) is checked here."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

from scripts.import_contracts import owner_of, private_imports

ROOT = Path(__file__).parent.parent.parent
PACKAGES = ("timeline", "index_store")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    """Small modules whose names say what they hold."""
    long = {
        str(p.relative_to(ROOT)): n
        for p in _sources()
        if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_60_lines() -> None:
    """Functions short enough to read at once."""
    long = {}
    for p in _sources():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long[f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"] = size
    assert long == {}


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False)


def test_no_import_circle(graph: grimp.ImportGraph) -> None:
    """No two modules import each other, however indirectly: function-level and
    ``TYPE_CHECKING`` imports count (a package imports its ``__init__``'s imports)."""
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    """The check above can fail: a two-module circle is reported."""
    g = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        g.add_module(name)
    g.add_import(importer="a.x", imported="a.y")
    g.add_import(importer="a.y", imported="a.x")
    g.add_import(importer="a.y", imported="a.z")
    assert _cycles(g) == [["a.x", "a.y"]]


def test_the_core_does_not_import_the_leaves(graph: grimp.ImportGraph) -> None:
    """Nothing below the CLI and the integrations reaches them, even indirectly."""
    leaves = {"timeline._cli", "timeline.integrations"}
    for layer in (
        "model",
        "formats",
        "tokens",
        "cache",
        "compaction",
        "state",
        "render",
        "core",
        "html",
    ):
        for leaf in leaves:
            chains = graph.find_shortest_chains(
                importer=f"timeline._{layer}", imported=leaf, as_packages=True
            )
            assert chains == set()


def test_the_private_modules_contract_can_fail() -> None:
    """The private_modules contract (scripts/import_contracts.py; lint-imports runs it on
    the real graph) can fail: a reach into another package's module is found, written as
    a module path or as a module its package does not list in __all__; an interface
    import is not."""
    graph = grimp.ImportGraph()
    for name in ("a", "a._p", "a._p.m", "a.q", "a.r", "a.s"):
        graph.add_module(name)
    graph.add_import(
        importer="a.q", imported="a._p.m", line_number=3, line_contents="from a._p.m import f"
    )
    graph.add_import(
        importer="a.r", imported="a._p.m", line_number=5, line_contents="from a._p import m"
    )
    graph.add_import(
        importer="a.s", imported="a._p", line_number=7, line_contents="from a._p import f"
    )
    assert private_imports(graph, ("a",)) == [("a.q", "a._p.m", (3,)), ("a.r", "a._p.m", (5,))]
    assert private_imports(graph, ("a",), [("a.q", "a._p.m")]) == [("a.r", "a._p.m", (5,))]
    assert owner_of("timeline._render.sanitize") == "timeline._render"
    assert owner_of("timeline._render") == "timeline"
    assert owner_of("timeline._compaction.summarizers._facts") == "timeline._compaction"
    assert owner_of("timeline.integrations.langchain") is None
