"""Rules an exercise's text sets ("do not use torch.softmax"), enforced on the answer's source code.

A check declares the calls its exercise forbids as dotted names (``Check.forbidden``)::

    Check("softmax", "softmax", ..., forbidden=("torch.softmax", "torch.nn.functional.softmax",
                                                "torch.special.softmax", "Tensor.softmax"))

``violations(source, forbidden)`` reads the code without running it and finds every use of a forbidden name
through any alias: ``import torch as t; t.softmax``, ``from torch.nn import functional as F; F.softmax``,
``from torch import softmax as sm``, ``f = torch.softmax``, ``getattr(torch, "softmax")``,
``torch.nn.functional.__dict__["softmax"]`` is not followed (a student who writes that has read this file).
``"Tensor.softmax"`` names a tensor method: any ``<expression>.softmax`` whose base is not a module alias.
With ``namespace`` (the function's globals, in a notebook), names bound in other cells are resolved too.

Two readings of one answer, which must agree: in the notebook, ``function_violations(fn, ...)`` reads the
live function with its globals; in the grader, ``notebook_violations(cells, name, ...)`` reads the submitted
cells' text (no live objects: aliases come from every cell). Both follow the notebook's own functions that
the answer names (a helper that calls ``torch.softmax`` breaks the rule too), and each finding names its line.
"""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Violation", "function_violations", "notebook_violations", "violations"]


@dataclass(frozen=True)
class Violation:
    """One forbidden use: where it is and which rule it breaks."""

    line: int
    code: str
    rule: str
    function: str = ""  # the helper it is in, when not the answer's own function

    def message(self) -> str:
        """What the student reads."""
        if self.line == 0:  # the answer is the forbidden function itself (imported under the answer's name)
            return f"`{self.code}` is {self.rule}, which this exercise asks you not to use"
        where = f"line {self.line} of {self.function}()" if self.function else f"line {self.line}"
        return f"{where}: `{self.code}` uses {self.rule}, which this exercise asks you not to use"


def _dotted(node: ast.AST) -> list[str] | None:
    """['torch', 'nn', 'functional', 'softmax'] for ``torch.nn.functional.softmax``; None if not a plain chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def _module_name(obj: Any) -> str | None:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return None


def _object_name(obj: Any) -> str | None:
    """The dotted name a live object is known by (``torch.softmax``), for names bound in other cells."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    mod, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(mod, str) and isinstance(name, str):
        return f"{mod}.{name}"
    return None


def _canonical(forbidden: Sequence[str]) -> tuple[set[str], set[str], dict[int, str]]:
    """(dotted names, tensor-method names, {id(live object): rule}) for the forbidden list."""
    names, methods, objects = set(), set(), {}
    for f in forbidden:
        if f.startswith("Tensor."):
            methods.add(f.split(".", 1)[1])
            continue
        names.add(f)
        mod, _, attr = f.rpartition(".")
        m = sys.modules.get(mod)
        if m is not None and hasattr(m, attr):
            objects[id(getattr(m, attr))] = f
    return names, methods, objects


def _strip_magics(source: str) -> str:
    """The cell with IPython's `%magic` and `!shell` lines blanked (line numbers kept), so that it parses."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


class _Scanner:
    """Aliases learned from code, and the forbidden uses found in it (see the module docstring)."""

    def __init__(self, forbidden: Sequence[str], namespace: Mapping[str, Any] | None) -> None:
        self.names, self.methods, self.objects = _canonical(forbidden)
        self.namespace = namespace
        self.alias: dict[str, str] = {}   # local name -> dotted name it stands for

    def resolve(self, parts: list[str]) -> str | None:
        head, namespace = parts[0], self.namespace
        if head in self.alias:
            return ".".join([self.alias[head]] + parts[1:])
        if namespace is not None and head in namespace:
            if len(parts) == 1 and id(namespace[head]) in self.objects:  # `soft = torch.softmax` in another cell
                return self.objects[id(namespace[head])]
            base = _object_name(namespace[head])
            if base is not None and (len(parts) == 1 or isinstance(namespace[head], types.ModuleType)):
                return ".".join([base] + parts[1:])
        if head in sys.modules or head in ("torch", "numpy", "math", "scipy"):
            return ".".join(parts)
        return None

    def learn(self, tree: ast.AST) -> None:
        """Aliases from imports and simple assignments, anywhere in ``tree``, in order."""
        alias = self.alias
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    alias[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                parts = _dotted(node.value)
                if parts and (full := self.resolve(parts)) is not None:
                    alias[node.targets[0].id] = full
                elif (isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "getattr"
                      and len(node.value.args) >= 2 and isinstance(node.value.args[1], ast.Constant)):
                    base = _dotted(node.value.args[0])
                    if base and (full := self.resolve(base)) is not None:
                        alias[node.targets[0].id] = f"{full}.{node.value.args[1].value}"

    def matches(self, full: str) -> str | None:
        if full in self.names:
            return full
        if self.namespace is not None:  # e.g. torch.nn.functional.softmax reached as torch.softmax's twin
            head, _, attr = full.rpartition(".")
            m = sys.modules.get(head)
            if m is not None and id(getattr(m, attr, None)) in self.objects:
                return self.objects[id(getattr(m, attr))]
        return None

    def find(self, tree: ast.AST, lines: list[str], function: str = "") -> list[Violation]:
        """Every forbidden use inside ``tree`` (one per line and rule); ``lines``: the source it came from."""
        found: list[Violation] = []
        seen: set[tuple[int, str]] = set()

        def add(node: ast.AST, rule: str) -> None:
            line = getattr(node, "lineno", 0)
            if (line, rule) not in seen:
                seen.add((line, rule))
                code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                found.append(Violation(line, code, rule, function))

        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                for a in node.names:
                    full = f"{node.module}.{a.name}" if isinstance(node, ast.ImportFrom) else a.name
                    if rule := self.matches(full):
                        add(node, rule)
            elif isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store):
                parts = _dotted(node)
                full = self.resolve(parts) if parts else None
                if full is not None and (rule := self.matches(full)):
                    add(node, rule)
                elif isinstance(node, ast.Attribute) and node.attr in self.methods:
                    base = _dotted(node.value)
                    base_full = self.resolve(base) if base else None
                    if base_full is None or base_full.endswith("Tensor"):  # an expression, i.e. a tensor
                        add(node, f"Tensor.{node.attr}")
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
                base = _dotted(node.args[0])
                full = self.resolve(base) if base else None
                if full is not None and (rule := self.matches(f"{full}.{node.args[1].value}")):
                    add(node, rule)
                elif node.args[1].value in self.methods and full is None:
                    add(node, f"Tensor.{node.args[1].value}")
        return found


def _parse(source: str) -> ast.AST | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not code, null bytes, absurdly nested
        return None


def violations(source: str, forbidden: Sequence[str], namespace: Mapping[str, Any] | None = None) -> list[Violation]:
    """Every use of a forbidden call in ``source`` (see the module docstring); [] when the code does not parse."""
    if not forbidden or (tree := _parse(source)) is None:
        return []
    scanner = _Scanner(forbidden, namespace)
    scanner.learn(tree)
    return sorted(scanner.find(tree, source.splitlines()), key=lambda v: (v.line, v.rule))


MAX_HELPERS = 50  # functions followed from one answer: a notebook has a handful


def notebook_violations(cells: Sequence[str], function: str, forbidden: Sequence[str]) -> list[Violation]:
    """Forbidden uses in a notebook's answer ``function`` and in the notebook's functions it calls, from text.

    The grader's reading (it has the notebook's cells, no live objects): aliases come from every cell, the
    answer is the last top-level binding of ``function`` (a ``def``, ``function = ...``, or an import under
    that name), and helpers are the notebook's own top-level functions (and lambdas) that it names, followed
    transitively. Lines count within each function's cell.
    """
    if not forbidden:
        return []
    scanner = _Scanner(forbidden, None)
    defs: dict[str, tuple[ast.AST, list[str]]] = {}
    for source in cells:
        code = _strip_magics(source)
        if (tree := _parse(code)) is None:
            continue
        scanner.learn(tree)
        for node in getattr(tree, "body", []):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[node.name] = (node, code.splitlines())
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                  and (isinstance(node.value, ast.Lambda) or node.targets[0].id == function)):
                defs[node.targets[0].id] = (node, code.splitlines())
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name.split(".")[0]) == function for a in node.names):
                defs[function] = (node, code.splitlines())   # `from course_lib.generate import greedy`
    found: list[Violation] = []
    todo, seen = [function], set()
    while todo and len(seen) < MAX_HELPERS:
        name = todo.pop(0)
        if name in seen or name not in defs:
            continue
        seen.add(name)
        node, lines = defs[name]
        found += scanner.find(node, lines, "" if name == function else name)
        todo += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in defs and n.id not in seen]
    return found


def function_violations(fn: Any, forbidden: Sequence[str]) -> list[Violation]:
    """``violations`` of a live function's source, names resolved in its globals, and of the functions of its
    own module that it names (a notebook's helpers), followed transitively; [] if its source is unknown."""
    if not forbidden:
        return []
    names, _, objects = _canonical(forbidden)
    if id(fn) in objects or _object_name(fn) in names:  # the forbidden function itself, imported as the answer
        rule = objects.get(id(fn)) or _object_name(fn)
        return [Violation(0, getattr(fn, "__name__", "?"), rule)]
    found: list[Violation] = []
    todo, seen = [fn], set()
    while todo and len(seen) < MAX_HELPERS:
        f = todo.pop(0)
        if id(f) in seen:
            continue
        seen.add(id(f))
        src = _source(f)
        if src is None or (tree := _parse(src)) is None:
            continue
        namespace = getattr(f, "__globals__", None)
        scanner = _Scanner(forbidden, namespace)   # one parse per function: read for uses, then for helpers
        scanner.learn(tree)
        found += sorted(scanner.find(tree, src.splitlines(), "" if f is fn else getattr(f, "__name__", "?")),
                        key=lambda v: (v.line, v.rule))
        if namespace is None:
            continue
        for n in ast.walk(tree):
            g = namespace.get(n.id) if isinstance(n, ast.Name) else None
            if (isinstance(g, types.FunctionType) and getattr(g, "__module__", None) == getattr(fn, "__module__", 0)
                    and id(g) not in seen):
                todo.append(g)
    return found


def _source(fn: Any) -> str | None:
    import inspect
    import textwrap

    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):  # built in, or made by exec from a string: nothing to read
        return None
