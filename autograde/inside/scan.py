"""A static scan of a submission for code that tampers with grading.

Each flag names a pattern and the cell it was found in, so that an instructor can look. Legitimate
code can trip a flag (a student exploring `subprocess` out of curiosity): the CSV shows the flags
and the status asks for a manual look, while the score is still decided by the checks (in and out of
the kernel).

A few patterns do more than flag (``tampering``): code that reaches into the process that checks the
answers (its callers' frames, its file descriptors by number, the checks' own modules, code objects,
the module table, a library's attributes rebound) has no place in an answer, and the answers'
results from such a notebook cannot be trusted, since that process is the notebook's own (a
white-box red team wrote the checks' output itself from a cell). The grader's reading of the text
(autograde.intake) then fails every check of the notebook outside the kernel, with the patterns
named; an instructor can give the points back.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import unicodedata

from autograde.inside.cells import NEUTRAL_CELL_MAGICS, NEUTRAL_MAGICS

# Modules whose attributes a notebook has no business replacing: the libraries the tests compare
# with.
GUARDED_MODULES = {
    "np",
    "numpy",
    "torch",
    "builtins",
    "math",
    "sys",
    "os",
    "nbgrader",
    "course_lib",
    "autograde",
    "json",
    "io",
}
FORBIDDEN_IMPORTS = {
    "sqlite3": "opens databases (the gradebook is one)",
    "subprocess": "starts processes",
    "ctypes": "calls C functions directly",
    "multiprocessing": "starts processes",
    "signal": "changes signal handling",
    "pty": "starts processes",
    "nbgrader": "imports the grader",
    "gc": "walks the interpreter's objects (the checks' own among them)",
}
FORBIDDEN_CALLS = {
    "os._exit": "kills the kernel",
    "os.kill": "signals other processes",
    "os.fork": "forks",
    "os.system": "runs shell commands",
    "os.popen": "runs shell commands",
    "os.execv": "replaces the process",
    "os.execvp": "replaces the process",
    "os.setsid": "escapes the process group",
    "get_ipython": "reaches into the kernel",
}
INTROSPECTION_MODULES = {"inspect", "gc", "types", "traceback", "F", "nn", "functional"}
# settings a notebook may set (a blind class set these for reproducibility and was flagged for it)
ALLOWED_ASSIGNMENTS = (
    "torch.backends.cudnn.",
    "torch.backends.cuda.matmul.",
    "torch.backends.mps.",
    "np.random.seed",
    "numpy.random.seed",
)
TEXT_PATTERNS = {  # label -> (regex, why)
    "input/ast transformers": (
        r"input_transformers|ast_transformers|register_transformer",
        "rewrites later cells before they run",
    ),
    # (not a membership test that ends the expression: `"google.colab" in sys.modules`)
    "sys.modules": (
        r"sys\.modules(?!\s*(?:$|[\n):,\]]|\bor\b|\band\b|\bif\b|\belse\b))"
        r"|(?<!\bin )(?<!\bin  )sys\.modules",
        "edits the module table",
    ),
    "gradebook": (r"gradebook|\.db\b", "mentions the gradebook"),
    "solutions/ or source/": (
        r"solutions/|/source/|autograded/",
        "reads instructor or other students' files",
    ),
    # the checks keep what they observe (routines used, lines run) in objects on the caller's stack:
    # code that walks frames can reach and empty them (a scrubbed record of a forbidden softmax:
    # test_scan.py::test_red_team_16s_watch_scrub_is_flagged)
    "frame introspection": (
        r"\b(currentframe|_getframe|f_back|f_locals|f_globals|tb_frame|gi_frame|cr_frame|"
        r"ag_frame|gi_code|cr_code|ag_code|f_trace|f_trace_lines|f_trace_opcodes|"
        r"get_referrers|get_referents|get_objects|exc_info|__traceback__|walk_stack|walk_tb|"
        r"extract_stack)\b|inspect\.(stack|trace)\b",
        "reaches the callers' frames, where the checks keep what they observed",
    ),
    # the checks run in the answer's process: a notebook that reaches their modules can change what
    # they observe (engine._watch rebound, Watch.saw replaced; the grader's verification also seals
    # them, autograde.verify). The notebooks' own set-up cells import check, check_all and tiny_lm
    # from course_lib.checks: not flagged
    "the checks' own modules": (
        r"course_lib\.checks\.(engine|trace|rules)\b|\bimport\s+course_lib\.checks\b|"
        r"from\s+course_lib\.checks\s+import\s+[^\n]*\b(engine|trace|rules|Watch|_\w+|VISIBLE|"
        r"Registry|run_encoded|encode_cases|run_cases|evaluate|judge|decode|encode|Outcome|"
        r"HISTORY|loads|dumps)\b|\bcourse_lib\.checks\b(?!(\.\w+)?\s+import\b)(?!\.(check|check_all)\()|"
        r"from\s+course_lib\s+import\s+[^\n]*\bchecks\b|"
        r"\b(__globals__|__closure__|cell_contents)\b",
        "reaches into the checks' own code, which observes the answer in its process",
    ),
    # functions rebuilt from another function's code (a forbidden library function copied under
    # a new name: code.replace(co_name=...) through dis.Bytecode(f).codeobj, then type(f)(code,
    # globals))
    "code objects": (
        r"\b(codeobj|co_code|co_consts|co_names|co_name|co_qualname|CodeType|FunctionType|__code__)\b|"
        r"\bimport\s+dis\b|\bfrom\s+dis\s+import\b|\bdis\.\w",
        "builds or copies functions from code objects, which hides what they are",
    ),
    # the cost checks count lines under a tracer: code that looks for one can run a loop only when
    # unwatched
    "tracing hooks": (
        r"\b(gettrace|getprofile|settrace|setprofile|tracemalloc)\b",
        "looks at or changes Python's tracing hooks, which the cost checks use",
    ),
    # the checking process speaks to the grader through file descriptors: a white-box red team found
    # its output pipe by file type and wrote the checks' results itself, and read the hidden inputs
    # from standard input
    "file descriptors": (
        r"\bos\.(read|write|pread|pwrite|readv|writev|fdopen|dup|dup2|fstat|sendfile|lseek|"
        r"set_blocking|get_blocking)\s*\(|/proc/(self|\d+|\{[^}]*\})/fd|/dev/fd\b|"
        r"\bopen\(\s*\d+\s*[,)]|\.fileno\s*\(|\bsys\.(stdin|__stdin__)\b",
        "reads or writes file descriptors by number: the grader's own pipes are descriptors",
    ),
    # a cell that asks whether it runs in the grader's checking process can behave there unlike
    # anywhere else
    "command line": (
        r"\bsys\.(argv|orig_argv)\b|/proc/(self|\d+)/cmdline\b",
        "reads its process's command line: answers that behave differently when checked",
    ),
}

# Flags whose code reaches into the process that checks the answers: every check of the notebook
# fails outside the kernel (``tampering``). Frames: the patterns by which a cell reaches its callers
# (not exc_info or a traceback, which honest error handling uses).
# An async generator's frame (ag_frame) and a frame's trace switches (f_trace, f_trace_lines) turn
# the line counter off for one frame: white-box red team 23, D6
# (test_scan.py::test_a_frame_s_trace_switches_are_tampering).
TAMPERING_FRAMES = (
    r"\b(currentframe|_getframe|f_back|f_locals|f_globals|tb_frame|gi_frame|cr_frame|ag_frame|"
    r"gi_code|cr_code|ag_code|f_trace|f_trace_lines|f_trace_opcodes|get_referrers|"
    r"get_referents|get_objects)\b|inspect\.(stack|trace)\b"
)
TAMPERING = (
    "the checks' own modules:",
    "code objects:",
    "sys.modules:",
    "input/ast transformers:",
    "file descriptors:",
    "command line:",
    "assigns ",
    "setattr(): may patch",
    "delattr(): may patch",
)


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def code_text(source: str) -> str:
    """The cell's text without its comments and docstrings (an expression statement that is only a
    string), line numbers kept: what the text patterns read, since neither runs (white-box red team
    23, D10: a comment saying "torch is already in sys.modules" failed every check of an honest
    notebook). A cell that does not tokenize or parse is returned whole (the stricter reading)."""
    import io
    import tokenize

    from course_lib.checks.rules import _strip_magics

    lines = source.splitlines(keepends=True)
    # (first line, first col, last line, end col), 1-based lines
    blank: list[tuple[int, int, int, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                blank.append((tok.start[0], tok.start[1], tok.end[0], tok.end[1]))
        tree = ast.parse(_strip_magics(source))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return source

    # ast's offsets count UTF-8 bytes; the text counts characters
    def column(line: int, offset: int) -> int:
        return (
            len(lines[line - 1].encode()[:offset].decode(errors="ignore"))
            if 0 < line <= len(lines)
            else -1
        )

    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            last = node.end_lineno or node.lineno
            blank.append(
                (
                    node.lineno,
                    column(node.lineno, node.col_offset),
                    last,
                    column(last, node.end_col_offset or 0),
                )
            )
    for first, col, last, end in sorted(blank, reverse=True):
        if not 0 < first <= last <= len(lines):
            # positions that do not match the text (a transform moved them): read it whole
            return source
        if first == last:
            lines[first - 1] = lines[first - 1][:col] + " " * (end - col) + lines[first - 1][end:]
        else:
            lines[first - 1] = lines[first - 1][:col] + "\n"
            for k in range(first, last - 1):
                lines[k] = "\n"
            lines[last - 1] = " " * end + lines[last - 1][end:]
    return "".join(lines)


def scan_source(source: str) -> list[str]:
    """Flags (pattern: why) found in one cell's source; a cell that does not parse is scanned as
    text only."""
    # Python reads identifiers as their NFKC form (fullwidth `ｅｎｇｉｎｅ` is `engine`): so do the
    # patterns (threat model, white-box red team 21, B5)
    source = unicodedata.normalize("NFKC", source)
    flags = []
    text = code_text(source)
    for label, (pattern, why) in TEXT_PATTERNS.items():
        if re.search(pattern, text):
            flags.append(f"{label}: {why}")
    code = "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    )
    try:
        tree = ast.parse(code)
        ipython = False
    except SyntaxError:
        from course_lib.checks.rules import _strip_magics

        # the cell as IPython runs it, prompts and magics transformed (white-box red team 24, E7:
        # an answer written with `>>> ` prompts did not parse here, so its C loop went unflagged);
        # the get_ipython() calls the magics become are hidden_reach's to judge, not flags here
        try:
            tree = ast.parse(_strip_magics(source))
            ipython = True
        except (SyntaxError, ValueError):
            return flags
    # a sized sequence bound to a name first (``vocab = torch.arange(V).tolist()``), then handed to
    # map
    sized = frozenset(
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and _range_over_a_size(n.value)
        for t in n.targets
        if isinstance(t, ast.Name)
    )
    helpers = _c_loop_helpers(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            flags += _import_flags(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            flags += _assignment_flags(node)
        elif isinstance(node, ast.Call):
            flags += [
                f
                for f in _call_flags(node, sized, helpers)
                if not (ipython and f.startswith("get_ipython()"))
            ]
    return flags


def _import_flags(node: ast.Import | ast.ImportFrom) -> list[str]:
    """An import of a FORBIDDEN_IMPORTS module."""
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return [
        f"import {top}: {FORBIDDEN_IMPORTS[top]}"
        for top in (name.split(".")[0] for name in names)
        if top in FORBIDDEN_IMPORTS
    ]


def _assignment_flags(node: ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete) -> list[str]:
    """An assignment to (or deletion of) an attribute of a library the tests rely on."""
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
    flags = []
    for t in targets:
        name = _dotted(t)
        if (
            "." in name
            and name.split(".")[0] in GUARDED_MODULES
            and not name.startswith(ALLOWED_ASSIGNMENTS)
        ):
            flags.append(f"assigns {name}: patches a library the tests rely on")
    return flags


def _call_flags(node: ast.Call, sized: frozenset[str], helpers: dict[str, set[int]]) -> list[str]:
    """A forbidden call, a patching setattr, an import by name, a lookup by a computed name, or a
    loop over a size run by C code."""
    flags = []
    name = _dotted(node.func)
    if name in FORBIDDEN_CALLS:
        flags.append(f"{name}(): {FORBIDDEN_CALLS[name]}")
    elif (
        name in ("setattr", "delattr")
        and node.args
        and (not _dotted(node.args[0]) or _dotted(node.args[0]).split(".")[0] in GUARDED_MODULES)
    ):
        # setattr(self, k, v) in a class is ordinary code; on a library module (or an object
        # computed in the call) it may patch the tests' tools
        flags.append(f"{name}(): may patch a module")
    elif name == "__import__" or name.endswith("import_module"):
        flags.append(f"{name}(): imports a module by name")
    elif name in ("getattr", "attrgetter", "__getattribute__") and node.args:
        # getattr(torch.Tensor, "soft" + "max") or getattr(e, "__trace" + "back__") hides from
        # this scan what a plain name would show; getattr(obj, name) with a variable name on one's
        # own objects is ordinary code
        looked_up = node.args[-1] if name == "attrgetter" else node.args[min(1, len(node.args) - 1)]
        on_module = _dotted(node.args[0]).split(".")[0] in GUARDED_MODULES | INTROSPECTION_MODULES
        if not isinstance(looked_up, ast.Constant) and (
            on_module or isinstance(looked_up, (ast.BinOp, ast.JoinedStr, ast.Call))
        ):
            flags.append(f"{name}() with a computed name: hides what it reaches")
    if (
        name.rsplit(".", 1)[-1] in C_LOOPS
        and any(_range_over_a_size(a, sized) for a in node.args)
        and not _python_key(node, name.rsplit(".", 1)[-1])
    ):
        flags.append(
            f"{name}() over range(<a size>): a loop run by C code, which the cost checks cannot "
            "count"
        )
    elif _c_loop_by_method_or_helper(node, sized, helpers):
        flags.append(
            f"{name or 'a call'}() over range(<a size>): a loop run by C code, which the cost "
            "checks cannot count"
        )
    return flags


# builtins that iterate in C: a loop over the vocabulary handed to them makes no Python line
# (test_scan.py::test_red_team_18s_builtin_vocabulary_loops_are_flagged_and_honest_builtins_are_not:
# map(set.__contains__, range(V)) kept a 05 cost exercise's points); a flag asks an instructor to
# look and those that call a key or a function per item (threat model, white-box red team 21, B11:
# sorted(range(V), key=follow.__contains__))
KEYED = {"sorted", "min", "max", "reduce", "groupby", "nsmallest", "nlargest"}
C_LOOPS = {
    "map",
    "filter",
    "compress",
    "starmap",
    "zip",
    "accumulate",
    "filterfalse",
    "takewhile",
    "dropwhile",
    *KEYED,
}


def _python_key(node: ast.Call, name: str) -> bool:
    """A keyed builtin whose key (or reduce's function) is a lambda: Python code, whose lines the
    cost checks count (an honest beam search sorts its candidates so)."""
    if name not in KEYED:
        return False
    key = next(
        (k.value for k in node.keywords if k.arg == "key"),
        node.args[0] if name == "reduce" and node.args else None,
    )
    return isinstance(key, ast.Lambda)


def _c_loop_helpers(tree: ast.AST) -> dict[str, set[int]]:
    """{function name: positions of its parameters that it hands to a C loop} (``def keep(s, r):
    return list(filter(s.__contains__, r))``): a sized range passed there is a C loop one call away
    (white-box red team 22, C4)."""
    out: dict[str, set[int]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            builtin = _dotted(node.func).rsplit(".", 1)[-1]
            if builtin in C_LOOPS and not _python_key(node, builtin):
                for a in node.args:
                    if isinstance(a, ast.Name) and a.id in params:
                        out.setdefault(fn.name, set()).add(params.index(a.id))
    return out


def _c_loop_by_method_or_helper(
    node: ast.Call, sized: frozenset[str], helpers: dict[str, set[int]]
) -> bool:
    """``vocab.sort(key=f)`` on a sized list with a key that is not a lambda, or a sized range
    handed to a function of the cell that gives it to a C loop (``_c_loop_helpers``)."""
    func = node.func
    # a callable run per element by torch or numpy (white-box red team 23, D8:
    # torch.arange(V).apply_(s.__contains__), np.frompyfunc(s.__contains__, 1, 1)(np.arange(V))): a
    # lambda's lines are counted, a C method's are not
    per_element = (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else ""
    )
    if per_element in PER_ELEMENT and node.args and not isinstance(node.args[0], ast.Lambda):
        return True
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "sort"
        and _range_over_a_size(func.value, sized)
    ):
        # list.sort calls its key per item as sorted does
        return any(k.arg == "key" for k in node.keywords) and not _python_key(node, "sorted")
    if isinstance(func, ast.Name) and func.id in helpers:
        return any(
            i < len(node.args) and _range_over_a_size(node.args[i], sized) for i in helpers[func.id]
        )
    return False


# torch's and numpy's ways to run a callable once per element of an array
PER_ELEMENT = {"apply_", "map_", "map2_", "frompyfunc", "vectorize"}
# what makes a sequence as long as a size at run time: range(V), islice(count(), V),
# torch.arange(V), x.tolist()
SIZED = {"range", "islice", "count", "repeat", "arange", "tolist"}
# and an array as long as a size, whatever is made of it next (white-box red team 25, E5:
# np.flatnonzero(np.ones(V)) and torch.ones(V).cumsum(0) - 1 are the ids 0..V-1)
SIZED |= {"ones", "zeros", "empty", "full", "indices", "linspace", "ones_like", "zeros_like"}


def _range_over_a_size(node: ast.AST, sized: frozenset[str] = frozenset()) -> bool:
    """range(...) (or islice, count, repeat, arange, tolist()) with a bound computed at run time (a
    size: ``x.shape[-1]``, ``V``, ``n``; tolist() of any tensor), handed to the builtin directly or
    through another call, or bound to one of the names ``sized`` first; a literal bound
    (``range(10)``) is not a size."""
    if isinstance(node, ast.Name):
        return node.id in sized
    if isinstance(node, ast.Starred):
        return _range_over_a_size(node.value, sized)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # [*range(V)] (white-box red team 22, C4)
        return any(isinstance(e, ast.Starred) and _range_over_a_size(e, sized) for e in node.elts)
    if isinstance(node, ast.BinOp):  # torch.ones(V).cumsum(0) - 1
        return _range_over_a_size(node.left, sized) or _range_over_a_size(node.right, sized)
    if isinstance(node, ast.Subscript):  # np.nonzero(np.ones(V))[0]
        return _range_over_a_size(node.value, sized)
    if not isinstance(node, ast.Call):
        return False
    name = (
        _dotted(node.func).rsplit(".", 1)[-1]
        if _dotted(node.func)
        else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
    )
    # arange(V).tolist(): sized by what it converts (ids.tolist() of a short row is not)
    if name == "tolist":
        return isinstance(node.func, ast.Attribute) and _range_over_a_size(node.func.value, sized)
    if name in SIZED:
        return name == "count" or any(not isinstance(a, ast.Constant) for a in node.args)
    # a method of something sized (torch.ones(V).cumsum(0)) is sized
    return any(_range_over_a_size(a, sized) for a in node.args) or (
        isinstance(node.func, ast.Attribute) and _range_over_a_size(node.func.value, sized)
    )


# Ways to reach an object without writing its name (issue 37: names built at run time hid a forger's
# descriptors, frames and the checks' modules from the patterns above). In code the verification
# runs, each fails every check of the notebook, as the patterns do; a line the course itself wrote
# (the release's text) is not the student's.
HIDING = "hides what it reaches"
# fine with a constant name, which the readings then see
NAME_BUILTINS = {"getattr", "setattr", "delattr"}
HIDING_BUILTINS = {
    "vars",
    "globals",
    "locals",
    "eval",
    "exec",
    "compile",
    "__import__",
    "breakpoint",
    "__builtins__",
    "__loader__",
    "__spec__",
}
# dunder lookups honest code makes (a traceback's frames are TAMPERING_FRAMES; sys.__stdin__ a
# descriptor pattern)
PLAIN_DUNDERS = {
    "__init__",
    "__name__",
    "__qualname__",
    "__doc__",
    "__module__",
    "__version__",
    "__file__",
    "__len__",
    "__call__",
    "__repr__",
    "__str__",
    "__iter__",
    "__next__",
    "__enter__",
    "__exit__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__getitem__",
    "__setitem__",
    "__contains__",
    "__bool__",
    "__add__",
    "__sub__",
    "__mul__",
    "__matmul__",
    "__truediv__",
    "__neg__",
    "__post_init__",
    "__traceback__",
    "__stdout__",
    "__stderr__",
}
HIDING_IMPORTS = {
    "importlib",
    "builtins",
    "types",
    "inspect",
    "dis",
    "ctypes",
    "cffi",
    "pickle",
    "marshal",
    "copyreg",
    "shelve",
    "dill",
    "cloudpickle",
    "runpy",
    "pkgutil",
    "code",
    "codeop",
    "threading",
    "_thread",
    "concurrent",
    "multiprocessing",
    "asyncio",
    "signal",
    "sys_monitoring",
    "_ctypes",
    "posix",
    "_posixsubprocess",
    "faulthandler",
    "atexit",
    "socket",
    "_socket",
    "mmap",
    "fcntl",
}
# The modules an answer may import (issue 37: a white-box red team reached the checks' watch and the
# tracing hooks through the standard library's own name resolvers, pydoc.locate and
# string.Formatter.get_field; a list of what to refuse is never complete, a list of what to allow
# is): what the course's answers, alternatives, bug zoo and blind corpora import, and the course's
# own public modules. Attributes of these that resolve names or evaluate strings are refused one by
# one (NAME_MAKERS, REGISTRIES, TRACING, STRING_EVALUATORS).
# `from __future__ import` features that change nothing the readings parse (the others, today
# barry_as_FLUFL, make IPython compile later cells in a grammar ast.parse does not read: `<>` runs,
# the reading skips the cell; white-box red team 24, E4)
PLAIN_FUTURES = {
    "annotations",
    "generator_stop",
    "nested_scopes",
    "generators",
    "division",
    "absolute_import",
    "with_statement",
    "print_function",
    "unicode_literals",
}
ABSENT_IMPORTS = (
    "pandas",
    "scipy",
    "seaborn",
    "sklearn",
    "plotly",
    "polars",
    "statsmodels",
    "tabulate",
    "google.colab",
    "einops",  # white-box red team 25, F7 (screened): `try: from einops import rearrange`
)
ALLOWED_IMPORTS = {
    "unittest",
    "typing_extensions",
    "torch",
    "numpy",
    "math",
    "cmath",
    "collections",
    "heapq",
    "bisect",
    "functools",
    "itertools",
    "fractions",
    "decimal",
    "numbers",
    "statistics",
    "random",
    "re",
    "unicodedata",
    "string",
    "time",
    "warnings",
    "weakref",
    "typing",
    "dataclasses",
    "enum",
    "abc",
    "copy",
    "operator",
    "array",
    "json",
    "textwrap",
    "pprint",
    "contextlib",
    "sys",
    "os",
    "tiktoken",
    "matplotlib",
    "ipywidgets",
    "tqdm",
    "IPython",
    "course_lib",
    "__future__",
    # a self-test against Hugging Face's processors, which 03 suggests (its names: MODULE_NAMES)
    "transformers",
    "traceback",
    # a student looking at time and memory while exploring (blind classes did): their own process
    "gc",
    "tracemalloc",
    "psutil",
    "resource",
    "platform",
    "pathlib",
    "csv",
    "io",
    "html",
    "glob",
    "logging",
    # dates and digests: plain values (white-box red team 24, F1: `print(datetime.datetime.now())`
    # zeroed an honest notebook)
    "datetime",
    "hashlib",
    # data and plotting packages a student reaches for while exploring (a table, an entropy, a plot
    # theme), NOT installed where notebooks are graded: the import fails in the kernel and reaches
    # nothing (test_scan holds them absent; a notebook that writes one is refused as any module it
    # writes is). Refused, they zeroed an honest notebook (white-box red team 24, F1)
    *ABSENT_IMPORTS,
}
# tables an answer may ask `name in table` of, and nothing else (_Reading._excepted_chains)
MEMBERSHIP_ONLY = {"sys.modules"}
# what evaluates a string as code or looks an object up by a dotted name, inside the allowed modules
STRING_EVALUATORS = {
    "typing.get_type_hints",
    "typing.ForwardRef",
    "typing._eval_type",
    "string.Formatter",
    "os.system",
    "os.popen",
    "os.exec",
    "os.spawn",
    "os.fork",
    "os.posix_spawn",
    "os.kill",
    "course_lib.colab",
    "sys.modules",
    # where imports look: a module a cell writes, found by putting its folder back (B9)
    "sys.path",
    "sys.meta_path",
    "sys.path_hooks",
    "sys.path_importer_cache",
    "sys.addaudithook",
    "sys.audit",
    "functools.singledispatch",
    "copy.copyreg",
    "matplotlib.cbook",
    "matplotlib.pyplot.get_current_fig_manager",
    "numpy.lib",
    "torch.hub",
    "torch.package",
    "torch.serialization",
    "torch.distributed",
    "torch.multiprocessing",
    "torch.autograd.graph",
    "torch.testing",
    # numpy.testing.extbuild compiles and imports C code given as a string (white-box red team 24,
    # an audit note); its assertions stay (EVALUATOR_EXCEPTIONS)
    "numpy.testing",
    "torch._dynamo",
    "numpy.ctypeslib",
    "numpy.distutils",
    "numpy.f2py",
    "tqdm.contrib",
    "logging.config",
    "logging.handlers",
    "os.killpg",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
}


# names inside those modules that a student's own self-test uses and that run no string (white-box
# red team 22's C6: `torch.testing.assert_close(softmax(x), torch.softmax(x, -1))` in a cell of
# one's own)
# refused names that a cell may print: reading them changes nothing
SHOWN_READ = {"sys.path"}
EVALUATOR_EXCEPTIONS = {
    "torch.testing.assert_close",
    "torch.testing.assert_allclose",
    "torch.testing.make_tensor",
    "numpy.testing.assert_allclose",
    "numpy.testing.assert_array_equal",
    "numpy.testing.assert_array_almost_equal",
    "numpy.testing.assert_almost_equal",
    "numpy.testing.assert_equal",
    # n-grams as views of one array, 05's natural tool (white-box red team 24, F3); as_strided,
    # beside it, views any memory and stays refused
    "numpy.lib.stride_tricks.sliding_window_view",
}


def _allowed_import(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in ALLOWED_IMPORTS)


# Modules an answer may import whose other names run strings as code or look objects up by a dotted
# name (functools.singledispatch* call typing.get_type_hints, which evaluates string annotations:
# threat model, white-box red team 21, B1): an answer may use these names of theirs and no other.
HF_PROCESSORS = (
    "TopKLogitsWarper",
    "TopPLogitsWarper",
    "MinPLogitsWarper",
    "TemperatureLogitsWarper",
    "TypicalLogitsWarper",
    "EpsilonLogitsWarper",
    "EtaLogitsWarper",
    "LogitsProcessor",
    "LogitsWarper",
    "LogitsProcessorList",
    "RepetitionPenaltyLogitsProcessor",
    "NoRepeatNGramLogitsProcessor",
)
MODULE_NAMES = {
    # white-box red team 23, D5: `import IPython` for IPython.display, and 03's self-test against
    # Hugging Face's own sampling steps (the exercises' rules still keep them out of every answer)
    # and the old tutorials' `from IPython.core.display import HTML` (white-box red team 24, F3):
    # its display classes only (the module also holds os and display_functions)
    "IPython": {"display"}
    | {
        f"core.display.{n}"
        for n in ("HTML", "Markdown", "Image", "SVG", "Latex", "Math", "JSON", "Javascript")
    },
    "traceback": {
        "print_exc",
        "format_exc",
        "print_exception",
        "format_exception",
        "format_exception_only",
    },
    "transformers": set(HF_PROCESSORS)
    # the same classes where the course's own comparison cell imports them from (white-box red
    # team 25, F6)
    | {f"generation.{path}{n}" for path in ("", "logits_process.") for n in HF_PROCESSORS},
    # a self-test in the standard shape (white-box red team 25, F1); not unittest.mock, which
    # replaces any object by its dotted name
    "unittest": {
        "TestCase",
        "main",
        "TextTestRunner",
        "TestLoader",
        "defaultTestLoader",
        "TestSuite",
        "FunctionTestCase",
        "skip",
        "skipIf",
        "skipUnless",
        "expectedFailure",
    },
    "functools": {
        "partial",
        "partialmethod",
        "reduce",
        "lru_cache",
        "cache",
        "cached_property",
        "wraps",
        "update_wrapper",
        "cmp_to_key",
        "total_ordering",
    },
    "typing": {
        "Any",
        "Callable",
        "Dict",
        "List",
        "Tuple",
        "Set",
        "FrozenSet",
        "Optional",
        "Union",
        "Sequence",
        "Iterable",
        "Iterator",
        "Mapping",
        "MutableMapping",
        "MutableSequence",
        "Generator",
        "Literal",
        "Final",
        "ClassVar",
        "TypeVar",
        "Generic",
        "Protocol",
        "NamedTuple",
        "TypedDict",
        "Type",
        "DefaultDict",
        "Counter",
        "Deque",
        "OrderedDict",
        "Hashable",
        "Sized",
        "Collection",
        "Container",
        "Reversible",
        "NoReturn",
        "Never",
        "Self",
        "TYPE_CHECKING",
        "Annotated",
        "AnyStr",
        "SupportsInt",
        "SupportsFloat",
        "SupportsIndex",
        "TypeAlias",
        "cast",
        "overload",
        "final",
        "get_args",
        "get_origin",
    },
    "string": {
        "ascii_letters",
        "ascii_lowercase",
        "ascii_uppercase",
        "digits",
        "hexdigits",
        "octdigits",
        "punctuation",
        "printable",
        "whitespace",
        "capwords",
    },
    # os starts processes under many names (forkpty, posix_spawnp, exec*) and reads and writes
    # descriptors under more (eventfd_read, splice, copy_file_range): threat model, white-box red
    # team 21, B12
    "os": {
        "path",
        "environ",
        "getenv",
        "getcwd",
        "listdir",
        "scandir",
        "walk",
        "makedirs",
        "mkdir",
        "remove",
        "unlink",
        "rename",
        "replace",
        "rmdir",
        "stat",
        "sep",
        "linesep",
        "pathsep",
        "curdir",
        "pardir",
        "devnull",
        "name",
        "cpu_count",
        "getpid",
        "fspath",
        "PathLike",
        "get_terminal_size",
        "sched_getaffinity",
        "urandom",
        "times",
        "abort",
        # os._exit and os.abort kill their own process: the kernel's death is graded as such
        # (kernel_died); they reach nothing
        "_exit",
    },
}


# the same names from typing_extensions (white-box red team 25, screened with F7)
MODULE_NAMES["typing_extensions"] = set(MODULE_NAMES["typing"])


def _module_name_refused(full: str) -> str | None:
    """The part of a dotted name outside MODULE_NAMES (``functools.singledispatchmethod``), or
    None."""
    root, _, rest = full.partition(".")
    # a version string reaches nothing (white-box red team 25, F2: print(IPython.__version__))
    if root in MODULE_NAMES and rest and rest != "__version__":
        # an entry may be a dotted path (IPython's core.display.HTML)
        if not any(rest == a or rest.startswith(a + ".") for a in MODULE_NAMES[root]):
            return f"{root}.{rest.split('.')[0]}"
    return None


@functools.lru_cache(maxsize=1)
def _module_names() -> frozenset[str]:
    """Every top-level module name this Python can import: the standard library's and the installed
    ones."""
    import pkgutil

    return frozenset(sys.stdlib_module_names) | frozenset(m.name for m in pkgutil.iter_modules())


def _refused_module_inside(full: str) -> str | None:
    """A module outside ALLOWED_IMPORTS named as an attribute inside a dotted name that starts at a
    module (``tiktoken.registry.pkgutil``, ``torch.cuda.tunable.concurrent``: libraries hold the
    modules they import as attributes; threat model, white-box red team 21, B2 and B3), or None."""
    parts = full.split(".")
    for i, part in enumerate(parts[1:], 1):
        if (
            part in _module_names()
            and not _allowed_import(part)
            and ".".join(parts[: i + 1]) not in ATTRIBUTES_NAMED_LIKE_MODULES
        ):
            return part
    return None


def _not_allowed(full: str, names: list[str], inside: bool) -> str | None:
    """Why ``full`` (or one of ``names``, its forms through other modules) is not a name an answer
    may use: a name outside MODULE_NAMES, or (``inside``: a dotted name that starts at a module) a
    refused module within it."""
    if refused := next((r for n in names if (r := _module_name_refused(n))), None):
        return f"{refused} (not among the names of {refused.split('.')[0]} an answer may use)"
    if inside and (module := _refused_module_inside(full)):
        return f"the module {module} inside {full} (not among the modules an answer may use)"
    return None


# attributes of the allowed libraries that share their name with a module an answer may not import
# (torch.select is a function): the reading takes them for what they are
# (test_scan.py::test_every_attribute_named_like_a_refused_module_is_listed recomputes the list from
# the libraries)
ATTRIBUTES_NAMED_LIKE_MODULES = {
    "os.stat",
    "unittest.loader.fnmatch",  # the function, imported from its module
    # tqdm's own module for notebooks, named like Jupyter's package (white-box red team 25, F11:
    # `from tqdm.notebook import tqdm` zeroed an honest 05)
    "tqdm.notebook",
    "torch.select",
    "torch.trace",
    "torch.chunk",
    "torch.jit.trace",
    "torch.profiler.profile",
    "torch.profiler.profiler.profile",
    "torch.autograd.profiler.profile",
    "torch.cuda.profiler.profile",
    "torch.mps.profiler.profile",
    "torch.autograd.profiler_legacy.profile",
    "torch.distributed.rpc.server_process_global_profiler.profile",
    "numpy.select",
    "numpy.trace",
    "numpy.test",
    "numpy.linalg.trace",
    "numpy.linalg.test",
    "numpy.ma.trace",
    "numpy.ma.test",
    "numpy.matrixlib.test",
    "numpy.typing.test",
    "numpy.lib.test",
    "numpy.ma.core.trace",
    "matplotlib.cycler",
    "matplotlib.pyplot.cycler",
    "matplotlib.pyplot.arrow",
    "matplotlib.rcsetup.cycler",
    "matplotlib.widgets.cycler",
    "tqdm.std.datetime",
}


# magics that run no code of their own (the cell body of %%time and %%capture is read as code);
# every other one (%run, %load, %%writefile, %%bash, %prun, %load_ext ...) runs or writes code the
# reading would not see
SAFE_MAGICS = {
    "time",
    "timeit",
    "matplotlib",
    "capture",
    "pprint",
    "precision",
    "who",
    "whos",
    "who_ls",
    "pinfo",
    "pinfo2",
    "pdoc",
    "pdef",
    "psearch",
    "lsmagic",
    "magic",
}
NAME_MAKERS = {
    "attrgetter",
    "methodcaller",  # operator's getattr and method call by a name string
    "FileIO",
    "fromfd",
    "fdopen",
    "open_osfhandle",
}  # a descriptor opened by its number
KNOWN_MODULES = {
    "torch",
    "np",
    "numpy",
    "math",
    "sys",
    "os",
    "F",
    "nn",
    "json",
    "io",
    "random",
    "functools",
    "itertools",
    "collections",
    "re",
    "time",
    "IPython",
    "course_lib",
}
REGISTRIES = {
    "torch.ops",
    "torch.library",
    "torch.overrides",
    "torch.jit",
    "torch.compile",
    "torch.load",
    "torch._C",
    "torch.utils",
    "numpy.load",
    "np.load",
    "torch.classes",
    "torch.fx",
    "torch.export",
}


# what the "file descriptors" and "command line" patterns name, reached under another name (`from os
# import write`, `import os as o; o.write(...)`)
DESCRIPTOR_NAMES = {
    f"{m}.{f}"
    for m in ("os", "posix")
    for f in (
        "read",
        "write",
        "pread",
        "pwrite",
        "readv",
        "writev",
        "fdopen",
        "dup",
        "dup2",
        "fstat",
        "sendfile",
        "lseek",
        "set_blocking",
        "get_blocking",
        "preadv",
        "pwritev",
        "splice",
        "ftruncate",
        "fsync",
        "openpty",
        "set_inheritable",
    )
} | {"sys.stdin", "sys.__stdin__", "sys.argv", "sys.orig_argv", "io.FileIO", "_io.FileIO"}


TRACING = {"sys.settrace", "sys.setprofile", "sys.gettrace", "sys.getprofile", "sys.monitoring"}
# the collector the engine keeps off while it counts and watches a call, and code it runs when it
# decides: a finalizer run by a collection that starts inside the counter's or the watch's callback
# is neither counted nor watched (white-box red team 25, E10/E11: gc reached as
# torch.cuda.graphs.gc, switched on, a loop in a __del__)
COLLECTOR = {"gc.enable", "gc.set_threshold", "gc.unfreeze", "gc.freeze", "gc.callbacks"}
COLLECTOR |= {"weakref.finalize"}
# torch's protocols for running code whenever a tensor is used: a result that computes itself after
# the checked call, where no watch or counter is on (threat model, white-box red team 21, B10)
TENSOR_HOOKS = {
    "__torch_function__",
    "__torch_dispatch__",
    "as_subclass",
    "_make_subclass",
    "_make_wrapper_subclass",
    # numpy's: a ufunc or array function hands itself to an argument's hook, so a module-level call
    # `np.logaddexp(obj, 0)` that the text reading allows (a call, not a keeping) would give the
    # notebook the forbidden routine under no name (white-box red team 24, E1)
    "__array_ufunc__",
    "__array_function__",
    "__array_wrap__",
    "__array_prepare__",
}


# os.stat of a number is fstat: it finds the relay's socket (threat model, white-box red team 21,
# B6)
OPENERS = {
    "open",
    "io.open",
    "os.open",
    "Path",
    "pathlib.Path",
    "pathlib.PurePath",
    "PurePath",
    "os.stat",
    "os.lstat",
}


def _plain_path(node: ast.AST) -> bool:
    """A path written in the text: a string literal, or an f-string whose written parts name no
    /proc or /dev."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        written = "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
        return isinstance(node.values[0], ast.Constant) and not written.startswith(
            ("/proc", "/dev")
        )
    return False


def imports_of_tree(tree: ast.AST) -> tuple[set[str], dict[str, str]]:
    """The module names and import aliases one parsed cell's imports bind."""
    modules: set[str] = set()
    alias: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name.split(".")[0] for a in node.names}
            alias.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom):
            # `from torch import nn`: nn may be a module
            modules |= {a.asname or a.name for a in node.names}
            alias.update(
                {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if node.module}
            )
    return modules, alias


def imports_of(sources: list[str]) -> tuple[set[str], dict[str, str]]:
    """The module names and import aliases bound by the imports of every cell in ``sources`` (a name
    imported in one cell is used in the next: `import os as o` above, `o.write(...)` below)."""
    from course_lib.checks.rules import _strip_magics

    modules: set[str] = set()
    alias: dict[str, str] = {}
    for source in sources:
        try:
            tree = ast.parse(_strip_magics(source))
        except SyntaxError:
            continue
        cell_modules, cell_alias = imports_of_tree(tree)
        modules |= cell_modules
        alias.update(cell_alias)
    return modules, alias


def _suffixes(full: str) -> list[str]:
    """``a.b.c``, ``b.c``, ``c``: a library's module held as an attribute (``tqdm.sys``) is still
    that module."""
    parts = full.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def hidden_reach(
    source: str, notebook_imports: tuple[set[str], dict[str, str]] | None = None
) -> list[tuple[int, str]]:
    """(line, what) for each way ``source`` reaches an object by a name it builds or hides: getattr
    and kin with a computed name (or the builtin passed around), vars/globals/eval and kin, dunder
    lookups other than the plain protocol ones, a library's private names, operator registries,
    pattern matching on attributes, star imports, and modules whose purpose is to reach objects
    indirectly. A cell that does not parse: nothing (the verification does not run it either:
    ``relay._run_cells``). ``notebook_imports``: the names the notebook's other cells import
    (``imports_of``)."""
    from course_lib.checks.rules import _strip_magics

    # IPython reads a line that starts with a magic's name as that magic without its % (automagic),
    # even where the line is valid Python: `run  #a.py` is a name and a comment to ast, %run of the
    # file `#a.py` to IPython (threat model, white-box red team 21, B4)
    # IPython does so only in a cell that is one line after its static transforms
    # (InteractiveShell.transform_cell: a docstring line starting with "run" is not a magic;
    # white-box red team 22, C3) The verification runs cells without automagic (relay.quiet_shell),
    # so a line such as `run  #a.py` (threat model, white-box red team 21, B4) is a name and a
    # comment there, as ast reads it: no finding; and `config`, a variable displayed, is no finding
    # either (white-box red team 23, D3)
    try:
        # magics and shell lines as the calls IPython makes of them
        tree = ast.parse(_strip_magics(source))
    except SyntaxError:
        return []
    return _Reading(tree, notebook_imports).findings()


class _Reading:
    """One cell's reading for ``hidden_reach``: the names its imports bind, and what each node
    reaches."""

    def __init__(self, tree: ast.AST, notebook_imports: tuple[set[str], dict[str, str]] | None):
        self.tree = tree
        self.modules = set(KNOWN_MODULES)
        # a name bound by an import -> the dotted name it stands for
        self.alias: dict[str, str] = {}
        if notebook_imports is not None:
            self.modules |= notebook_imports[0]
            self.alias.update(notebook_imports[1])
        cell_modules, cell_alias = imports_of_tree(tree)
        self.modules |= cell_modules
        self.alias.update(cell_alias)
        # stand for a module
        self.roots = self.modules | {dotted.split(".")[0] for dotted in self.alias.values()}
        self.named_calls = {
            id(n.func)
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in NAME_BUILTINS
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
        }
        self.out: list[tuple[int, str]] = []
        self.magics: set[int] = set()  # get_ipython() calls read as the magic they run
        self.excepted = self._excepted_chains()
        self.class_names, self.shown_names, self.shown_values = self._looked_at()
        # names bound to a class made at run time (T = type(x)) or to a library's object (T =
        # torch.Tensor): their attributes are the library's (threat model, white-box red team 22:
        # type(x).detach = f)
        self.library_objects = {
            t.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and self._library_object(n.value)
            for t in n.targets
            if isinstance(t, ast.Name)
        }

    def _excepted_chains(self) -> set[int]:
        """ids of the chains inside an excepted name (torch.testing inside
        torch.testing.assert_close), which are read as it."""
        out: set[int] = set()
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Attribute) and self.resolved(n) in EVALUATOR_EXCEPTIONS:
                inner = n.value
                while isinstance(inner, ast.Attribute):  # np.lib and np.lib.stride_tricks alike
                    out.add(id(inner))
                    inner = inner.value
                if isinstance(inner, ast.Name):  # `import numpy.testing as npt`: npt.assert_...
                    out.add(id(inner))
            # `"google.colab" in sys.modules` asks a yes-or-no question of the table and holds
            # nothing of it (white-box red team 25, F1: the usual Colab test zeroed an honest
            # notebook)
            if isinstance(n, ast.Compare) and all(
                isinstance(o, (ast.In, ast.NotIn)) for o in n.ops
            ):
                out |= {id(c) for c in n.comparators if self.resolved(c) in MEMBERSHIP_ONLY}
        return out

    def _looked_at(self) -> tuple[set[int], set[int], set[int]]:
        """ids of what the cell only looks at: a type's name or a ``__class__``/``__dict__``
        printed, formatted or compared; ``vars()``/``locals()``/``dir()`` shown; a SHOWN_READ name
        printed."""
        tree = self.tree
        # `x.__class__.__name__` in a message names a type and reaches nothing (white-box red team
        # 22, C6b)
        class_names = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute)
            and n.attr in ("__name__", "__qualname__")
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Attribute)
            and n.value.attr == "__class__"
        }
        # `x.__class__` printed, formatted or compared is looked at, not used (white-box red team
        # 23, D5: print(type(x), x.__class__) failed every check of an honest notebook)
        shown = [
            a
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("print", "repr", "str", "isinstance", "issubclass")
            for a in n.args
        ]
        shown += [n.value for n in ast.walk(tree) if isinstance(n, ast.FormattedValue)]
        shown += [
            x
            for n in ast.walk(tree)
            if isinstance(n, ast.Compare)
            for x in (n.left, *n.comparators)
        ]
        class_names |= {
            id(a)
            for a in shown
            if isinstance(a, ast.Attribute)
            and a.attr in ("__class__", "__dict__")
            and not isinstance(a.value, ast.Call)
        }
        # print(vars(self)), print(locals()), f"{vars(obj)}": a namespace shown, not written (red
        # team 23, D5)
        shown_names = {
            id(a.func)
            for a in shown
            if isinstance(a, ast.Call)
            and isinstance(a.func, ast.Name)
            and a.func.id in ("vars", "locals", "globals", "dir")
        }
        # print(sys.path) shows where imports look and changes nothing (white-box red team 24, F3:
        # a student asking why an import fails lost every check); sys.path used any other way is
        # refused
        shown_values = {
            id(a) for a in shown if isinstance(a, ast.Attribute) and self.resolved(a) in SHOWN_READ
        }
        return class_names, shown_names, shown_values

    def add(self, node: ast.AST, what: str) -> None:
        self.out.append((getattr(node, "lineno", 0), what))

    def _library_object(self, node: ast.AST) -> bool:
        """``type(...)``, or a dotted name through a library module the tests rely on
        (``torch.Tensor``)."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
        ):
            return True
        return (
            isinstance(node, ast.Attribute) and self.resolved(node).split(".")[0] in GUARDED_MODULES
        )

    def _patched(self, target: ast.AST) -> bool:
        """Whether setting an attribute of ``target`` changes a library's object or a class made at
        run time."""
        return (
            self._library_object(target)
            or isinstance(target, ast.Name)
            and target.id in self.library_objects
        )

    def resolved(self, node: ast.AST) -> str:
        """The dotted name an expression stands for, through the imports (`import json as j`:
        j.dumps)."""
        dotted = _dotted(node)
        root, _, rest = dotted.partition(".")
        return ".".join(p for p in (self.alias.get(root, root), rest) if p) if dotted else ""

    def findings(self) -> list[tuple[int, str]]:
        for node in ast.walk(self.tree):
            self.magic(node)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name):
                self.name(node)
            if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Store):
                self.dotted_name(node)
            if isinstance(node, ast.Attribute):
                self.attribute(node)
            elif isinstance(node, ast.Call):
                self.call(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports(node)
            elif isinstance(node, ast.MatchClass) and node.kwd_attrs:
                self.add(node, "a pattern that reads attributes (case C(name=...))")
            elif (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name in TENSOR_HOOKS
            ):
                self.add(node, f"defines {node.name} (a tensor that runs code whenever it is used)")
            elif (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name == "__del__"
                or isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Store)
                and node.id == "__del__"
            ):
                # code the collector runs when it decides (COLLECTOR)
                self.add(node, "defines __del__ (a finalizer: the collector runs it unseen)")
            # the same hooks bound without a def (`__array_ufunc__ = f` in a class body) or by
            # name (`setattr(C, "__array_ufunc__", f)`, `type("C", (), {...})`)
            elif isinstance(node, ast.Name) and node.id in TENSOR_HOOKS:
                self.add(node, f"binds {node.id} (a tensor that runs code whenever it is used)")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in TENSOR_HOOKS
            ):
                self.add(node, f"names {node.value} (a tensor that runs code whenever it is used)")
        return sorted(set(self.out))

    def magic(self, node: ast.AST) -> None:
        """get_ipython().run_line_magic(...) and kin: what IPython turns magics and shell lines
        into."""
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)
            and _dotted(node.func.value.func) == "get_ipython"
        ):
            return
        self.magics.add(id(node.func.value.func))
        name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if (
            node.func.attr in ("run_line_magic", "run_cell_magic")
            and str(name).lstrip("%") in SAFE_MAGICS
        ):
            body = (
                node.args[-1]
                if node.func.attr == "run_cell_magic" or name in ("time", "timeit")
                else None
            )
            if isinstance(body, ast.Constant) and isinstance(body.value, str):
                # %%time's body and %time's statement run as code: read them as code, at their own
                # lines
                self.out.extend(
                    (node.lineno + max(line - 1, 0) + (node.func.attr == "run_cell_magic"), what)
                    for line, what in hidden_reach(body.value)
                )
        elif node.func.attr in ("system", "getoutput") or (
            (node.func.attr, len(node.args)) in (("run_line_magic", 2), ("run_cell_magic", 3))
            and str(name).lstrip("%")
            in (NEUTRAL_MAGICS if node.func.attr == "run_line_magic" else NEUTRAL_CELL_MAGICS)
            and isinstance(node.args[1], ast.Constant)
            and not set(str(node.args[1].value)) & set("{}$")
        ):
            # a no-op in the verification (relay.quiet_shell): `!nvidia-smi`, %pip, %load_ext
            # autoreload; a magic's line with {...} or $name is still expanded (evaluated) by
            # IPython before the magic is called
            pass
        elif node.func.attr in ("run_line_magic", "run_cell_magic"):
            self.add(node, f"the magic %{str(name).lstrip('%')}")
        else:
            self.add(node, f"get_ipython().{node.func.attr}")

    def name(self, node: ast.Name) -> None:
        if node.id == "get_ipython" and id(node) not in self.magics:
            self.add(node, "get_ipython()")
        elif node.id != "get_ipython" and not isinstance(node.ctx, ast.Store):
            if node.id in NAME_BUILTINS and id(node) not in self.named_calls:
                self.add(node, f"{node.id}() with a name built at run time, or passed around")
            elif (node.id in HIDING_BUILTINS or node.id in NAME_MAKERS) and id(
                node
            ) not in self.shown_names:
                self.add(node, f"{node.id}")

    def dotted_name(self, node: ast.AST) -> None:
        """What a name or attribute chain stands for, through the imports and through modules held
        as other modules' attributes (tqdm.sys.settrace is sys.settrace)."""
        full = self.resolved(node)
        rooted = full.split(".")[0] in self.roots
        names = _suffixes(full) if rooted else [full]
        if any(n in DESCRIPTOR_NAMES for n in names):
            self.add(node, f"{full} (a descriptor by number, or the command line)")
        elif rooted and full.split(".")[0] in HIDING_IMPORTS and "." in full:
            # a use of such a module, whose import a course line made (01's `import inspect` for its
            # demos): the use is the student's line (white-box red team 22, C8:
            # inspect.getmembers(F)[...])
            self.add(node, f"{full} (reaches objects without naming them)")
        elif any(n in TRACING for n in names):
            self.add(node, f"{full} (the tracing the cost checks count lines with)")
        elif any(n in COLLECTOR for n in names) or (rooted and "gc" in full.split(".")[1:]):
            self.add(node, f"{full} (the garbage collector the checks keep off while they count)")
        elif (
            id(node) in self.excepted
            or full in EVALUATOR_EXCEPTIONS
            or id(node) in self.shown_values
        ):
            pass
        elif evaluator := next(
            (
                e
                for n in names
                for e in STRING_EVALUATORS
                if n == e
                or n.startswith(e + ".")
                or (e.endswith(("exec", "spawn")) and n.startswith(e))
            ),
            None,
        ):
            self.add(
                node,
                f"{evaluator} (runs or looks up code by a string, or reaches the checking process)",
            )
        elif registry := next(
            (r for n in names for r in REGISTRIES if n == r or n.startswith(r + ".")), None
        ):
            self.add(node, f"{registry}: reaches functions through a registry or loads code")
        elif why := _not_allowed(full, names if rooted else [full], inside=rooted):
            self.add(node, why)

    def attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node)
        if (
            isinstance(node.ctx, (ast.Store, ast.Del))
            and self.resolved(node).split(".")[0] in GUARDED_MODULES
            and not self.resolved(node).startswith(ALLOWED_ASSIGNMENTS)
        ):
            self.add(node, f"rebinds {self.resolved(node)}")
        elif (
            isinstance(node.ctx, (ast.Store, ast.Del))
            and self._patched(node.value)
            # torch's switches are settings, not code (white-box red team 25, F2: the
            # reproducibility idiom `torch.backends.cudnn.deterministic = True` zeroed a notebook)
            and not self.resolved(node).startswith(ALLOWED_ASSIGNMENTS)
        ):
            self.add(
                node,
                f"rebinds .{node.attr} of a library's object or of a class reached at run time",
            )
        if node.attr in NAME_MAKERS:
            self.add(node, f"{node.attr}")
        elif node.attr in TENSOR_HOOKS:
            self.add(node, f".{node.attr} (a tensor that runs code whenever it is used)")
        elif (
            node.attr.startswith("__")
            and node.attr.endswith("__")
            and node.attr not in PLAIN_DUNDERS
            and id(node) not in self.class_names
        ):
            self.add(node, f"a lookup through .{node.attr}")
        elif (
            dotted
            and dotted.split(".")[0] in self.modules - {"os"}
            and any(p.startswith("_") and not p.endswith("__") for p in dotted.split(".")[1:])
        ):
            self.add(node, f"a library's private name ({dotted})")

    def call(self, node: ast.Call) -> None:
        if (
            _dotted(node.func) in ("setattr", "delattr")
            and node.args
            and (
                self.resolved(node.args[0]).split(".")[0] in GUARDED_MODULES
                or self._patched(node.args[0])
            )
        ):
            self.add(
                node,
                f"{_dotted(node.func)}() on "
                f"{self.resolved(node.args[0]) or 'a class reached at run time'}",
            )
        elif self.resolved(node.func) in OPENERS and node.args and not _plain_path(node.args[0]):
            # a descriptor by number (open(fd)), or a path built at run time (/proc/self/fd/<n>, the
            # relay's socket)
            self.add(
                node, f"{self.resolved(node.func)}() of a number or of a path built at run time"
            )

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom) and any(
            a.name.startswith("_") and not a.name.endswith("__") for a in node.names
        ):
            self.add(node, f"a library's private name (from {node.module} import _...)")
        names = (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
        for name in names:
            if name.split(".")[0] in HIDING_IMPORTS:
                self.add(node, f"import {name.split('.')[0]}")
            elif getattr(node, "level", 0) or not _allowed_import(name):
                self.add(node, f"import {name} (not among the modules an answer may use)")
            elif isinstance(node, ast.Import) and (refused := _module_name_refused(name)):
                self.add(
                    node, f"import {name} ({refused} is not among the names an answer may use)"
                )
            elif (
                any(name == e or name.startswith(e + ".") for e in STRING_EVALUATORS)
                and not (
                    isinstance(node, ast.ImportFrom)
                    and all(f"{name}.{a.name}" in EVALUATOR_EXCEPTIONS for a in node.names)
                )
                and not (
                    # `import numpy.testing as npt`: each use of npt is read as its own name
                    # (white-box red team 25, F3)
                    isinstance(node, ast.Import)
                    and any(e.startswith(name + ".") for e in EVALUATOR_EXCEPTIONS)
                )
            ):
                self.add(node, f"import {name} (runs or looks up code by a string)")
        if isinstance(node, ast.ImportFrom):
            self.imported_names(node)

    def imported_names(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if why := _not_allowed(full, [full], inside=True):
                    self.add(node, why)
                elif any(n in TRACING | DESCRIPTOR_NAMES for n in _suffixes(full)):
                    self.add(node, f"from {node.module} import {a.name}")
        if any(a.name in NAME_MAKERS for a in node.names):
            self.add(node, "operator's attrgetter or methodcaller")
        if any(a.name == "*" for a in node.names):
            self.add(node, f"from {node.module} import *: binds names the text never writes")
        if node.module == "__future__" and not node.level:
            for a in node.names:
                if a.name not in PLAIN_FUTURES:
                    self.add(node, f"from __future__ import {a.name}: a grammar no reading parses")


def scan_notebook(nb) -> list[str]:
    """Every flag of every code cell, as 'cell N: flag', in cell order, without duplicates."""
    out: list[str] = []
    for i, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        for flag in scan_source(cell.get("source", "")):
            entry = f"cell {i}: {flag}"
            if entry not in out:
                out.append(entry)
    return out


NEVER_THE_COURSES = ("a shell command", "the magic %", "get_ipython", "a line IPython runs")


def tampering(
    nb, flags: list[str] | None = None, course_lines: set[str] | None = None, runs=None
) -> list[str]:
    """The flags (as ``scan_notebook`` writes them; ``flags``: its result, if already made) of code
    that reaches into the checking process, plus each cell that reaches its callers' frames, plus
    each way of reaching an object without naming it (``hidden_reach``) in a cell the verification
    runs (``runs(cell)``, default every code cell) on a line the course did not write
    (``course_lines``: the release's code lines, stripped): what makes every check of the notebook
    fail outside the kernel."""
    out = [
        f
        for f in (scan_notebook(nb) if flags is None else flags)
        if f.split(": ", 1)[1].startswith(TAMPERING)
    ]
    notebook_imports = imports_of(
        [c.get("source", "") for c in nb.cells if c.get("cell_type") == "code"]
    )
    for i, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        if re.search(
            TAMPERING_FRAMES, code_text(unicodedata.normalize("NFKC", cell.get("source", "")))
        ):
            out.append(f"cell {i}: reaches the callers' frames")
        if runs is not None and not runs(cell):
            continue
        lines = cell.get("source", "").splitlines()
        # a course line copied verbatim is the course's code, unless it runs a shell or a magic:
        # their text carries the student's variables ({COURSE_GIT_URL} in %pip install:
        # test_scan.py::
        # test_a_course_line_copied_verbatim_is_the_courses_unless_it_runs_a_shell_or_a_magic)
        found = [
            what
            for line, what in hidden_reach(cell.get("source", ""), notebook_imports)
            if what.startswith(NEVER_THE_COURSES)
            or not (
                course_lines and 0 < line <= len(lines) and lines[line - 1].strip() in course_lines
            )
        ]
        if found:
            out.append(f"cell {i}: {HIDING}: {', '.join(dict.fromkeys(found))}"[:400])
    return out
