"""No import cycles in the product package (`agent_memory`) or the CDK app (`infra`).

The graph is read from the source with `ast`, without importing anything. Every import statement
counts: at module level, under `if TYPE_CHECKING:` (a cycle there still ties the two modules'
designs together, and the type checker follows it), and inside a function body. A function-local
import is deferred on purpose (a Lambda's cold start loads only what its route needs), but that
changes when the dependency loads, not that it exists: a cycle through it is the same tangle,
hidden until the call, and the usual way such a cycle was papered over. So the fix for a cycle is
a module both sides import, never a lazier import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = {"agent_memory": REPO / "layers/core/python/agent_memory", "infra": REPO / "infra"}


def module_files(package: str, root: Path) -> dict[str, Path]:
    """Dotted module name → source file, for every module of the package."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([package, *parts])] = path
    return found


def import_statements(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, wherever it stands (see the module docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def imported_modules(module: str, path: Path, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The modules of `known` an import statement loads (the most specific one named)."""

    def nearest(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        return {m for alias in node.names if (m := nearest(alias.name))}
    if node.level:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    targets = set()
    for alias in node.names:
        # `from pkg import name` loads pkg.name when it is a module, else pkg itself
        target = nearest(f"{base}.{alias.name}") if f"{base}.{alias.name}" in known else nearest(base)
        if target:
            targets.add(target)
    return targets


def import_graph() -> dict[str, set[str]]:
    files = {
        name: path for package, root in ROOTS.items() for name, path in module_files(package, root).items()
    }
    known = set(files)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        edges: set[str] = set()
        for node in import_statements(tree):
            edges |= imported_modules(module, path, node, known)
        edges.discard(module)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module, as a path
    `a → b → … → a` (Tarjan's algorithm, then a shortest way back within the component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)

    found = []
    for component in components:
        start = min(component)
        # breadth-first from start's successors back to start, inside the component
        paths = {nxt: [start, nxt] for nxt in sorted(graph[start] & component)}
        queue = list(paths)
        while queue:
            current = queue.pop(0)
            if current == start:
                break
            for nxt in sorted(graph[current] & component):
                if nxt not in paths:
                    paths[nxt] = [*paths[current], nxt]
                    queue.append(nxt)
        found.append(paths[start] if start in paths else sorted(component))
    return sorted(found)


def test_given_the_product_package_and_the_cdk_app_when_their_imports_are_read_then_none_form_a_cycle():
    # Given the import graph of agent_memory and infra, read from the source (it holds both)
    graph = import_graph()
    assert "agent_memory.services.write_gateway" in graph and "infra.stack" in graph
    # When its cycles are looked for
    found = cycles(graph)
    # Then there are none
    assert not found, "import cycles:\n" + "\n".join(" → ".join(cycle) for cycle in found)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_given_a_graph_when_its_cycles_are_looked_for_then_each_is_named_as_a_path(graph, expected):
    # When the cycles of a small graph are looked for, Then each comes back as a closed path
    assert cycles(graph) == expected


def test_given_a_module_when_its_imports_are_read_then_guarded_class_and_function_imports_all_count():
    # Given a module importing under TYPE_CHECKING, in a class body, lazily and relatively
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.typed import T\n"
        "class C:\n    from pkg import klass\n"
        "def f():\n    import pkg.lazy.deeper\n"
        "from . import sibling\n"
        "from .sibling import name\n"
    )
    known = {"pkg", "pkg.typed", "pkg.klass", "pkg.lazy", "pkg.sibling", "pkg.mod"}
    # When its imports are read
    targets: set[str] = set()
    for node in import_statements(ast.parse(source)):
        targets |= imported_modules("pkg.mod", Path("mod.py"), node, known)
    # Then each names the module it loads (the nearest one known), the standard library none
    assert targets == {"pkg.typed", "pkg.klass", "pkg.lazy", "pkg.sibling"}
