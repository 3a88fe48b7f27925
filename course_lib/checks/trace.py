"""Which forbidden routines run while an answer runs: the other half of an exercise's rules.

``course_lib.checks.rules`` reads the answer's text; a routine reached through a string
(``pkgutil.resolve_name``, ``pickle``, ``inspect.getmembers``, ``torch.jit``, a module written at
run time) has no name there. A ``Watch`` records what runs while the student's function runs:

- torch operators by their ATen names, through a ``TorchDispatchMode``: every route to a kernel
passes the
  dispatcher, TorchScript included (``torch.softmax``, ``F.softmax``, ``x.softmax``,
  ``torch._softmax``, ``torch.ops.aten._softmax`` and a jit-compiled ``torch.softmax`` all run
  ``_softmax``);
- Python functions by their code objects, through a profile hook (``course_lib.generate.greedy``,
  ``scipy.special.softmax``), and any code under a forbidden package (``transformers.*``).

The student's code runs in the same process and could switch a watch off, so a watch only ever fails
an answer, never passes one; an answer that leaves it switched off when it returns is seen doing so,
and switching it off takes torch's private names or the profile hook, which the text reading
refuses. What it cannot see: a routine made of the allowed operators (a softmax written out is exp
and sum, which is the exercise), and C code outside torch called without a Python frame (a numpy
ufunc called directly).
"""

from __future__ import annotations

import functools
import gc
import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

# the ATen operators a forbidden torch routine runs, by the routine's last name (measured with a
# TorchDispatchMode: F.softmax, x.softmax, torch._softmax, torch.ops.aten._softmax and a TorchScript
# softmax all run _softmax; scaled_dot_product_attention on CPU runs _safe_softmax or a fused
# kernel; Categorical(logits) runs logsumexp and _softmax; cross_entropy runs _log_softmax)
_SDPA = (
    "_safe_softmax",
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_native_multi_head_attention",
)
# every kernel that computes one, whatever the layout (torch.sparse.softmax on a tensor made sparse
# with every entry stored reaches _sparse_softmax: bug zoo softmax__torch_sparse_kernel; masked,
# nested and quantized tensors have their own)
_SOFTMAX = (
    "_softmax",
    "_safe_softmax",
    "softmax",
    "special_softmax",
    "_masked_softmax",
    "_sparse_softmax",
    "_nested_tensor_softmax_with_shape",
)
_LOG_SOFTMAX = ("_log_softmax", "log_softmax", "special_log_softmax", "_sparse_log_softmax")
OPS_OF = {
    "softmax": _SOFTMAX,
    "Softmax": _SOFTMAX,
    "log_softmax": _LOG_SOFTMAX,
    "LogSoftmax": _LOG_SOFTMAX,
    "logsumexp": ("logsumexp", "special_logsumexp"),
    "logcumsumexp": ("logcumsumexp",),
    "logaddexp": ("logaddexp",),
    "logaddexp2": ("logaddexp2",),
    "softmin": _SOFTMAX,
    "Softmin": _SOFTMAX,
    "gumbel_softmax": _SOFTMAX,
    "cross_entropy": _LOG_SOFTMAX,
    "CrossEntropyLoss": _LOG_SOFTMAX,
    "Categorical": ("_softmax", "logsumexp"),
    "OneHotCategorical": ("_softmax", "logsumexp"),
    "Multinomial": ("_softmax", "logsumexp"),
    "RelaxedOneHotCategorical": ("_softmax", "logsumexp"),
    # MultiheadAttention's slow path is a plain softmax, as an honest attention is: its name is what
    # the text reading finds; here only its fused paths
    "scaled_dot_product_attention": _SDPA,
    "MultiheadAttention": _SDPA,
    "multi_head_attention_forward": _SDPA,
}


def ops_for(forbidden: Sequence[str]) -> tuple[str, ...]:
    """The ATen operators to watch for a list of forbidden torch routines (``OPS_OF``)."""
    ops: set[str] = set()
    for name in forbidden:
        if name.startswith(("torch.", "Tensor.")):
            ops.update(OPS_OF.get(name.rsplit(".", 1)[-1], ()))
    return tuple(sorted(ops))


def _package_dirs(package: str) -> tuple[str, ...]:
    """The folders of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return ()
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(os.path.join(os.path.realpath(d), "") for d in spec.submodule_search_locations)


SPAWN_RULE = "a new thread or process (the checks cannot watch work done there)"
OFF_RULE = "switching off the checks' watch"
COLLECTOR_RULE = "the garbage collector switched on while the checks watch (finalizers run unseen)"

# What takes a call out of the dispatch mode's sight (_disable_current_modes and
# DisableTorchFunction, reached through names built from strings: test_trace.py): seen when called
# from Python code.
_LEVERS = [
    ("torch.utils._python_dispatch", n)
    for n in ("_disable_current_modes", "_pop_mode", "_pop_mode_temporarily")
]
_LEVERS += [
    ("torch._C", n)
    for n in (
        "_pop_torch_dispatch_stack",
        "_DisableTorchDispatch",
        "_set_dispatch_mode",
        "_unset_dispatch_mode",
        "DisableTorchFunction",
        "DisableTorchFunctionSubclass",
        "_ExcludeDispatchKeyGuard",
        "_ForceDispatchKeyGuard",
    )
]

# Every sys.setprofile / sys.settrace while a watch is on, from Python or from C
# (list(map(sys.setprofile, [None])) makes no profile event: test_trace.py), raises an audit event;
# an audit hook cannot be removed.
_ACTIVE: list["Watch"] = []
_TORCH_DIRS = _package_dirs("torch") or ("\0",)
_CONTEXTLIB = os.path.join(os.path.dirname(os.__file__), "contextlib.py")
_NOT_STUDENT = (
    *_TORCH_DIRS,
    os.path.join(os.path.dirname(os.path.realpath(__file__)), ""),
    # torch's code, and these checks'
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ""),
)


def _library_dirs() -> tuple[str, ...]:
    """The standard library's folder and every installed-package folder (site-packages), as path
    prefixes."""
    import site
    import sysconfig

    dirs = {
        os.path.dirname(os.__file__),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        *getattr(site, "getsitepackages", lambda: [])(),
    }
    dirs |= {os.path.realpath(d) for d in dirs}
    return tuple(sorted(os.path.join(d, "") for d in dirs))


_LIBRARIES = _library_dirs()
# code without a file ("<frozen importlib...>", namedtuple's "<string>", a module torch writes at
# run time) is passed over like a library's, except a notebook cell's as IPython names it
_CELLS = ("<ipython-input-",)
_OWN = [0]  # > 0 while a watch switches its own hook


def _audit(event: str, args: tuple) -> None:
    if _ACTIVE and not _OWN[0] and event in ("sys.setprofile", "sys.settrace"):
        for w in _ACTIVE:
            w.saw(f"{OFF_RULE} ({event})")


_AUDITING = [False]


def rule_names(forbidden: Sequence[str]) -> frozenset[str]:
    """Every text a Watch over ``forbidden`` can record: the grader passes on to a student's page
    only these, never what a process that ran the student's code says it saw
    (docs/threat-model.md)."""
    ops = {op for group in OPS_OF.values() for op in group}
    levers = [name for _, name in _LEVERS] + [
        "sys.setprofile",
        "sys.settrace",
        "torch's dispatch",
        "torch dispatch modes",
    ]
    return frozenset(
        [
            *forbidden,
            SPAWN_RULE,
            COLLECTOR_RULE,
            *(f"{OFF_RULE} ({x})" for x in levers),
            *(f"torch's {op.lstrip('_')} kernel" for op in ops),
        ]
    )


def _listen() -> None:
    if not _AUDITING[0]:
        sys.addaudithook(_audit)
        _AUDITING[0] = True


def _set_profile(fn: Any) -> None:
    """sys.setprofile by a watch itself: the audit hook lets it pass."""
    _OWN[0] += 1
    try:
        sys.setprofile(fn)
    finally:
        _OWN[0] -= 1


@functools.lru_cache(maxsize=None)
def quiet_mode() -> type:
    """Base of the checks' dispatch modes: torch wraps a mode's handler in torch._dynamo.disable
    unless the mode opts out, and that wrapper's first call imports torch._dynamo (~800 modules,
    1.6-1.9 s on this CPU, in every process that checks)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class QuietMode(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False

    return QuietMode


def _spawners() -> list:
    """The C functions every new thread or process starts through (threading, concurrent.futures,
    subprocess and multiprocessing all end in one of them)."""
    import _thread

    out = [
        getattr(_thread, n)
        for n in ("start_new_thread", "start_joinable_thread", "start_new")
        if hasattr(_thread, n)
    ]
    out += [
        getattr(os, n)
        for n in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system")
        if hasattr(os, n)
    ]
    try:
        import _posixsubprocess

        out.append(_posixsubprocess.fork_exec)
    except ImportError:
        pass
    return out


class Watch:
    """Context manager: ``seen`` holds the rules broken by what ran inside it (see the module
    docstring).

    ``report``: told each rule every time it is broken. The grader's verification passes one that
    writes the rule out of this process at once, so that emptying ``seen`` afterwards (the answer
    runs in this process and can reach it) takes nothing back from the grader's record.
    """

    def __init__(
        self,
        forbidden: Sequence[str] = (),
        ops: Sequence[str] = (),
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.ops = frozenset(ops)
        self.seen: set[str] = set()
        self._report = report
        self.codes: dict[types.CodeType, str] = {}
        self.builtins: dict[int, str] = {}
        dirs: list[tuple[str, str]] = []
        for name in forbidden:
            if name.endswith(".*"):
                dirs += [(d, name[:-2]) for d in _package_dirs(name[:-2])]
                continue
            if name.startswith("Tensor."):
                continue  # tensor methods are torch operators: ``ops`` covers them
            module, _, attr = name.rpartition(".")
            try:
                obj = getattr(importlib.import_module(module), attr)
            except Exception:  # noqa: BLE001 - not installed, or not there in this version: nothing to watch
                continue
            for fn in [obj] if not isinstance(obj, type) else list(vars(obj).values()):
                code = getattr(fn, "__code__", None)
                if isinstance(code, types.CodeType):
                    self.codes[code] = name
                elif callable(fn) and not isinstance(obj, type):
                    self.builtins[id(fn)] = name
        self.dirs = tuple(dirs)
        # levers count only when the code that pulls them is not torch's own (printing a tensor
        # disables the modes, a mode's dispatch pops itself for a moment): keyed apart from the
        # rules above
        self.lever_codes: dict[types.CodeType, str] = {}
        self.lever_builtins: dict[int, str] = {}
        if self.ops or self.codes or self.builtins or self.dirs:
            # the watch sees this thread only: work handed to a new thread or process would escape
            # it
            for fn in _spawners():
                self.builtins[id(fn)] = SPAWN_RULE
            for module, name in _LEVERS:
                obj = getattr(sys.modules.get(module), name, None)
                code = getattr(getattr(obj, "__wrapped__", obj), "__code__", None)
                if isinstance(code, types.CodeType):
                    self.lever_codes[code] = f"{OFF_RULE} ({name})"
                elif obj is not None:
                    self.lever_builtins[id(obj)] = f"{OFF_RULE} ({name})"
        self._mode: Any = None
        self._profile: Any = None
        self._hook: Any = None  # the profile function this watch installed (_profile_function)

    def saw(self, rule: str) -> None:
        """Record a broken rule, and report it (every time: ``seen`` is the answer's to change)."""
        self.seen.add(rule)
        if self._report is not None:
            self._report(rule)

    @property
    def active(self) -> bool:
        return bool(self.ops or self.codes or self.builtins or self.dirs)

    def _dispatch_off(self) -> bool:
        """Whether this watch's dispatch mode has been taken out of play: the Python dispatch key
        excluded (torch._C._DisableTorchDispatch: test_trace.py) or the mode no longer on torch's
        stack (popped, even from C)."""
        C = self._C
        if C._dispatch_tls_is_dispatch_key_excluded(C.DispatchKey.Python):
            return True
        return not any(
            C._get_dispatch_stack_at(i) is self._mode for i in range(C._len_torch_dispatch_stack())
        )

    def _profile_function(self, record: Callable[[str], None]) -> Callable:
        """The profile hook, a closure over ``record`` and this watch's tables: nothing it calls is
        looked up on a class while the answer runs (white-box red team 23, D9: ``Watch.saw`` swapped
        for a no-op during the call and put back before it returned blinded every run-time rule; the
        seal compares classes only between calls)."""
        lever_codes, lever_builtins, codes, builtins_, dirs = (
            self.lever_codes,
            self.lever_builtins,
            self.codes,
            self.builtins,
            self.dirs,
        )
        dispatch_off, mode = self._dispatch_off, self._mode
        collector_on, collector_off = gc.isenabled, gc.disable
        # only where the collector was off when the watch began (the engine's calls), not around
        # code that runs with it on anyway
        guard = not gc.isenabled()

        def on_call(frame, event, arg) -> None:
            if guard and collector_on():
                # the engine switches the collector off for the call: switched on again, a
                # collection could run inside this hook, where CPython pauses profiling, and a
                # finalizer's code would run unseen (white-box red team 25, E11)
                collector_off()
                record(COLLECTOR_RULE)
            if mode is not None and event in ("call", "c_call") and dispatch_off():
                # code outside torch (and outside these checks) runs while the operators go
                # unwatched: whatever it calls next could be the forbidden kernel. torch's own code
                # switches dispatch off for a moment (to print a tensor, or import torch._dynamo for
                # a meta kernel), through the standard library, other packages and code they
                # generate: the nearest frame that is torch's, these checks', or the notebook's own
                # decides
                f = frame
                while f is not None:
                    name = f.f_code.co_filename
                    if name.startswith(_NOT_STUDENT):
                        break
                    if not name.startswith(_LIBRARIES) and not (
                        name[:1] == "<" and not name.startswith(_CELLS)
                    ):
                        record(f"{OFF_RULE} (torch's dispatch)")
                        break
                    f = f.f_back
            if event == "call" and frame.f_code in lever_codes:
                caller = frame.f_back
                while caller is not None and caller.f_code.co_filename.startswith(_CONTEXTLIB):
                    caller = caller.f_back  # a context manager's __enter__: who used it
                if caller is not None and not caller.f_code.co_filename.startswith(_TORCH_DIRS):
                    record(lever_codes[frame.f_code])
                return
            if event == "c_call" and id(arg) in lever_builtins:
                if not frame.f_code.co_filename.startswith(_TORCH_DIRS):
                    record(lever_builtins[id(arg)])
                return
            if event == "call":
                code = frame.f_code
                rule = codes.get(code)
                if rule is None and dirs:
                    filename = code.co_filename
                    rule = next((pkg + ".*" for d, pkg in dirs if filename.startswith(d)), None)
                if rule is not None:
                    record(rule)
            elif event == "c_call" and builtins_:
                rule = builtins_.get(id(arg)) or builtins_.get(id(getattr(arg, "__self__", None)))
                if rule is not None:
                    record(rule)

        return on_call

    def __enter__(self) -> "Watch":
        # what records a broken rule, made now as a closure: the hook and the dispatch mode call it,
        # never a name looked up on this class while the answer runs (white-box red team 23, D9)
        seen, report = self.seen, self._report

        def record(rule: str) -> None:
            seen.add(rule)
            if report is not None:
                report(rule)

        if self.ops:
            import torch

            self._C = torch._C  # read on every call the notebook makes (_dispatch_off)
            ops = self.ops

            class _Ops(quiet_mode()):
                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    name = func.overloadpacket.__name__
                    if name in ops:
                        record(f"torch's {name.lstrip('_')} kernel")
                    return func(*args, **(kwargs or {}))

            self._mode = _Ops()
            self._mode.__enter__()
        if self.codes or self.builtins or self.dirs:
            _listen()
            self._profile = sys.getprofile()
            self._hook = self._profile_function(record)
            _set_profile(self._hook)
            _ACTIVE.append(self)
        return self

    def __exit__(self, *exc) -> None:
        # an answer that switched the watch off (and did not put it back) is seen doing so
        if self.codes or self.builtins or self.dirs:
            if self in _ACTIVE:
                _ACTIVE.remove(self)
            if sys.getprofile() is not self._hook:
                self.saw(f"{OFF_RULE} (sys.setprofile)")
            _set_profile(self._profile)
        if self._mode is not None:
            from torch.utils._python_dispatch import _get_current_dispatch_mode

            if _get_current_dispatch_mode() is not self._mode:
                self.saw(f"{OFF_RULE} (torch dispatch modes)")
            try:
                self._mode.__exit__(*exc)
            except Exception:  # noqa: BLE001 - the answer popped the mode itself: nothing left to exit
                pass
            self._mode = None
