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

The source can be one cell or every code cell of a notebook joined (the grader has the notebook's text and
no live objects; a notebook has the function's globals); each finding names its line.
"""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Violation", "function_violations", "violations"]


@dataclass(frozen=True)
class Violation:
    """One forbidden use: where it is and which rule it breaks."""

    line: int
    code: str
    rule: str

    def message(self) -> str:
        """What the student reads."""
        return f"line {self.line}: `{self.code}` uses {self.rule}, which this exercise asks you not to use"


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


def violations(source: str, forbidden: Sequence[str], namespace: Mapping[str, Any] | None = None) -> list[Violation]:
    """Every use of a forbidden call in ``source`` (see the module docstring); [] when the code does not parse."""
    if not forbidden:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names, methods, objects = _canonical(forbidden)
    lines = source.splitlines()
    alias: dict[str, str] = {}   # local name -> dotted name it stands for

    def resolve(parts: list[str]) -> str | None:
        head = parts[0]
        if head in alias:
            return ".".join([alias[head]] + parts[1:])
        if namespace is not None and head in namespace:
            base = _object_name(namespace[head])
            if base is not None and (len(parts) == 1 or isinstance(namespace[head], types.ModuleType)):
                return ".".join([base] + parts[1:])
        if head in sys.modules or head in ("torch", "numpy", "math", "scipy"):
            return ".".join(parts)
        return None

    # aliases first (imports and simple assignments, anywhere in the source, in order)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                alias[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = _dotted(node.value)
            if parts and (full := resolve(parts)) is not None:
                alias[node.targets[0].id] = full
            elif (isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "getattr"
                  and len(node.value.args) >= 2 and isinstance(node.value.args[1], ast.Constant)):
                base = _dotted(node.value.args[0])
                if base and (full := resolve(base)) is not None:
                    alias[node.targets[0].id] = f"{full}.{node.value.args[1].value}"

    def matches(full: str) -> str | None:
        if full in names:
            return full
        if namespace is not None:  # e.g. torch.nn.functional.softmax reached as torch.softmax's twin
            head, _, attr = full.rpartition(".")
            m = sys.modules.get(head)
            if m is not None and id(getattr(m, attr, None)) in objects:
                return objects[id(getattr(m, attr))]
        return None

    found: list[Violation] = []
    seen: set[tuple[int, str]] = set()

    def add(node: ast.AST, rule: str) -> None:
        line = getattr(node, "lineno", 0)
        if (line, rule) not in seen:
            seen.add((line, rule))
            code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            found.append(Violation(line, code, rule))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            parts = _dotted(node)
            full = resolve(parts) if parts else None
            if full is not None and (rule := matches(full)):
                add(node, rule)
            elif isinstance(node, ast.Attribute) and node.attr in methods:
                base = _dotted(node.value)
                base_full = resolve(base) if base else None
                if base_full is None or base_full.endswith("Tensor"):  # an expression, i.e. a tensor
                    add(node, f"Tensor.{node.attr}")
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            base = _dotted(node.args[0])
            full = resolve(base) if base else None
            if full is not None and (rule := matches(f"{full}.{node.args[1].value}")):
                add(node, rule)
            elif node.args[1].value in methods and full is None:
                add(node, f"Tensor.{node.args[1].value}")
    return sorted(found, key=lambda v: (v.line, v.rule))


def function_violations(fn: Any, forbidden: Sequence[str]) -> list[Violation]:
    """``violations`` of a live function's source, names resolved in its globals; [] if its source is unknown."""
    import inspect
    import textwrap

    if not forbidden:
        return []
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):  # built in, or made by exec from a string: nothing to read
        return []
    return violations(src, forbidden, getattr(fn, "__globals__", None))
