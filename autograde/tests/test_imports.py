"""autograde's modules import one another without cycles, and no module imports another's private
name (issue 36).

Function-level imports count as much as module-level ones: a cycle hidden in a function still means
neither module can be read, changed or tested without the other (grade <-> gradebook <-> lms and
mutants <-> selfcheck were such cycles; the shared pieces moved down into record, grades_csv,
accounts, course and exercises). A private name (``_finish``, ``_grading_env``,
``_memoized_models``) imported by another module is a public name in disguise: make it public where
it is shared, or move it. Read from the source (ast): no module is run, < 2 s. Tests are exempt.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AUTOGRADE = REPO / "autograde"
# private names imported across modules that this rule does not hold yet, each with why; do not add
# to it
KNOWN_PRIVATE: set[tuple[str, str, str]] = set()


def _module(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _sources() -> dict[str, Path]:
    return {
        _module(p): p
        for p in sorted(AUTOGRADE.rglob("*.py"))
        if "tests" not in p.relative_to(AUTOGRADE).parts
    }


def _imports(module: str, path: Path, modules) -> list[tuple[str, str, int]]:
    """(imported module, name or "", line) for every import of an autograde module, at any depth."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name in modules]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from its package, up node.level - 1 levels
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                # `from autograde import grade`: the module itself
                if f"{base}.{a.name}" in modules:
                    out.append((f"{base}.{a.name}", "", node.lineno))
                elif base in modules:
                    out.append((base, a.name, node.lineno))
    return out


def _graph(sources: dict[str, Path]) -> dict[str, set[str]]:
    return {m: {dep for dep, _, _ in _imports(m, p, sources)} - {m} for m, p in sources.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: the import
    cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle_through_three_modules():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_autograde_modules():
    graph = _graph(_sources())
    found = cycles(graph)
    said = ["  " + " , ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, (
        "import cycles (function-level imports count): move what both need into a module below "
        "them\n" + "\n".join(said)
    )


def test_no_module_imports_another_modules_private_name():
    sources = _sources()
    found = {
        (m, dep, name): line
        for m, p in sources.items()
        for dep, name, line in _imports(m, p, sources)
        if name.startswith("_") and not name.startswith("__") and dep != m
    }
    bad = [
        f"{sources[m].relative_to(REPO)}:{line}: from {dep} import {name}"
        for (m, dep, name), line in sorted(found.items())
        if (m, dep, name) not in KNOWN_PRIVATE
    ]
    assert not bad, (
        "private names imported across modules: make them public where shared, or move them\n"
        + "\n".join(bad)
    )
