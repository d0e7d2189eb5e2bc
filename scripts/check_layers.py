"""Check the direction of imports: ``rules`` <- ``vision`` <- ``training``, ``vision`` <-
``handreader`` <- ``serve.py``, and inside ``handreader``: ``tables`` <- ``store``, ``drawing`` <-
``service`` <- ``cli``. Every import counts, at module level, inside a function or under
``TYPE_CHECKING``; and no two modules import each other, directly or through others.

``python scripts/check_layers.py [ROOT]`` prints each violation on a line and exits 1 when there
is one, else prints a one-line summary and exits 0.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGES = ("rules", "vision", "training", "handreader")

LAYER: dict[str, int] = {
    "rules": 0,
    "vision": 1,
    "training": 2,
    "handreader.tables": 2,
    "handreader.store": 3,
    "handreader.drawing": 3,
    "handreader": 3,
    "handreader.service": 4,
    "handreader.cli": 5,
    "serve": 6,
}
"""The layer of each part (the longest matching prefix of a module's name); a module may import
its own layer and those below."""

ALLOWED_UP: frozenset[tuple[str, str]] = frozenset({("handreader.cli", "training")})
"""Imports that cross sideways by design: the ``synth`` and ``train`` commands run the training
package (behind the train extra, imported only when those commands run)."""


def module_name(root: Path, path: Path) -> str:
    """``handreader/service/app.py`` -> ``handreader.service.app`` (``__init__`` dropped)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(root: Path) -> Iterator[Path]:
    """The Python files of the packages and ``serve.py``."""
    for package in PACKAGES:
        yield from sorted((root / package).rglob("*.py"))
    if (root / "serve.py").is_file():
        yield root / "serve.py"


def imported(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """The project modules a module's code imports (absolute and relative, anywhere in it)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {item for item in found if item.split(".")[0] in (*PACKAGES, "serve")}


def layer_of(name: str) -> tuple[str, int]:
    """The part a module belongs to and that part's layer."""
    best = max((part for part in LAYER if name == part or name.startswith(part + ".")), key=len)
    return best, LAYER[best]


def check(root: Path) -> tuple[list[str], int]:
    """The violations found under ``root``, and the number of modules checked."""
    graph: dict[str, set[str]] = {}
    for path in source_files(root):
        name = module_name(root, path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = imported(tree, name, path.name == "__init__.py")
    modules = set(graph)
    problems: list[str] = []
    edges: dict[str, set[str]] = {}
    for name, targets in sorted(graph.items()):
        part, layer = layer_of(name)
        # ``from package import module`` names the module; ``from module import name`` the module
        resolved_all = {
            target if target in modules else target.rsplit(".", 1)[0] for target in targets
        }
        resolved_all = {item for item in resolved_all if item in modules and item != name}
        # a package whose module is imported by name is reported as that module only
        for resolved in sorted(resolved_all):
            if any(other.startswith(resolved + ".") for other in resolved_all):
                continue
            edges.setdefault(name, set()).add(resolved)
            target_part, target_layer = layer_of(resolved)
            if target_layer > layer and (part, target_part) not in ALLOWED_UP:
                problems.append(f"{name} imports {resolved}: a higher layer ({target_part})")
            elif (
                target_layer == layer
                and part != target_part
                and part.startswith("handreader.")
                and target_part.startswith("handreader.")
            ):
                problems.append(f"{name} imports {resolved}: a sideways part ({target_part})")
    problems.extend(f"import circle: {' -> '.join(cycle)}" for cycle in _cycles(edges))
    return problems, len(graph)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected group of modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append([*sorted(group), sorted(group)[0]])

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1]
    problems, count = check(root)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"{count} modules: every import runs down a layer, no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
