"""Rules an exercise's text sets ("do not use torch.softmax"), enforced on the answer's source code.

A check declares the calls its exercise forbids as dotted names (``Check.forbidden``)::

    Check("softmax", "softmax", ..., forbidden=("torch.softmax", "torch.nn.functional.softmax",
                                                "torch.special.softmax", "Tensor.softmax"))

``violations(source, forbidden)`` reads the code without running it and finds every use of a forbidden name
through any alias: ``import torch as t; t.softmax``, ``from torch.nn import functional as F; F.softmax``,
``from torch import softmax as sm``, ``f = torch.softmax``, ``getattr(torch, "softmax")``,
``"Tensor.softmax"`` names a tensor method: any ``<expression>.softmax`` whose base is not a module alias.

What a reading of the text cannot follow is a violation of every rule too: a name computed at run time
(``getattr`` with a computed name, ``vars()``, ``globals()``, ``__dict__``, ``eval``/``exec``, ``__import__``,
``importlib``, ``operator.methodcaller``/``attrgetter``, ``sys.modules``), and the private or operator-level
names under a forbidden name's package (``torch._softmax``, ``torch.ops.aten._log_softmax``, ``torch._C``):
the same kernels under names no list can hold.
With ``namespace`` (the function's globals, in a notebook), names bound in other cells are resolved too.

Two readings of one answer, which must agree: in the notebook, ``function_violations(fn, ...)`` reads the
live function with its globals; in the grader, ``notebook_violations(cells, name, ...)`` reads the submitted
cells' text (no live objects: aliases come from every cell). Both follow the notebook's own functions that
the answer names (a helper that calls ``torch.softmax`` breaks the rule too), and each finding names its line.
"""

from __future__ import annotations

import ast
import builtins
import functools
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
        of = self.function if " " in self.function else f"{self.function}()"  # "code cell 3" or a helper
        where = f"line {self.line} of {of}" if self.function else f"line {self.line}"
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
    short = getattr(obj, "__name__", None)
    if isinstance(mod, str) and isinstance(short, str) and getattr(sys.modules.get(mod), short, None) is obj:
        return f"{mod}.{short}"  # the public name (torch.exp), not the implementation's (torch._VariableFunctionsClass.exp)
    if isinstance(mod, str) and isinstance(name, str):
        return f"{mod}.{name}"
    return None


def _canonical(forbidden: Sequence[str]) -> tuple[set[str], set[str], dict[int, str]]:
    """(dotted names, tensor-method names, {id(live object): rule}) for the forbidden list (``pkg.*`` entries,
    whole packages, are read by ``_Scanner`` itself)."""
    names, methods, objects = set(), set(), {}
    for f in forbidden:
        if f.endswith(".*"):
            continue
        if f.startswith("Tensor."):
            methods.add(f.split(".", 1)[1])
            continue
        names.add(f)
        mod, _, attr = f.rpartition(".")
        m = sys.modules.get(mod)
        if m is not None and hasattr(m, attr):
            objects[id(getattr(m, attr))] = f
    return names, methods, objects


# names that run strings as code or find objects by strings: a reading of the text cannot follow them. The
# first group breaks any rule, even a package rule alone (`course_lib.checks.*`, which the grader sets on every
# answer: the checks' own cases and expected values are no answer); the rest only rules that name calls.
# getattr with a computed name, vars() and globals() are not among them: honest code writes
# getattr(torch, dtype_name) (a blind class did, and lost the exercise); a forbidden routine reached that way is
# found when it runs (engine.Check.forbidden_ops, course_lib.checks.trace)
UNIVERSAL = {"builtins.eval", "builtins.exec", "builtins.compile", "builtins.__import__", "importlib.import_module",
             "importlib.__import__", "sys.modules", "builtins.get_ipython", "IPython.get_ipython",
             "IPython.core.getipython.get_ipython", "IPython.core.interactiveshell.InteractiveShell.get_ipython"}
DYNAMIC = {"builtins.eval": "eval()",
           "builtins.exec": "exec()", "builtins.compile": "compile()", "builtins.__import__": "__import__()",
           "importlib.import_module": "importlib.import_module", "importlib.__import__": "importlib.__import__",
           "sys.modules": "sys.modules", "pickle.loads": "pickle.loads", "marshal.loads": "marshal.loads",
           "pkgutil.resolve_name": "pkgutil.resolve_name", "runpy.run_path": "runpy.run_path",
           "runpy.run_module": "runpy.run_module",
           # IPython runs strings as code (run_cell, ev, ex): under any of the names it is reached by
           "builtins.get_ipython": "get_ipython()", "IPython.get_ipython": "get_ipython()",
           "IPython.core.getipython.get_ipython": "get_ipython()",
           "IPython.core.interactiveshell.InteractiveShell.get_ipython": "get_ipython()"}
# what switches off the run-time checks (trace.Watch's profile hook, the engine's line counter): no answer needs it
HOOKS = {"sys.setprofile": "sys.setprofile", "sys.settrace": "sys.settrace", "threading.setprofile": "threading.setprofile",
         "threading.settrace": "threading.settrace", "sys.monitoring": "sys.monitoring",
         "torch.utils._python_dispatch._pop_mode": "popping torch's dispatch mode"}
# calls that turn a string into running code: anywhere in a notebook (not only where an answer reaches) they
# break every rule, since that code can rebind any name an answer calls (a softmax that switched the watch off,
# defined in a cell that ran exec(base64...), and an answer that called it by a name bound nowhere in text:
# test_contracts.py::test_code_run_from_a_string_anywhere_in_the_notebook_breaks_the_rule)
STRING_CODE = {"builtins.eval", "builtins.exec", "builtins.compile", "pickle.loads", "marshal.loads",
               "runpy.run_path", "runpy.run_module", "types.FunctionType", "types.CodeType",
               # TorchScript compiled from a string (scaled_dot_product_attention run that way:
               # test_contracts.py::test_torchscript_compiled_from_a_string_breaks_the_rule)
               "torch.jit.CompilationUnit", "torch.jit.CompilationUnit.define", "torch.jit.frontend.get_jit_def"}
DUNDER_LOOKUPS = {"__dict__", "__builtins__", "__globals__", "__code__"}
UNIVERSAL_DUNDERS = {"__dict__", "__builtins__", "__globals__"}
BUILTINS = {full.split(".", 1)[1] for full in DYNAMIC if full.startswith("builtins.")} | {"getattr"}


def _strip_magics(source: str) -> str:
    """The cell as the Python IPython runs (``x = !ls`` is a call), so that it parses as it ran; without IPython,
    `%magic` and `!shell` lines blanked. Line numbers are kept either way."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # odd line endings: IPython warns, then transforms as best it can
            return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - IPython could not transform it: the kernel could not run it either
        return source


class _Scanner:
    """Aliases learned from code, and the forbidden uses found in it (see the module docstring)."""

    def __init__(self, forbidden: Sequence[str], namespace: Mapping[str, Any] | None) -> None:
        self.names, self.methods, self.objects = _canonical(forbidden)
        self.packages = {f[:-2] for f in forbidden if f.endswith(".*")}
        self.strict = bool(self.names or self.methods)  # the rule names calls, not only packages
        # packages whose private and operator-level names count as the forbidden ones (torch._softmax, torch.ops)
        self.roots = {f.split(".")[0] for f in self.names}
        self.namespace = namespace
        self.alias: dict[str, str] = {}   # local name -> dotted name it stands for
        self.taint: dict[str, str] = {}   # module-level name bound to a value built from a forbidden one -> rule
        self.links: dict[str, set[str]] = {}  # module-level name -> the names its value was built from

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
        if head in BUILTINS and (namespace is None or head not in namespace):
            return ".".join(["builtins"] + parts)
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
                elif (isinstance(node.value, ast.Call) and self.is_getattr(node.value.func)
                      and len(node.value.args) >= 2 and isinstance(node.value.args[1], ast.Constant)):
                    base = _dotted(node.value.args[0])
                    if base and (full := self.resolve(base)) is not None:
                        alias[node.targets[0].id] = f"{full}.{node.value.args[1].value}"

    def learn_bindings(self, tree: ast.AST) -> None:
        """Module-level names bound to anything built from a forbidden name (``OPS = {"sm": torch.softmax}``,
        ``partial(torch.softmax)``, ``(sm := torch.softmax)``, ``for``/``with`` targets, unpacking): using such
        a name uses the forbidden one. Function and class bodies are their own scopes and are not read here."""
        for target, value in _bindings(tree):
            used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    self.links.setdefault(n.id, set()).update(used)
            parts = _dotted(value)
            if isinstance(target, ast.Name) and parts and (full := self.resolve(parts)) is not None:
                self.alias[target.id] = full  # `a, b = x.y, z.w`, `(a := x.y)`: aliases, read where they are used
                continue
            rules = {v.rule for v in self.find(value, [])}
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    if rules:
                        self.taint[n.id] = sorted(rules)[0]
                    elif isinstance(target, ast.Name):
                        self.taint.pop(n.id, None)  # bound again to something clean, in a later cell
                    # (`box.g = 0` after `box.f = np.logaddexp` leaves box holding the forbidden one)
        self.learn_calls(tree)

    def learn_calls(self, tree: ast.AST) -> None:
        """Links a module-level call makes: ``setattr(box, "f", helper)``, ``box.append(helper)``,
        ``register(box, helper)`` may leave ``helper`` inside ``box``, so each name the call is given (and the
        object whose method it calls) is linked to every name in its arguments, and holds a forbidden name
        found there (white-box red team 22, C7: a helper reached through ``setattr`` on an instance)."""
        for call in _module_level_calls(tree):
            given = [*call.args, *(k.value for k in call.keywords)]
            used = {n.id for a in given for n in ast.walk(a) if isinstance(n, ast.Name)}
            holders: set[str] = set()
            stores = False  # the call puts what it is given into the holder (setattr, a holder's method)
            if isinstance(call.func, ast.Attribute) and (root := _root_name(call.func.value)) is not None:
                if root not in self.alias and root not in sys.modules:  # a module stores nothing of the notebook's
                    holders, stores = {root}, True  # box.append(helper), box.__setattr__(...)
            elif isinstance(call.func, ast.Name) and (call.func.id == "setattr"
                                                      or call.func.id not in vars(builtins)):
                # setattr(box, "f", helper), or a function of the notebook's that may store what it is given;
                # print(...) and the other builtins store nothing
                holders = {a.id for a in given if isinstance(a, ast.Name) and a.id not in self.alias}
                stores = call.func.id == "setattr"
            # a forbidden function handed over itself (not a value computed with it: print(torch.softmax(x)))
            rules = {v.rule for a in given if not isinstance(a, ast.Call) for v in self.find(a, [])} if stores else set()
            for h in holders:
                self.links.setdefault(h, set()).update(used - {h})
                if rules:
                    self.taint[h] = sorted(rules)[0]

    def _holds(self, obj: Any, depth: int = 0) -> str | None:
        """The rule of a forbidden object inside ``obj`` (a dict, list, tuple, set or functools.partial)."""
        if id(obj) in self.objects and depth:
            return self.objects[id(obj)]
        if depth > 3:
            return None
        return next((r for item in _contents(obj) if (r := self._holds(item, depth + 1)) is not None), None)

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
        private = [p for p in parts[1:] if (p.startswith("_") and not p.endswith("__")) or (p == "ops" and parts[0] == "torch")]
        if parts[0] in self.roots and private:
            return f"{parts[0]}'s private or operator-level functions ({full})"
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

        constant_getattr = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and len(n.args) >= 2
                            and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)}
        local = _locals(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                if node.id in self.taint:
                    add(node, self.taint[node.id])
                elif self.namespace is not None and node.id in self.namespace and node.id not in self.alias:
                    if (rule := self._holds(self.namespace[node.id])) is not None:  # the live twin of taint
                        add(node, rule)
            if isinstance(node, ast.Attribute) and node.attr in (DUNDER_LOOKUPS if self.strict else UNIVERSAL_DUNDERS):
                add(node, f"a lookup through {node.attr}")
            # a bare name the function binds itself (a parameter `check`) is its own value, not the import of that
            # name (threat model, white-box red team 21, B13: an honest helper lost its exercise); a chain rooted
            # at one (`torch.softmax` with a parameter `torch`) is still read through the imports
            own = isinstance(node, ast.Name) and node.id in local
            if isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store) \
                    and not own:
                parts = _dotted(node)
                full = self.resolve(parts) if parts else None
                if (full in DYNAMIC and (self.strict or full in UNIVERSAL)
                        and not (full == "builtins.getattr" and id(node) in constant_getattr)):
                    add(node, f"{DYNAMIC[full]} (the grader cannot tell which function it reaches)")
                if full in HOOKS or (full or "").startswith("sys.monitoring."):
                    add(node, f"{HOOKS.get(full, 'sys.monitoring')} (it switches off the checks that watch your "
                              "function run)")
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                for a in node.names:
                    full = f"{node.module}.{a.name}" if isinstance(node, ast.ImportFrom) else a.name
                    if rule := self.matches(full):
                        add(node, rule)
            elif isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store) \
                    and not own:
                parts = _dotted(node)
                full = self.resolve(parts) if parts else None
                if full is not None and (rule := self.matches(full)):
                    add(node, rule)
                elif isinstance(node, ast.Attribute) and node.attr in self.methods:
                    base = _dotted(node.value)
                    base_full = self.resolve(base) if base else None
                    if base_full is None or base_full.endswith("Tensor"):  # an expression, i.e. a tensor
                        add(node, f"Tensor.{node.attr}")
            elif (isinstance(node, ast.Call) and self.is_getattr(node.func) and len(node.args) >= 2
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
                base = _dotted(node.args[0])
                full = self.resolve(base) if base else None
                if full is not None and (rule := self.matches(f"{full}.{node.args[1].value}")):
                    add(node, rule)
                elif node.args[1].value in self.methods and full is None:
                    add(node, f"Tensor.{node.args[1].value}")
        return found


def _locals(tree: ast.AST) -> set[str]:
    """Names a function binds itself (parameters, assignments): they hide module-level names of the same name."""
    if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return set()
    a = tree.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]}
    body = tree.body if isinstance(tree.body, list) else [tree.body]
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
    return names


def _bindings(tree: ast.AST):
    """(target, value) of every module-level binding in ``tree``, compound statements included, function and
    class bodies not; unpacking pairs targets with values where both are tuples or lists of one length."""
    def pairs(target: ast.AST, value: ast.AST):
        if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                and len(target.elts) == len(value.elts)):
            for t, v in zip(target.elts, value.elts):
                yield from pairs(t, v)
        else:
            yield target, value

    def walrus(node: ast.AST):
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, ast.NamedExpr):
                yield n.target, n.value
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.extend(ast.iter_child_nodes(n))

    todo = list(getattr(tree, "body", []))
    while todo:
        st = todo.pop(0)
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.Assign):
            for t in st.targets:
                yield from pairs(t, st.value)
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)) and st.value is not None:
            yield st.target, st.value
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            yield st.target, st.iter
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                if item.optional_vars is not None:
                    yield item.optional_vars, item.context_expr
        yield from walrus(st)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(x for x in getattr(st, field, []) if isinstance(x, (ast.stmt, ast.excepthandler)))


def _root_name(node: ast.AST) -> str | None:
    """``box`` of ``box.items[0].f``: the name an attribute or subscript chain starts from, or None."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _module_scope(tree: ast.AST):
    """Every node of the module's own scope, in the text's order: compound statements included; a function, class
    or lambda is yielded but not entered (its body is its own scope, read when something reaches it)."""
    todo = list(reversed(getattr(tree, "body", [])))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _module_level_calls(tree: ast.AST):
    """Every call made by module-level code (``_module_scope``)."""
    return (node for node in _module_scope(tree) if isinstance(node, ast.Call))


def _other_bindings(tree: ast.AST, name: str) -> list[ast.AST]:
    """The module-level nodes, in order, that bind ``name`` other than as a top-level statement of the cell
    (``notebook_violations`` reads those): a ``def``/``class``/assignment/import inside a compound statement, a
    name among unpacked targets, a ``for`` or ``with`` target, a walrus. For a binding by value, the node is the
    statement or expression whose text holds what is bound."""
    out: list[ast.AST] = []
    top = set(map(id, getattr(tree, "body", [])))
    for node in _module_scope(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if getattr(node, "name", None) == name and id(node) not in top:
                out.append(node)
            continue
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
        elif isinstance(node, ast.NamedExpr):
            targets = [node.target]
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                out.append(node)
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)) and not (
                id(node) in top and isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            out.append(node)
    return out


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


@functools.lru_cache(maxsize=2048)
def _cell_tree(source: str) -> tuple[str, ast.AST | None]:
    """(the cell as IPython runs it, its syntax tree or None): the grader reads one notebook for every check."""
    code = _strip_magics(source)
    return code, _parse(code)


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
    rebinders: list[str] = []  # functions that say `global <the answer>`: what they bind is the answer too
    for source in cells:
        code, tree = _cell_tree(source)
        if tree is None:
            continue
        scanner.learn(tree)
        scanner.learn_bindings(tree)
        for node in getattr(tree, "body", []):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs[node.name] = (node, code.splitlines())
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                  and (isinstance(node.value, ast.Lambda) or node.targets[0].id == function)):
                defs[node.targets[0].id] = (node, code.splitlines())
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name.split(".")[0]) == function for a in node.names):
                defs[function] = (node, code.splitlines())   # `from course_lib.generate import greedy`
        # the answer's name bound anywhere else at module level (inside `if`/`for`/`with`/`try`, by unpacking, a
        # `for` or `with` target, a walrus): the last such binding in the notebook's order is the answer too
        # (white-box red team 22, C9: a function saying `global softmax` rebound the answer; the variants here)
        for node in _other_bindings(tree, function):
            defs[function] = (node, code.splitlines())
        for node in getattr(tree, "body", []):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                    isinstance(g, ast.Global) and function in g.names for g in ast.walk(node)):
                rebinders.append(node.name)
    if function not in defs:
        # bound some other way (exec of a string, globals()[...] =, a loop): there is no text to read
        return [Violation(0, function, "an answer defined where the grader cannot read it (not by a def, a class "
                          "or an assignment at the top of a cell that parses)")]
    found: list[Violation] = []
    todo, seen = [function, *rebinders], set()
    while todo and len(seen) < MAX_HELPERS:
        name = todo.pop(0)
        if name in seen or name not in defs:
            continue
        seen.add(name)
        node, lines = defs[name]
        found += scanner.find(node, lines, "" if name == function else name)
        # the notebook's functions it names, directly or through a module-level value built from them
        # (OPS = {"sm": helper}: OPS["sm"](x) calls helper)
        names, reached = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)], set()
        while names:
            n = names.pop()
            if n in reached:
                continue
            reached.add(n)
            if n in defs and n not in seen:
                todo.append(n)
            names += scanner.links.get(n, ())
    if not found:
        found += _string_code(cells, scanner)[:1]  # one is enough
    return found


def answer_is_stub(cells: Sequence[str], function: str) -> bool:
    """Whether the last readable top-level binding of ``function`` is still the template's stub: a ``def`` whose
    body, past a docstring, ``pass`` and ``...``, only raises NotImplementedError. Read from text, as the grader
    reads rules: a value an unanswered exercise's process sends is not an answer (docs/threat-model.md)."""
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
    body = [n for n in last.body if not (isinstance(n, ast.Pass) or (
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        and (isinstance(n.value.value, str) or n.value.value is Ellipsis)))]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


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
                out.append(Violation(line, lines[line - 1].strip() if 0 < line <= len(lines) else "",
                                     f"{full.removeprefix('builtins.')}() anywhere in the notebook (code run from a "
                                     "string can rebind what this answer calls: the grader cannot read it)",
                                     f"code cell {index + 1}"))
    return out


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
        if not isinstance(f, types.FunctionType):
            # a class, or a callable object: its methods hold the code (a class's own source is not always
            # available in a notebook; its functions' are)
            cls = f if isinstance(f, type) else type(f)
            # classmethods and staticmethods too (a tensor subclass's __torch_function__ is a classmethod: threat
            # model, white-box red team 21, B10)
            members = [m.__func__ if isinstance(m, (classmethod, staticmethod)) else m for m in vars(cls).values()]
            todo += [m for m in members if isinstance(m, types.FunctionType) and id(m) not in seen]
            continue
        src = _source(f)
        if src is None:
            # a function of the notebook's that has no text: made by exec or eval from a string, or run from a
            # file that is gone, which the grader's reading cannot follow either; the answer itself too: its
            # name rebound at run time to such a function is not the text the grader read (white-box red team
            # 21, B1 and B4)
            found.append(Violation(0, getattr(f, "__name__", "?"), "a function made from a string (the grader "
                                   "cannot read what it does)"))
            continue
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
            for h in _functions_in(g):
                if getattr(h, "__module__", None) == getattr(fn, "__module__", 0) and id(h) not in seen:
                    todo.append(h)
    return found


def _contents(obj: Any) -> list:
    """What a container holds (a dict's values, a list's, tuple's or set's items, a functools.partial's function
    and arguments, an instance's own attributes when its class is the notebook's; 1,000 at most), or [] for
    anything else: where a bound value can hide a function."""
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, dict):
        return list(obj.values())[:1000]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)[:1000]
    cls = type(obj)
    if type(cls) is type and vars(cls).get("__module__") == "__main__":
        # an instance of a class of the notebook's: setattr(box, "f", helper) hides helper there (C7); its
        # attributes read through the interpreter's own descriptor, so none of the class's code runs
        slot = next((vars(c)["__dict__"] for c in cls.__mro__ if "__dict__" in vars(c)), None)
        if type(slot).__name__ == "getset_descriptor" and type(own := slot.__get__(obj, cls)) is dict:
            return list(own.values())[:1000]
    return []


def _functions_in(obj: Any, depth: int = 0) -> list:
    """Functions and classes in ``obj`` itself, or inside it (a dict, list, tuple, set or functools.partial)."""
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
        return None
