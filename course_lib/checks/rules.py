"""Rules an exercise's text sets ("do not use torch.softmax"), enforced on the answer's source code.

A check declares the calls its exercise forbids as dotted names (``Check.forbidden``)::

    Check("softmax", "softmax", ..., forbidden=("torch.softmax", "torch.nn.functional.softmax",
                                                "torch.special.softmax", "Tensor.softmax"))

``violations(source, forbidden)`` reads the code without running it and finds every use of a
forbidden name through any alias: ``import torch as t; t.softmax``, ``from torch.nn import
functional as F; F.softmax``, ``from torch import softmax as sm``, ``f = torch.softmax``,
``getattr(torch, "softmax")``, ``"Tensor.softmax"`` names a tensor method: any
``<expression>.softmax`` whose base is not a module alias.

What a reading of the text cannot follow is a violation of every rule too: a name computed at run
time (``getattr`` with a computed name, ``vars()``, ``globals()``, ``__dict__``, ``eval``/``exec``,
``__import__``, ``importlib``, ``operator.methodcaller``/``attrgetter``, ``sys.modules``), and the
private or operator-level names under a forbidden name's package (``torch._softmax``,
``torch.ops.aten._log_softmax``, ``torch._C``): the same kernels under names no list can hold.
With ``namespace`` (the function's globals, in a notebook), names bound in other cells are resolved
too.

Two readings of one answer, which must agree: in the notebook, ``function_violations(fn, ...)``
reads the live function with its globals; in the grader, ``notebook_violations(cells, name, ...)``
reads the submitted cells' text (no live objects: aliases come from every cell). Both follow the
notebook's own functions that the answer names (a helper that calls ``torch.softmax`` breaks the
rule too), and each finding names its line.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Violation",
    "course_statements",
    "function_violations",
    "notebook_violations",
    "violations",
]


@dataclass(frozen=True)
class Violation:
    """One forbidden use: where it is and which rule it breaks."""

    line: int
    code: str
    rule: str
    function: str = ""  # the helper it is in, when not the answer's own function

    def message(self) -> str:
        """What the student reads."""
        # the answer is the forbidden function itself (imported under the answer's name)
        if self.line == 0:
            return f"`{self.code}` is {self.rule}, which this exercise asks you not to use"
        # "code cell 3" or a helper
        of = self.function if " " in self.function else f"{self.function}()"
        where = f"line {self.line} of {of}" if self.function else f"line {self.line}"
        return f"{where}: `{self.code}` uses {self.rule}, which this exercise asks you not to use"


def _dotted(node: ast.AST) -> list[str] | None:
    """['torch', 'nn', 'functional', 'softmax'] for ``torch.nn.functional.softmax``; None if not a
    plain chain."""
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
    """The dotted name a live object is known by (``torch.softmax``), for names bound in other
    cells."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    mod, name = (
        getattr(obj, "__module__", None),
        getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None),
    )
    short = getattr(obj, "__name__", None)
    if (
        isinstance(mod, str)
        and isinstance(short, str)
        and getattr(sys.modules.get(mod), short, None) is obj
    ):
        # the public name (torch.exp), not the implementation's (torch._VariableFunctionsClass.exp)
        return f"{mod}.{short}"
    if isinstance(mod, str) and isinstance(name, str):
        return f"{mod}.{name}"
    return None


def _canonical(forbidden: Sequence[str]) -> tuple[set[str], set[str], dict[int, str]]:
    """(dotted names, tensor-method names, {id(live object): rule}) for the forbidden list
    (``pkg.*`` entries, whole packages, are read by ``_Scanner`` itself)."""
    names, methods, objects = set(), set(), {}
    for f in forbidden:
        if f.endswith(".*"):
            continue
        if f.startswith("Tensor."):
            methods.add(f.split(".", 1)[1])
            continue
        names.add(f)
        if (obj := _live_object(f)) is not None:
            objects[id(obj)] = f
    return names, methods, objects


@functools.lru_cache(maxsize=8192)
def _live_object(full: str) -> Any:
    """The object a public dotted name stands for in this process, or None: its longest prefix that
    imports as a module, then attributes of modules only, each from the module's own namespace (no
    module ``__getattr__`` runs). ``numpy.ma.core.mu.logaddexp`` is numpy's logaddexp (numpy.ma.core
    imports numpy's ufunc module as ``mu``): a name is compared by what it stands for, not how it is
    spelt (white-box red team 24, E3)."""
    import contextlib
    import importlib
    import io

    parts = full.split(".")
    if any(p.startswith("_") and not p.endswith("__") for p in parts[1:]):
        return None  # private names are findings of their own (_Scanner.matches)
    for i in range(len(parts), 0, -1):
        try:
            # a module that prints on import must not write into the reading process's output
            with contextlib.redirect_stdout(io.StringIO()):
                obj: Any = importlib.import_module(".".join(parts[:i]))
        # not a module (an attribute), not installed, or a module that fails to import
        except Exception:
            continue
        break
    else:
        return None
    for p in parts[i:]:
        if not isinstance(obj, types.ModuleType):
            return None
        obj = vars(obj).get(p)
    return obj


# names that run strings as code or find objects by strings: a reading of the text cannot follow
# them. The first group breaks any rule, even a package rule alone (`course_lib.checks.*`, which the
# grader sets on every answer: the checks' own cases and expected values are no answer); the rest
# only rules that name calls. getattr with a computed name, vars() and globals() are not among them:
# honest code writes getattr(torch, dtype_name) (a blind class did, and lost the exercise); a
# forbidden routine reached that way is found when it runs (engine.Check.forbidden_ops,
# course_lib.checks.trace)
UNIVERSAL = {
    "builtins.eval",
    "builtins.exec",
    "builtins.compile",
    "builtins.__import__",
    "importlib.import_module",
    "importlib.__import__",
    "sys.modules",
    "builtins.get_ipython",
    "IPython.get_ipython",
    "IPython.core.getipython.get_ipython",
    "IPython.core.interactiveshell.InteractiveShell.get_ipython",
}
DYNAMIC = {
    "builtins.eval": "eval()",
    "builtins.exec": "exec()",
    "builtins.compile": "compile()",
    "builtins.__import__": "__import__()",
    "importlib.import_module": "importlib.import_module",
    "importlib.__import__": "importlib.__import__",
    "sys.modules": "sys.modules",
    "pickle.loads": "pickle.loads",
    "marshal.loads": "marshal.loads",
    "pkgutil.resolve_name": "pkgutil.resolve_name",
    "runpy.run_path": "runpy.run_path",
    "runpy.run_module": "runpy.run_module",
    # IPython runs strings as code (run_cell, ev, ex): under any of the names it is reached by
    "builtins.get_ipython": "get_ipython()",
    "IPython.get_ipython": "get_ipython()",
    "IPython.core.getipython.get_ipython": "get_ipython()",
    "IPython.core.interactiveshell.InteractiveShell.get_ipython": "get_ipython()",
}
# what switches off the run-time checks (trace.Watch's profile hook, the engine's line counter): no
# answer needs it
HOOKS = {
    "sys.setprofile": "sys.setprofile",
    "sys.settrace": "sys.settrace",
    "threading.setprofile": "threading.setprofile",
    "threading.settrace": "threading.settrace",
    "sys.monitoring": "sys.monitoring",
    "torch.utils._python_dispatch._pop_mode": "popping torch's dispatch mode",
}
# calls that turn a string into running code: anywhere in a notebook (not only where an answer
# reaches) they break every rule, since that code can rebind any name an answer calls (a softmax
# that switched the watch off, defined in a cell that ran exec(base64...), and an answer that called
# it by a name bound nowhere in text:
# test_contracts.py::test_code_run_from_a_string_anywhere_in_the_notebook_breaks_the_rule)
STRING_CODE = {
    "builtins.eval",
    "builtins.exec",
    "builtins.compile",
    "pickle.loads",
    "marshal.loads",
    "runpy.run_path",
    "runpy.run_module",
    "types.FunctionType",
    "types.CodeType",
    # TorchScript compiled from a string (scaled_dot_product_attention run that way:
    # test_contracts.py::test_torchscript_compiled_from_a_string_breaks_the_rule)
    "torch.jit.CompilationUnit",
    "torch.jit.CompilationUnit.define",
    "torch.jit.frontend.get_jit_def",
}
DUNDER_LOOKUPS = {"__dict__", "__builtins__", "__globals__", "__code__"}
UNIVERSAL_DUNDERS = {"__dict__", "__builtins__", "__globals__"}
BUILTINS = {full.split(".", 1)[1] for full in DYNAMIC if full.startswith("builtins.")} | {"getattr"}


_TIMING_LINE = re.compile(r"^([ \t]*)%(time|timeit)(?:[ \t]+(.*))?$")
_TIMING_CELL = re.compile(r"^[ \t]*%%(time|timeit|capture)\b(.*)$")


def _timed_statement(args: str, timeit: bool) -> str:
    """The statement of ``%time STMT`` or ``%timeit [-n N -r R ...] STMT``."""
    words = args.split()
    if timeit:
        while words and words[0].startswith("-"):
            flag = words.pop(0)
            if flag in ("-n", "-r", "-p") and words:  # the value as its own word
                words.pop(0)
    return " ".join(words) if timeit else args.strip()


def plain_cell(source: str) -> str:
    """The cell with its timing magics as the code they run: ``%time STMT`` and ``%timeit ... STMT``
    lines as STMT, a ``%%time``/``%%timeit``/``%%capture`` header as nothing (or %%timeit's setup
    statement). The verification runs this text (autograde.inside.relay) and the readings read it,
    so what runs is what was read (white-box red team 23, D7: `%time softmax = helper` rebound the
    answer in a string no reading parsed). Lines keep their numbers."""
    # IPython looks for magics after its clean-up (leading blank lines dropped, common indentation,
    # `>>> ` and `In [3]: ` prompts): so does this (white-box red team 24, E6: "\n%%time\nBODY" ran
    # BODY, read as a string)
    if "%" not in source:  # every timing magic starts with one: nothing to do (and no clean-up)
        return source
    lines, dropped = _cleaned(source.split("\n"))
    changed = False
    while lines and (m := _TIMING_CELL.match(lines[0])):  # %%time, then %%capture inside it ...
        lines[0] = _timed_statement(m[2], True) if m[1] == "timeit" else ""
        lines, more = _cleaned(lines)
        dropped, changed = dropped + more, True
    for i, line in enumerate(lines):
        if m := _TIMING_LINE.match(line):
            lines[i] = m[1] + (_timed_statement(m[3] or "", m[2] == "timeit") or "pass")
            changed = True
    return "\n".join([""] * dropped + lines) if changed else source


def _cleaned(lines: list[str]) -> tuple[list[str], int]:
    """IPython's clean-up of a cell's lines before it looks for magics, and how many leading lines
    it dropped (none without IPython)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return lines, 0
    kept = [line + "\n" for line in lines]
    for transform in TransformerManager().cleanup_transforms:
        kept = transform(kept)
    out = [line[:-1] if line.endswith("\n") else line for line in kept]
    return out, len(lines) - len(out)


def _strip_magics(source: str) -> str:
    """The cell as the Python IPython runs (``x = !ls`` is a call), so that it parses as it ran;
    without IPython, `%magic` and `!shell` lines blanked. Line numbers are kept either way. Timing
    magics first become the code they run (``plain_cell``), as in the verification."""
    source = plain_cell(source)
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
        )
    import warnings

    try:
        with warnings.catch_warnings():
            # odd line endings: IPython warns, then transforms as best it can
            warnings.simplefilter("ignore")
            return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - IPython could not transform it: the kernel could not run it either
        return source


class _Scanner:
    """Aliases learned from code, and the forbidden uses found in it (see the module docstring)."""

    def __init__(self, forbidden: Sequence[str], namespace: Mapping[str, Any] | None) -> None:
        self.names, self.methods, self.objects = _canonical(forbidden)
        self.packages = {f[:-2] for f in forbidden if f.endswith(".*")}
        self.strict = bool(self.names or self.methods)  # the rule names calls, not only packages
        # packages whose private and operator-level names count as the forbidden ones
        # (torch._softmax, torch.ops)
        self.roots = {f.split(".")[0] for f in self.names}
        self.namespace = namespace
        self.alias: dict[str, str] = {}  # local name -> dotted name it stands for

    def resolve(self, parts: list[str]) -> str | None:
        head, namespace = parts[0], self.namespace
        if head in self.alias:
            return ".".join([self.alias[head]] + parts[1:])
        if namespace is not None and head in namespace:
            # `soft = torch.softmax` in another cell
            if len(parts) == 1 and id(namespace[head]) in self.objects:
                return self.objects[id(namespace[head])]
            base = _object_name(namespace[head])
            if base is not None and (
                len(parts) == 1 or isinstance(namespace[head], types.ModuleType)
            ):
                return ".".join([base] + parts[1:])
        if head in sys.modules or head in ("torch", "numpy", "math", "scipy"):
            return ".".join(parts)
        if head in BUILTINS and (namespace is None or head not in namespace):
            return ".".join(["builtins"] + parts)
        return None

    def learn(self, tree: ast.AST) -> None:
        """Aliases from imports and simple assignments, anywhere in ``tree``, in order."""
        alias = self.alias
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    alias[a.asname or a.name.split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    alias[a.asname or a.name] = f"{node.module}.{a.name}"
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                parts = _dotted(node.value)
                if parts and (full := self.resolve(parts)) is not None:
                    alias[node.targets[0].id] = full
                elif (
                    isinstance(node.value, ast.Call)
                    and self.is_getattr(node.value.func)
                    and len(node.value.args) >= 2
                    and isinstance(node.value.args[1], ast.Constant)
                ):
                    base = _dotted(node.value.args[0])
                    if base and (full := self.resolve(base)) is not None:
                        alias[node.targets[0].id] = f"{full}.{node.value.args[1].value}"

    def kept(self, node: ast.AST, callees: set[int]) -> str | None:
        """The rule of a forbidden function that ``node`` names without calling it there (a value
        kept for later: ``f = np.logaddexp``, ``[torch.softmax]``, an argument), or None; a call's
        result is no function."""
        if id(node) in callees:
            return None
        if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            return None
        return self.named(node)

    def named(self, node: ast.AST) -> str | None:
        """The rule of a forbidden function ``node`` names, or None: a dotted name through the
        imports, a tensor's method (an expression's attribute), ``getattr(x, "name")``."""
        if isinstance(node, (ast.Name, ast.Attribute)):
            if isinstance(getattr(node, "ctx", None), ast.Store):
                return None
            parts = _dotted(node)
            full = self.resolve(parts) if parts else None
            if full is not None and (rule := self.matches(full)):
                return rule
            if isinstance(node, ast.Attribute) and node.attr in self.methods:
                base = _dotted(node.value)
                base_full = self.resolve(base) if base else None
                # an expression, i.e. a tensor's method
                if base_full is None or base_full.endswith("Tensor"):
                    return f"Tensor.{node.attr}"
            return None
        if (
            isinstance(node, ast.Call)
            and self.is_getattr(node.func)
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            base = _dotted(node.args[0])
            full = self.resolve(base) if base else None
            if full is not None and (rule := self.matches(f"{full}.{node.args[1].value}")):
                return rule
            if node.args[1].value in self.methods and full is None:
                return f"Tensor.{node.args[1].value}"
        return None

    def _holds(self, obj: Any, depth: int = 0) -> str | None:
        """The rule of a forbidden object inside ``obj`` (a dict, list, tuple, set or
        functools.partial)."""
        if id(obj) in self.objects and depth:
            return self.objects[id(obj)]
        if depth > 3:
            return None
        return next(
            (r for item in _contents(obj) if (r := self._holds(item, depth + 1)) is not None), None
        )

    def is_getattr(self, func: ast.AST) -> bool:
        """Whether ``func`` is the builtin getattr, under any name."""
        parts = _dotted(func)
        return bool(parts) and self.resolve(parts) == "builtins.getattr"

    def matches(self, full: str) -> str | None:
        if full in self.names:
            return full
        for package in self.packages:
            if full == package or full.startswith(package + "."):
                return f"{package} (the checks, their cases and expected values)"
        parts = full.split(".")
        private = [
            p
            for p in parts[1:]
            if (p.startswith("_") and not p.endswith("__")) or (p == "ops" and parts[0] == "torch")
        ]
        if parts[0] in self.roots and private:
            return f"{parts[0]}'s private or operator-level functions ({full})"
        # the same object under another path: torch.nn.functional.softmax reached as torch.softmax's
        # twin, numpy's logaddexp as numpy.ma.core.mu.logaddexp (E3); in the kernel and the grader
        if parts[0] in self.roots and (obj := _live_object(full)) is not None:
            if id(obj) in self.objects:
                return self.objects[id(obj)]
        return None

    def _dynamic(self, node: ast.AST, constant_getattr: set[int]) -> list[str]:
        """The rules a name that runs strings or switches off the run-time checks breaks (DYNAMIC,
        HOOKS)."""
        if not isinstance(node, (ast.Attribute, ast.Name)) or isinstance(
            getattr(node, "ctx", None), ast.Store
        ):
            return []
        parts = _dotted(node)
        full = self.resolve(parts) if parts else None
        rules = []
        if (
            full in DYNAMIC
            and (self.strict or full in UNIVERSAL)
            and not (full == "builtins.getattr" and id(node) in constant_getattr)
        ):
            rules.append(f"{DYNAMIC[full]} (the grader cannot tell which function it reaches)")
        if full in HOOKS or (full or "").startswith("sys.monitoring."):
            rules.append(
                f"{HOOKS.get(full, 'sys.monitoring')} (it switches off the checks that watch your "
                "function run)"
            )
        return rules

    def find(self, tree: ast.AST, lines: list[str], function: str = "") -> list[Violation]:
        """Every forbidden use inside ``tree`` (one per line and rule); ``lines``: the source it
        came from."""
        found: list[Violation] = []
        seen: set[tuple[int, str]] = set()

        def add(node: ast.AST, rule: str) -> None:
            line = getattr(node, "lineno", 0)
            if (line, rule) not in seen:
                seen.add((line, rule))
                code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                found.append(Violation(line, code, rule, function))

        constant_getattr = {
            id(n.func)
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
        }
        local = _locals(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id not in local
            ):
                if (
                    self.namespace is not None
                    and node.id in self.namespace
                    and node.id not in self.alias
                ):
                    # the live twin of taint
                    if (rule := self._holds(self.namespace[node.id])) is not None:
                        add(node, rule)
            if isinstance(node, ast.Attribute) and node.attr in (
                DUNDER_LOOKUPS if self.strict else UNIVERSAL_DUNDERS
            ):
                add(node, f"a lookup through {node.attr}")
            # a bare name the function binds itself (a parameter `check`) is its own value, not the
            # import of that name (threat model, white-box red team 21, B13: an honest helper lost
            # its exercise); a chain rooted at one (`torch.softmax` with a parameter `torch`) is
            # still read through the imports
            own = isinstance(node, ast.Name) and node.id in local
            if not own:
                for rule in self._dynamic(node, constant_getattr):
                    add(node, rule)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                for a in node.names:
                    full = f"{node.module}.{a.name}" if isinstance(node, ast.ImportFrom) else a.name
                    if rule := self.matches(full):
                        add(node, rule)
            elif not own and (rule := self.named(node)) is not None:
                add(node, rule)
        return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bound_names(node: ast.AST) -> list[str]:
    """The names ``node`` itself binds in the scope it sits in, by every binding form of the
    language: a stored or deleted name, a ``def``/``class``, an import (``*`` for a star import), a
    ``match`` capture, an ``except
    ... as`` name (white-box red team 23, D1: a ``case softmax:`` capture rebound the answer
    unread)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    return []


def _evaluated_here(node: ast.AST) -> list[ast.AST]:
    """The parts of a function, class, lambda or comprehension that run in the scope around it
    (decorators, defaults, bases, the first iterable; a walrus inside a comprehension binds there
    too)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        annotations = [
            x.annotation
            for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            if x is not None and x.annotation is not None
        ]
        return [
            *getattr(node, "decorator_list", []),
            *a.defaults,
            *[d for d in a.kw_defaults if d is not None],
            *annotations,
            *([node.returns] if getattr(node, "returns", None) is not None else []),
        ]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    if isinstance(node, _COMPREHENSIONS):
        walrus, todo = [], list(ast.iter_child_nodes(node))
        while todo:
            n = todo.pop()
            if isinstance(n, ast.NamedExpr):
                walrus.append(n)
            if not isinstance(n, _SCOPES):  # a lambda's walrus binds in the lambda
                todo.extend(ast.iter_child_nodes(n))
        return [node.generators[0].iter, *walrus]
    return []


def _scope_nodes(body: Sequence[ast.AST]):
    """Every node of one scope, in the text's order: a nested function, class, lambda or
    comprehension is yielded itself, with what of it runs in this scope (``_evaluated_here``), never
    its own body."""
    todo = list(reversed(body))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (*_SCOPES, *_COMPREHENSIONS)):
            todo.extend(reversed(_evaluated_here(node)))
        else:
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _locals(tree: ast.AST) -> set[str]:
    """Names a function binds in its own scope (parameters, assignments, nested defs, captures):
    they hide module-level names of the same name. Names it declares ``global``/``nonlocal`` and
    names nested scopes bind are not its own; names it imports are read through the imports
    (``find``)."""
    if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return set()
    a = tree.args
    names = {
        x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]
    }
    declared: set[str] = set()
    for n in _scope_nodes(tree.body if isinstance(tree.body, list) else [tree.body]):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif not isinstance(n, ast.alias):
            names.update(_bound_names(n))
    return names - declared


def _pairs(target: ast.AST, value: ast.AST):
    """(target, value) of one assignment, unpacked where both sides are tuples or lists of one
    length."""
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
    ):
        for t, v in zip(target.elts, value.elts):
            yield from _pairs(t, v)
    else:
        yield target, value


def _binding_sites(tree: ast.AST):
    """(name, node) for every binding of a module-level name in one cell, by any form
    (``_bound_names``) at any depth of the module's own scope, and by a function or class anywhere
    in it that declares the name ``global``. The node is the ``def``/``class`` for those, the value
    a name is assigned (``a, b = f, g``: ``g`` for ``b``), else the cell's top-level statement that
    holds the binding (its text holds what is bound)."""
    for st in getattr(tree, "body", []):
        # names an assignment binds to a value of their own: that value is the site
        paired: set[int] = set()
        for node in _module_scope(ast.Module(body=[st], type_ignores=[])):
            if isinstance(node, ast.Assign):
                given = [p for t in node.targets for p in _pairs(t, node.value)]
            elif (
                isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
                and node.value is not None
            ):
                given = [(node.target, node.value)]
            else:
                given = []
            for target, value in given:
                if isinstance(target, ast.Name):
                    paired.add(id(target))
                    yield target.id, value
            if id(node) in paired:
                continue
            for name in _bound_names(node):
                yield (
                    name,
                    node
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    else st,
                )
        for node in ast.walk(st):
            if isinstance(node, ast.Global):
                for name in node.names:
                    yield name, st


def _module_scope(tree: ast.AST):
    """Every node of the module's own scope, in the text's order: compound statements included; a
    function, class or lambda is yielded but not entered (its body is its own scope, read when
    something reaches it)."""
    todo = list(reversed(getattr(tree, "body", [])))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _parse(source: str) -> ast.AST | None:
    try:
        return ast.parse(source)
    # not code, null bytes, absurdly nested
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def violations(
    source: str, forbidden: Sequence[str], namespace: Mapping[str, Any] | None = None
) -> list[Violation]:
    """Every use of a forbidden call in ``source`` (see the module docstring); [] when the code does
    not parse."""
    if not forbidden or (tree := _parse(source)) is None:
        return []
    scanner = _Scanner(forbidden, namespace)
    scanner.learn(tree)
    return sorted(scanner.find(tree, source.splitlines()), key=lambda v: (v.line, v.rule))


MAX_HELPERS = 50  # functions the live reading follows from one answer (function_violations)
# Decorators from libraries that keep the function to themselves (a wrapper bound to the same name):
# a function decorated by one still runs only where its name is called. Any other decorator receives
# the function object.
LIBRARY_DECORATORS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        "functools.cache",
        "functools.lru_cache",
    }
)


@functools.lru_cache(maxsize=2048)
def _cell_tree(source: str) -> tuple[str, ast.AST | None]:
    """(the cell as IPython runs it, its syntax tree or None): the grader reads one notebook for
    every check."""
    code = _strip_magics(source)
    return code, _parse(code)


def _global_loads(node: ast.AST, hidden: frozenset[str] = frozenset()):
    """The names ``node`` reads that are module-level names: not a local of a function, lambda or
    comprehension inside ``node`` (or of ``node`` itself) around the read."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = _evaluated_here(node)
        hidden = hidden | _locals(node)
        body = node.body if isinstance(node.body, list) else [node.body]
    elif isinstance(node, _COMPREHENSIONS):
        outer = [node.generators[0].iter]
        hidden = hidden | {
            n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
        }
        body = [n for n in ast.iter_child_nodes(node) if n is not node.generators[0].iter]
    else:
        outer, body = [], [node]
    for part in outer:
        yield from _global_loads(part)
    for n in _scope_nodes(body):
        if isinstance(n, ast.Name) and n.id not in hidden:
            yield n
        if (
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, *_COMPREHENSIONS))
            and n is not node
        ):
            yield from _global_loads(n, hidden)
        elif isinstance(n, ast.ClassDef):
            for st in n.body:
                yield from _global_loads(st, hidden)


# What a `def` line may evaluate and still be sure not to raise (``_sure_def``): annotations naming
# these modules' attributes, builtin types, constants.
ANNOTATION_MODULES = ("torch", "numpy", "typing", "collections.abc", "math")
BUILTIN_TYPES = frozenset(
    {
        "int",
        "float",
        "complex",
        "bool",
        "str",
        "bytes",
        "list",
        "dict",
        "tuple",
        "set",
        "frozenset",
        "object",
        "type",
    }
)


@functools.lru_cache(maxsize=2048)
def _compiles(code: str) -> bool:
    """Whether Python compiles the cell (ast.parse accepts some code, e.g. a module-level `return`,
    that it does not: such a cell binds nothing)."""
    try:
        compile(code, "<cell>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


def _annotation_object(
    node: ast.AST, sites: Mapping[str, list], scanner: "_Scanner"
) -> tuple[bool, Any]:
    """(found, object) for a builtin type or an attribute of ANNOTATION_MODULES named by ``node``,
    where the notebook binds the name it starts from only by importing one of those modules."""
    parts = _dotted(node)
    if not parts:
        return False, None
    if parts[0] not in sites:
        if len(parts) == 1 and parts[0] in BUILTIN_TYPES:
            return True, getattr(builtins, parts[0])
        return False, None
    if not all(isinstance(n, (ast.Import, ast.ImportFrom)) for n, _ in sites[parts[0]]):
        return False, None
    full = scanner.resolve(parts)
    module = next(
        (m for m in ANNOTATION_MODULES if full and (full == m or full.startswith(m + "."))), None
    )
    if module is None:
        return False, None
    import importlib

    obj: Any = importlib.import_module(module)
    for attr in full[len(module) :].split(".")[1:]:
        if not hasattr(obj, attr):
            return False, None
        obj = getattr(obj, attr)
    return True, obj


def _cannot_raise(node: ast.AST, sites: Mapping[str, list], scanner: "_Scanner") -> bool:
    """Whether evaluating ``node`` (a default or an annotation) surely succeeds."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(
            node.operand.value, (int, float, complex)
        )
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_cannot_raise(e, sites, scanner) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None: both sides types
        return all(
            (isinstance(side, ast.Constant) and side.value is None)
            or isinstance(_annotation_object(side, sites, scanner)[1], type)
            for side in (node.left, node.right)
        )
    if isinstance(node, ast.Subscript):
        found, obj = _annotation_object(node.value, sites, scanner)
        generic = found and (
            obj in (list, dict, tuple, set, frozenset, type)
            or getattr(obj, "__module__", "") in ("typing", "collections.abc")
        )
        return generic and _cannot_raise(node.slice, sites, scanner)
    return _annotation_object(node, sites, scanner)[0]


def _sure_def(
    node: ast.AST, tree: ast.AST, code: str, sites: Mapping[str, list], scanner: "_Scanner"
) -> bool:
    """Whether a top-level ``def`` binds its name whenever its cell runs: the cell compiles, nothing
    before it in the cell can raise (only docstrings, ``pass`` and other such defs), and making the
    function cannot raise (no decorator; defaults and annotations that surely evaluate). After it,
    earlier bindings are dead."""

    def plain(st: ast.AST) -> bool:
        return (
            isinstance(st, ast.FunctionDef)
            and not st.decorator_list
            and all(_cannot_raise(e, sites, scanner) for e in _evaluated_here(st))
        )

    if not plain(node) or not _compiles(code):
        return False
    for st in getattr(tree, "body", []):
        if st is node:
            return True
        if not (
            isinstance(st, ast.Pass)
            or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))
            or plain(st)
        ):
            return False
    return False


def _callee_ids(trees: Sequence[ast.AST]) -> set[int]:
    """ids of the nodes that are called where they stand: a call's function, and the chain it hangs
    from (``np.logaddexp`` in ``np.logaddexp.reduce(x)``, ``getattr(torch, "softmax")`` in
    ``getattr(...)(x)``)."""
    out: set[int] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                while True:
                    out.add(id(f))
                    if not isinstance(f, ast.Attribute):
                        break
                    f = f.value
    return out


# a function's attributes that are plain text about it: reading one looks at the function
DOC_DUNDERS = frozenset({"__doc__", "__name__", "__qualname__", "__module__"})


def _looked_at_ids(trees: Sequence[ast.AST]) -> set[int]:
    """ids of the names only looked at where they stand: an argument of ``help``, ``dir`` or
    LOOKED_AT (print, repr, ...), a value put into an f-string, a function whose ``__doc__`` or
    ``__name__`` is read. A forbidden function read so is not kept (white-box red team 24, F2:
    ``help(torch.softmax)`` cost an honest notebook both of 02's softmax exercises)."""
    out: set[int] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in LOOKED_AT_FUNCTIONS
            ):
                out.update(id(a) for a in node.args)
            elif isinstance(node, ast.FormattedValue):
                out.add(id(node.value))
            elif isinstance(node, ast.Attribute) and node.attr in DOC_DUNDERS:
                out.add(id(node.value))
    return out


def _runs_later(node: ast.AST) -> bool:
    """A function whose body runs after the call that made it: a generator or a coroutine."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return isinstance(node, ast.AsyncFunctionDef)


def _called_only(
    trees: Sequence[ast.AST], sites: Mapping[str, list], scanner: "_Scanner", callees: set[int]
) -> set[str]:
    """Names of the notebook's functions that only ever run where the text calls them by name: bound
    by top-level ``def``s alone (no other binding, no ``global``), none a generator, decorated by
    nothing or by a library decorator, and named nowhere except as the function of a call. Any other
    function's object is in the notebook's data (a value, an argument, a decorator's hands): it may
    run inside any answer's call."""
    top = {id(n) for t in trees for n in getattr(t, "body", [])}
    out = set()
    for name, held in sites.items():
        if all(
            isinstance(n, ast.FunctionDef)
            and id(n) in top
            and not _runs_later(n)
            and all(
                scanner.resolve(_dotted(d.func if isinstance(d, ast.Call) else d) or ["?"])
                in LIBRARY_DECORATORS
                for d in n.decorator_list
            )
            for n, _ in held
        ):
            out.add(name)
    for tree in trees:
        for node in ast.walk(tree):
            # a store or del binds (a module-level one is a site; a function's own is its local)
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in out
                and id(node) not in callees
            ):
                out.discard(node.id)
    return out


def _split_scope(body: Sequence[ast.AST], called_only: set[str], top_level: bool):
    """(nodes that run when ``body`` runs, function-like nodes that may run later) of one scope's
    statements: a ``def``, ``lambda`` or generator expression is the second kind, except a top-level
    ``def`` in ``called_only`` (left out: it runs where it is called); what of it runs now
    (decorators, defaults, annotations) and a class body are the first."""
    now: list[ast.AST] = []
    later: list[ast.AST] = []
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.GeneratorExp)):
            todo.extend(_evaluated_here(node))
            if isinstance(node, ast.GeneratorExp) or not (
                top_level and node in body and getattr(node, "name", None) in called_only
            ):
                later.append(node)
            continue
        now.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return now, later


def course_statements(release_cells: Sequence[str]) -> frozenset[str]:
    """The top-level statements of the course's own cells (``ast.dump``: the same code, wherever it
    stands)."""
    out = set()
    for source in release_cells:
        _, tree = _cell_tree(source)
        out.update(ast.dump(st) for st in getattr(tree, "body", []))
    return frozenset(out)


def _derived(names: set[str], sites: Mapping[str, list]) -> set[str]:
    """``names`` and every module-level name bound to something whose text reads one of them,
    transitively."""
    out = set(names)
    grew = True
    while grew:
        grew = False
        for name, held in sites.items():
            if name not in out and any(
                isinstance(n, ast.Name) and n.id in out for node, _ in held for n in ast.walk(node)
            ):
                out.add(name)
                grew = True
    return out


def _read_cells(cells: Sequence[str], function: str, scanner: "_Scanner"):
    """(trees, every name's binding sites, each node's cell lines, the answer's bindings in the
    order they run) of the cells that parse; the scanner learns their aliases."""
    sites: dict[str, list[tuple[ast.AST, list[str]]]] = {}
    trees: list[ast.AST] = []
    lines_of: dict[int, list[str]] = {}
    answer: list[tuple[ast.AST, ast.AST, str]] = []
    for source in cells:
        code, tree = _cell_tree(source)
        if tree is None:
            continue
        trees.append(tree)
        scanner.learn(tree)
        lines = code.splitlines()
        for node in ast.walk(tree):
            lines_of[id(node)] = lines
        for name, node in _binding_sites(tree):
            held = sites.setdefault(name, [])
            if not any(n is node for n, _ in held):
                held.append((node, lines))
                if name == function:
                    answer.append((node, tree, code))
    return trees, sites, lines_of, answer


def _when_code_runs(
    trees: Sequence[ast.AST],
    sites: Mapping[str, list],
    called_only: set[str],
    defs: Mapping[str, list],
    course: frozenset[str],
) -> tuple[list[ast.AST], list[ast.AST]]:
    """(nodes that run when their cell runs, function-like nodes that may run inside any call
    later): the module-level code, and the called-only functions it calls, split by
    ``_split_scope``; the course's own statements that no student code reaches are left out."""
    owned = [st for tree in trees for st in getattr(tree, "body", []) if ast.dump(st) in course]
    student = [
        st for tree in trees for st in getattr(tree, "body", []) if ast.dump(st) not in course
    ]
    read_by_student = {n.id for st in student for n in ast.walk(st) if isinstance(n, ast.Name)}
    idle = set()  # the course's statements the student's code never reaches
    for st in owned:
        bound = {name for name, _ in _binding_sites(ast.Module(body=[st], type_ignores=[]))}
        if bound and not (_derived(bound, sites) & read_by_student):
            idle.add(id(st))
    now: list[ast.AST] = []
    later: list[ast.AST] = []
    for tree in trees:
        n, lt = _split_scope(
            [st for st in getattr(tree, "body", []) if id(st) not in idle], called_only, True
        )
        now += n
        later += lt
    # called-only functions that module-level code calls run when their cell runs: their bodies are
    # read as module-level code (their own lambdas and inner functions may be kept: they run later)
    done: set[str] = set()
    i = 0
    while i < len(now):
        node = now[i]
        i += 1
        if isinstance(node, ast.Name) and node.id in called_only and node.id not in done:
            done.add(node.id)
            for d in defs[node.id]:
                n, lt = _split_scope(d.body, called_only, False)
                now += n
                later += lt
    return now, later


@dataclass
class _Held:
    """Objects made by a forbidden class (``nn.MultiheadAttention(8, 2)``, ``TopKLogitsWarper(5)``)
    in code that runs when its cell runs: ``names``, the module-level names bound to one (read
    wherever the answer or a kept function reads them); ``kept``, the places one is put anywhere
    else (a container, an attribute, an argument, a return value), each a finding: what it holds may
    reach any answer."""

    names: dict[str, str]
    kept: list[tuple[ast.AST, str]]


# what a value may be handed to and still only be looked at
LOOKED_AT = frozenset(
    {"print", "repr", "str", "len", "type", "isinstance", "id", "bool", "hash", "format"}
)
# what a function may be handed to and still only be looked at (its documentation, its names)
LOOKED_AT_FUNCTIONS = LOOKED_AT | {"help", "dir"}


def _objects_held(trees: Sequence[ast.AST], now: Sequence[ast.AST], scanner: "_Scanner") -> _Held:
    """``_Held`` of the module-level code ``now``. A forbidden name whose last part is a class's
    (capitalised) makes an object when called; a call of it used at once (called, or looked into and
    then called: ``X(...)(...)``, ``D.Categorical(logits=z).probs``) gives a value, as a forbidden
    function's call does (a self-test)."""
    parent: dict[int, ast.AST] = {}
    for tree in trees:
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parent[id(child)] = node
    # id of a value -> the module-level names a plain assignment binds to it
    plain: dict[int, list[str]] = {}
    for tree in trees:
        for node in _module_scope(tree):
            if isinstance(node, ast.Assign):
                given = [p for t in node.targets for p in _pairs(t, node.value)]
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                given = [(node.target, node.value)]
            else:
                continue
            for target, value in given:
                if isinstance(target, ast.Name):
                    plain.setdefault(id(value), []).append(target.id)

    def used_at_once(node: ast.AST) -> bool:
        p = parent.get(id(node))
        if isinstance(p, ast.Call) and p.func is node:
            return True
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id in LOOKED_AT:
            return True
        if isinstance(p, (ast.Attribute, ast.Subscript)) and p.value is node:
            return used_at_once(p)
        return isinstance(p, (ast.Compare, ast.FormattedValue))

    held = _Held({}, [])
    grew = True
    while grew:  # names bound to such an object, and names bound to those names
        grew = False
        for node in now:
            rule = None
            if isinstance(node, ast.Call):
                parts = _dotted(node.func)
                full = scanner.resolve(parts) if parts else None
                if full and full.rsplit(".", 1)[-1][:1].isupper():
                    rule = scanner.matches(full)
            elif (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in held.names
            ):
                rule = held.names[node.id]
            if rule is None or used_at_once(node):
                continue
            if id(node) in plain:
                for name in plain[id(node)]:
                    if name not in held.names:
                        held.names[name] = rule
                        grew = True
            elif not any(n is node for n, _ in held.kept):
                held.kept.append((node, rule))
    return held


def notebook_violations(
    cells: Sequence[str],
    function: str,
    forbidden: Sequence[str],
    course: frozenset[str] = frozenset(),
) -> list[Violation]:
    """Forbidden uses in what a notebook's answer ``function`` can run, and in what the notebook
    keeps for it, from text alone.

    The grader's reading (it has the notebook's cells, no live objects; aliases come from every
    cell). What can run inside the answer's call: every binding of ``function`` (a ``def``, an
    assignment, an import, a capture, at any depth of a cell's module-level code, since which one a
    run ends with is not in the text: a cell that raises stops before its later lines); every
    function-like body of the notebook whose object is in its data (``_called_only`` says which are
    not), since a value, a registry, a decorator or a capture can hand it to the answer however the
    text links them (white-box red teams 22, C7/C9, and 23, D1/D2); and the called-only functions
    any of those calls by name. Module-level code runs when its cell runs, not inside a call: there
    a forbidden function may be called (a self-test), not kept (``f = np.logaddexp``, ``OPS = {"sm":
    ...}``, an argument or a return value), and the same holds in a called-only function that
    module-level code calls. ``course`` (``course_statements`` of the release): the course's own
    statements, unchanged, are read only once the student's code reads a name they bind or one
    derived from it (the notes' TransformerBlock, built on nn.MultiheadAttention, is no finding of
    an honest notebook; an answer that reaches it is).
    """
    if not forbidden:
        return []
    scanner = _Scanner(forbidden, None)
    trees, sites, lines_of, answer = _read_cells(cells, function, scanner)
    if function not in sites:
        # bound some other way (exec of a string, globals()[...] =): there is no text to read
        return [
            Violation(
                0,
                function,
                "an answer defined where the grader cannot read it (not by a def, a class "
                "or an assignment in a cell that parses)",
            )
        ]
    # once: who is named only as a call, and what module-level code keeps
    callees = _callee_ids(trees)
    called_only = _called_only(trees, sites, scanner, callees)
    defs = {name: [n for n, _ in sites[name]] for name in called_only}
    now, later = _when_code_runs(trees, sites, called_only, defs, course)
    found: list[Violation] = []
    held = _objects_held(trees, now, scanner)

    def at(node: ast.AST, rule: str, where: str) -> Violation:
        line = getattr(node, "lineno", 0)
        lines = lines_of.get(id(node), [])
        return Violation(
            line, lines[line - 1].strip() if 0 < line <= len(lines) else "", rule, where
        )

    looked = callees | _looked_at_ids(trees)
    for node in now:
        if (rule := scanner.kept(node, looked)) is not None:
            found.append(at(node, rule, "code that keeps it for later"))
    found += [at(node, rule, "code that keeps it for later") for node, rule in held.kept]
    read = _runs_inside(function, answer, later, defs, sites, scanner)
    seen_nodes: set[int] = set()
    for node, name in read:
        if id(node) not in seen_nodes:
            seen_nodes.add(id(node))
            found += scanner.find(node, lines_of.get(id(node), []), name)
            # a module-level name holding an object made by a forbidden class (`_m =
            # nn.MultiheadAttention(...)`)
            found += [
                at(n, held.names[n.id], name) for n in _global_loads(node) if n.id in held.names
            ]
    unique: dict[tuple, Violation] = {}
    for v in found:
        unique.setdefault((v.line, v.code, v.rule, v.function), v)
    found = list(unique.values())
    if not found:
        found += _string_code(cells, scanner)[:1]  # one is enough
    return found


def _runs_inside(
    function: str,
    answer: list,
    later: Sequence[ast.AST],
    defs: Mapping[str, list],
    sites: Mapping[str, list],
    scanner: "_Scanner",
) -> list[tuple[ast.AST, str]]:
    """(node, the name its findings are reported under) for what can run inside the answer's call:
    the answer's bindings, every function that may run later, and the called-only functions
    (``defs``) they call by name."""
    # the answer's bindings from the last one that surely runs (a plain def in a cell that runs it
    # whatever happens): an earlier draft of the answer, or the course's own function imported to
    # compare, is dead code
    last = max(
        (k for k, (n, tree, code) in enumerate(answer) if _sure_def(n, tree, code, sites, scanner)),
        default=0,
    )
    read = [(n, "") for n, _, _ in answer[last:]] + [
        (n, getattr(n, "name", "<lambda>")) for n in later
    ]
    reached = {function}
    j = 0
    while j < len(read):
        node, _ = read[j]
        j += 1
        for n in _global_loads(node):
            if n.id in defs and n.id not in reached:
                reached.add(n.id)
                read += [(d, n.id) for d in defs[n.id]]
    return read


def answer_is_stub(cells: Sequence[str], function: str) -> bool:
    """Whether the last readable top-level binding of ``function`` is still the template's stub: a
    ``def`` whose body, past a docstring, ``pass`` and ``...``, only raises NotImplementedError.
    Read from text, as the grader reads rules: a value an unanswered exercise's process sends is not
    an answer (docs/threat-model.md)."""
    last = None
    for source in cells:
        _, tree = _cell_tree(source)
        for node in getattr(tree, "body", []) if tree is not None else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = {node.name}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound = {a.asname or a.name.split(".")[0] for a in node.names}
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            else:
                continue
            if function in bound:
                last = node
    if not isinstance(last, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = [
        n
        for n in last.body
        if not (
            isinstance(n, ast.Pass)
            or (
                isinstance(n, ast.Expr)
                and isinstance(n.value, ast.Constant)
                and (isinstance(n.value.value, str) or n.value.value is Ellipsis)
            )
        )
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def given_names(release_cells: Sequence[str]) -> frozenset[str]:
    """The functions and classes the course's own code cells define at top level (a helper the
    checks call, such as 01's run_embedding_layer)."""
    out = set()
    for source in release_cells:
        _, tree = _cell_tree(source)
        for node in getattr(tree, "body", []) if tree is not None else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
    return frozenset(out)


def rebinds(cells: Sequence[str], name: str, course: frozenset[str]) -> bool:
    """Whether a cell binds ``name`` anywhere (a def, a class, an import, an assignment target, a
    ``global`` of it) in a statement that is not one of the course's own (``course_statements``):
    a check that calls a helper the course gives would run the notebook's instead (white-box red
    team 25, E7: 01's run_embedding_layer bound again to a formula, with EmbeddingLayer left as the
    stub, earned the exercise)."""
    for source in cells:
        _, tree = _cell_tree(source)
        for st in getattr(tree, "body", []) if tree is not None else []:
            if ast.dump(st) in course:
                continue
            for node in ast.walk(st):
                if (
                    (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
                    and node.id == name
                    or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and node.name == name
                    or isinstance(node, ast.alias)
                    and (node.asname or node.name.split(".")[0]) == name
                    or isinstance(node, (ast.Global, ast.Nonlocal))
                    and name in node.names
                ):
                    return True
    return False


def _string_code(cells: Sequence[str], scanner: "_Scanner") -> list[Violation]:
    """Every call anywhere in the notebook that runs a string as code (STRING_CODE)."""
    out: list[Violation] = []
    for index, source in enumerate(cells):
        code, tree = _cell_tree(source)
        lines = code.splitlines()
        for node in ast.walk(tree) if tree is not None else ():
            parts = _dotted(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
            full = scanner.resolve(parts) if parts else None
            if full in STRING_CODE and not isinstance(getattr(node, "ctx", None), ast.Store):
                line = getattr(node, "lineno", 0)
                out.append(
                    Violation(
                        line,
                        lines[line - 1].strip() if 0 < line <= len(lines) else "",
                        f"{full.removeprefix('builtins.')}() anywhere in the notebook (code run "
                        "from a "
                        "string can rebind what this answer calls: the grader cannot read it)",
                        f"code cell {index + 1}",
                    )
                )
    return out


def function_violations(fn: Any, forbidden: Sequence[str]) -> list[Violation]:
    """``violations`` of a live function's source, names resolved in its globals, and of the
    functions of its own module that it names (a notebook's helpers), followed transitively; [] if
    its source is unknown."""
    if not forbidden:
        return []
    names, _, objects = _canonical(forbidden)
    # the forbidden function itself, imported as the answer
    if id(fn) in objects or _object_name(fn) in names:
        rule = objects.get(id(fn)) or _object_name(fn)
        return [Violation(0, getattr(fn, "__name__", "?"), rule)]
    found: list[Violation] = []
    todo, seen = [fn], set()
    while todo and len(seen) < MAX_HELPERS:
        f = todo.pop(0)
        if id(f) in seen:
            continue
        seen.add(id(f))
        if not isinstance(f, types.FunctionType):
            # a class, or a callable object: its methods hold the code (a class's own source is not
            # always available in a notebook; its functions' are)
            cls = f if isinstance(f, type) else type(f)
            # classmethods and staticmethods too (a tensor subclass's __torch_function__ is a
            # classmethod: threat model, white-box red team 21, B10)
            members = [
                m.__func__ if isinstance(m, (classmethod, staticmethod)) else m
                for m in vars(cls).values()
            ]
            todo += [m for m in members if isinstance(m, types.FunctionType) and id(m) not in seen]
            continue
        src = _source(f)
        if src is None:
            # a function of the notebook's that has no text: made by exec or eval from a string, or
            # run from a file that is gone, which the grader's reading cannot follow either; the
            # answer itself too: its name rebound at run time to such a function is not the text the
            # grader read (white-box red team 21, B1 and B4)
            found.append(
                Violation(
                    0,
                    getattr(f, "__name__", "?"),
                    "a function made from a string (the grader cannot read what it does)",
                )
            )
            continue
        if src is None or (tree := _parse(src)) is None:
            continue
        namespace = getattr(f, "__globals__", None)
        # one parse per function: read for uses, then for helpers
        scanner = _Scanner(forbidden, namespace)
        scanner.learn(tree)
        found += sorted(
            scanner.find(tree, src.splitlines(), "" if f is fn else getattr(f, "__name__", "?")),
            key=lambda v: (v.line, v.rule),
        )
        if namespace is None:
            continue
        for n in ast.walk(tree):
            g = namespace.get(n.id) if isinstance(n, ast.Name) else None
            for h in _functions_in(g):
                if (
                    getattr(h, "__module__", None) == getattr(fn, "__module__", 0)
                    and id(h) not in seen
                ):
                    todo.append(h)
    return found


def _contents(obj: Any) -> list:
    """What a container holds (a dict's values, a list's, tuple's or set's items, a
    functools.partial's function and arguments, an instance's own attributes when its class is the
    notebook's; 1,000 at most), or [] for anything else: where a bound value can hide a function."""
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, dict):
        return list(obj.values())[:1000]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)[:1000]
    cls = type(obj)
    if type(cls) is type and vars(cls).get("__module__") == "__main__":
        # an instance of a class of the notebook's: setattr(box, "f", helper) hides helper there
        # (C7); its attributes read through the interpreter's own descriptor, so none of the class's
        # code runs
        slot = next((vars(c)["__dict__"] for c in cls.__mro__ if "__dict__" in vars(c)), None)
        if (
            type(slot).__name__ == "getset_descriptor"
            and type(own := slot.__get__(obj, cls)) is dict
        ):
            return list(own.values())[:1000]
    return []


def _functions_in(obj: Any, depth: int = 0) -> list:
    """Functions and classes in ``obj`` itself, or inside it (a dict, list, tuple, set or
    functools.partial)."""
    if isinstance(obj, (types.FunctionType, type)):
        return [obj]
    if depth > 3:
        return []
    return [f for item in _contents(obj) for f in _functions_in(item, depth + 1)]


def _source(fn: Any) -> str | None:
    import inspect
    import textwrap

    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):  # built in, or made by exec from a string: nothing to read
        return _timed_source(fn)


def _timed_source(fn: Any) -> str | None:
    """The text of a function a ``%%time`` cell defined, or None: IPython compiles such a body under
    the name '<timed exec>', which inspect cannot read, so it is taken from the kernel's input
    history (white-box red team 23, D11: an honest answer timed with %%time read as "a function made
    from a string")."""
    import inspect
    import textwrap

    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename != "<timed exec>":
        return None
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    for cell in reversed(list(getattr(shell, "user_ns", {}).get("_ih", []))):
        tree = _parse(cell) if "run_cell_magic" in cell else None
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run_cell_magic"
                and len(node.args) == 3
                and all(isinstance(a, ast.Constant) for a in node.args)
                and node.args[0].value == "time"
                and isinstance(node.args[2].value, str)
            ):
                lines = node.args[2].value.splitlines(keepends=True)[code.co_firstlineno - 1 :]
                text = textwrap.dedent("".join(inspect.getblock(lines))) if lines else ""
                body = _parse(text)
                if body is not None and any(
                    isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == fn.__name__
                    for d in ast.walk(body)
                ):
                    return text
    return None
