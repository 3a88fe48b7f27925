"""The verification sandbox's processes (``python -m autograde.inside.relay child``, started by
autograde.verify.verify_notebook): the relay and the answers' process. Untrusted side: nothing here
is believed.

1. the relay (``_child``, ``_relay``): the sandbox's first process; it reads the job framed on
standard input,
   holds the grader's pipes, runs no student cell, forks the answers' process and asks it for one
   check at a time over a socket, and writes what comes back to the grader, framed by itself
   (autograde.inside.wire);
2. the answers' process (``_answers``): runs the student's own code cells (not test cells, not
``demo`` cells)
   in a private IPython shell, with standard input and output on /dev/null, then calls each
   exercise's function on the encoded inputs of the check it is asked
   (``autograde.inside.payload.run_encoded``), the checks' modules sealed before any cell ran
   (``_Seal``).

It sees no references, no solutions, no gradebook; the hidden checks' inputs reach it only after it
has sent the visible checks' outcomes. The grader judges the outcomes outside (autograde.verify).
"""

from __future__ import annotations

import json
import os
import sys
import types

from autograde.inside import nospawn, wire
from autograde.inside.cells import NEUTRAL_CELL_MAGICS, NEUTRAL_MAGICS, is_autograded_test, is_demo

OUTCOME_LIMIT = wire.FRAME_CAP  # bytes of one check's reply read from the answers' process
# the check name of a side record saying that the notebook changed the checks themselves
TAMPERED = wire.TAMPERED
# a step's wall-clock backstop, in multiples of its CPU-time limit (as autograde.inside.runner)
WALL_FACTOR = 5


def _function(value) -> types.FunctionType | None:
    """The Python function a value stands for: itself, a method's or a functools wrapper's
    (lru_cache)."""
    fn = getattr(value, "__func__", value)
    fn = getattr(fn, "__wrapped__", fn)
    return fn if isinstance(fn, types.FunctionType) else None


def _fingerprint(value) -> tuple:
    """Identity of a value and, for a function, of its code, defaults and closure (what a cell could
    swap)."""
    fn = _function(value)
    if fn is None:
        return (id(value),)
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(id(c.cell_contents))
        except ValueError:  # a cell not filled yet
            cells.append(0)
    return (id(value), id(fn.__code__), id(fn.__defaults__), id(fn.__kwdefaults__), tuple(cells))


# what the standard library caches on a class (copyreg, for deepcopy)
_LAZY_CLASS_ATTRS = {"__slotnames__"}


class _Seal:
    """The checks as they were before any cell ran: the module-level names of every module under the
    given prefixes (and of ``own``, this running module), each function's code, defaults and
    closure, each class's attributes. ``broken()`` names what changed since: a cell that rebinds
    ``engine._watch``, ``Watch.saw`` or a module in ``sys.modules`` changes what the checks observe
    in this process, which the answer shares."""

    def __init__(self, prefixes: tuple[str, ...], own: types.ModuleType) -> None:
        self.modules = {
            n: m
            for n, m in list(sys.modules.items())
            if m is not None
            and n != "__main__"
            and any(n == p or n.startswith(p + ".") for p in prefixes)
        }
        self.own = own
        self.state = self._state()
        # the functions sealed, by identity: an audit hook asks whether a swapped __code__ was one
        # of theirs
        self.functions = {
            id(f) for _, v in self._entries(any_class=True) if (f := _function(v)) is not None
        }

    def _entries(self, any_class: bool = False):
        """(key, value) of every sealed name: each module-level name, and the attributes of the
        classes there (the modules' own classes; with ``any_class``, every class they name)."""
        for name, module in [*self.modules.items(), ("(this process's checker)", self.own)]:
            for key, value in list(vars(module).items()):
                yield (name, key), value
                if isinstance(value, type) and (any_class or value.__module__ == module.__name__):
                    for attr, v in list(vars(value).items()):
                        yield (name, key, attr), v

    def _state(self) -> dict[tuple[str, ...], tuple]:
        out: dict[tuple[str, ...], tuple] = {
            ("sys.modules", n): (id(sys.modules.get(n)),) for n in self.modules
        }
        out.update((key, _fingerprint(value)) for key, value in self._entries())
        return out

    def broken(self) -> list[str]:
        """What changed: a name rebound or removed, or a class given a new attribute (a module's new
        names, such as a submodule imported later, change nothing the checks look up)."""
        now = self._state()
        changed = sorted(
            ".".join(k)
            for k in self.state.keys() | now.keys()
            if (k in self.state and now.get(k) != self.state[k])
            or (k not in self.state and len(k) == 3 and k[2] not in _LAZY_CLASS_ATTRS)
        )
        return (
            [f"changed {', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}"]
            if changed
            else []
        )


def _student_threads(history: object = None) -> str:
    """Names of live threads other than this one and the shell's history thread (``history``). The
    verification starts none of its own (tqdm's monitor is off), so any other thread is the
    notebook's doing: its worker, or a library's thread that runs its code (tqdm's monitor calling a
    subclass's display() ran torch.softmax for the answer, idling in tqdm's frames when the check
    began: threat model, white-box red team 21, B8)."""
    import threading

    me = threading.get_ident()
    busy = [t.name for t in threading.enumerate() if t.ident != me and t is not history]
    return ", ".join((busy + [f"process {pid}" for pid in _child_processes()])[:3])


def _child_processes() -> list[str]:
    """Pids of this process's children: the verification starts none, so any is the notebook's (a
    worker forked by os.forkpty at cell time computed torch.softmax for the answers: threat model,
    white-box red team 21, B12)."""
    pids: list[str] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                pids += f.read().split()
    except OSError:
        pass
    return pids


def _run_cells(shell, nb, skip: set[int], sink, limit_step) -> None:
    """The notebook's code cells but its tests and demonstrations (and ``skip``), each under the
    step limit, their output dropped into ``sink``."""
    import contextlib

    from course_lib.checks.rules import plain_cell  # what runs is what the readings read

    depth = sys.getrecursionlimit()  # put back after every cell (a cell may raise it to 10**6: D13)
    # decided before any cell runs: a cell the readings cannot parse is not run (IPython may compile
    # what ast.parse refuses, under a `from __future__` flag an earlier cell set: white-box red team
    # 24, E4), so nothing runs that no reading read
    runs = [
        code
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        and not (is_autograded_test(cell) or is_demo(cell) or index in skip)
        and _parses(cell.source)
        for code in [plain_cell(cell.source)]
    ]
    for code in runs:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            try:
                with limit_step():
                    # it reports errors
                    shell.run_cell(code, silent=True, store_history=False)
            except BaseException:  # an alarm that struck between IPython's own handlers
                pass
        sys.setrecursionlimit(depth)
        sink.seek(0)
        sink.truncate()


def _parses(source: str) -> bool:
    """Whether the readings parse the cell as IPython runs it (its clean-up and magics
    transformed, then ast.parse with no compiler flags: rules._cell_tree)."""
    from course_lib.checks.rules import _cell_tree

    try:
        return _cell_tree(source)[1] is not None
    except Exception:  # noqa: BLE001 - a cell no reading can take is not run
        return False


def _load_check_packages() -> None:
    """Import the check modules: they register the loaders of shared inputs (e.g. the model) when
    imported."""
    from course_lib.checks import engine

    for package in os.environ.get("AUTOGRADE_CHECK_PACKAGES", "course_lib.checks").split(","):
        try:
            engine.Registry(package).all()
        except Exception:  # a broken check module must not stop the other checks
            pass


def _every_case_fails(info: dict, busy: str) -> str:
    """The reply to a check with rules while another thread or process runs: the rules are watched
    in this thread only, and a thread or process the notebook left running could do the work."""
    why = (
        f"a thread or process your notebook started ({busy}) was still running when this check "
        "ran: the rules "
        "of this exercise cannot be checked next to it (answers must not leave threads or "
        "processes running)"
    )
    return json.dumps(
        [
            {"label": c["label"], "error": why, "mutated": []}
            for c in json.loads(info["payload"])["cases"]
        ]
    )


def _own_folder_modules() -> list[str]:
    """File names of imported modules that live in this process's working folder: written by the
    notebook's cells and imported (threat model, white-box red team 21, B9)."""
    here = os.path.realpath(os.getcwd()) + os.sep
    # torch names some module objects by a bare file name (torch.ops' namespaces: "_ops.py"):
    # absolute paths only
    paths = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
    return [
        os.path.basename(p)
        for p in paths
        if isinstance(p, str) and os.path.isabs(p) and os.path.realpath(p).startswith(here)
    ]


def _read_frame(fd: int, read=os.read) -> bytes:
    """One framed message (as wire.frame writes it) from a descriptor, read no further; b"" at its
    end."""
    head = b""
    while not head.endswith(b"\n") and len(head) < 24:
        byte = read(fd, 1)
        if not byte:
            return b""
        head += byte
    if not head.strip().isdigit():
        raise SystemExit("no framed message")
    data, n = bytearray(), int(head)
    while len(data) < n:
        chunk = read(fd, n - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _child() -> int:
    """The verification sandbox's first process, the relay: it holds the grader's pipes and runs no
    student cell.

    It forks the answers' process (``_answers``), which runs the notebook's cells with standard
    input and output on /dev/null and a socket to the relay as its only channel; the relay then asks
    it for one check at a time (the hidden checks' inputs only once the grader sent them, after the
    visible results went out) and writes what comes back to the grader, framed by itself: side
    records at once, each check's outcomes as the text of its reply. So a cell can neither write the
    grader's frames nor read its input, answer a check it was not asked, or see a hidden input
    before its check is asked (issue 37: a white-box red team wrote both frames from a cell, reading
    the hidden inputs from standard input). The relay is not dumpable: a process of the same uid
    cannot trace it, read its memory or take its descriptors (as autograde.inside.runner)."""
    import signal
    import socket

    from autograde.inside.runner import not_dumpable

    job = json.loads(_read_frame(0) or b"{}")
    if "notebook" not in job:
        raise SystemExit("no job on standard input")
    # before the fork: the answers' process starts not dumpable too, and never holds the relay's
    not_dumpable()
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # the grader's pipes: gone from this process before any cell runs
        os.dup2(null, 1)
        os.close(null)
        try:
            _answers(job, theirs.detach())
        finally:
            os._exit(0)
    theirs.close()
    wire.end_with_reader(1)  # the grader gone: this sandbox goes too (the relay is its pid 1)
    # a cell can write files into the sandbox's working folder; nothing the relay imports from now
    # on comes from it
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    try:
        return _relay(job, ours)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


RELAY_DEAD = (
    "the answers' process ended or broke the relay's protocol before this check was answered"
)


def _relay(job: dict, sock) -> int:
    """Ask the answers' process for each check's outcomes; write them to the grader (see
    ``_child``)."""

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]

    buf = bytearray()
    # why the answers' process can no longer be asked (then every later check says so)
    dead: list[str] = []

    # a check as a whole, failed
    unanswered = json.dumps([{"label": "*", "error": RELAY_DEAD, "mutated": []}])

    def ask(name: str, info: dict) -> str:
        if dead:
            return unanswered
        try:
            sock.sendall(wire.frame(json.dumps({"name": name, "info": info}).encode()))
            while True:
                side, message = wire.take_reply(buf, OUTCOME_LIMIT)
                for record in side:
                    write(wire.side_frame(record))  # at once, in order: what the grader has, stays
                if message is not None:
                    return message.decode("utf-8", errors="replace")
                chunk = sock.recv(1 << 20)
                if not chunk:
                    raise wire.Rejected("the answers' process closed its channel")
                buf.extend(chunk)
        except (OSError, wire.Rejected) as e:
            dead.append(str(e)[:300])
            print(f"relay: {dead[0]}", file=sys.stderr)
            return unanswered

    write(wire.frame(json.dumps({n: ask(n, info) for n, info in job["payloads"].items()}).encode()))
    if job.get("then"):
        hidden = json.loads(_read_frame(0) or b"{}").get("payloads", {})
        write(wire.frame(json.dumps({n: ask(n, info) for n, info in hidden.items()}).encode()))
    return 0


def quiet_shell(shell) -> None:
    """Make an IPython shell run cells as the verification does: no automagic (``config`` is the
    variable, never %config), shell lines and NEUTRAL_MAGICS do nothing and print nothing."""
    shell.automagic = False

    def nothing(*args, **kwargs):
        return None

    def no_output(*args, **kwargs):
        from IPython.utils.text import SList

        return SList()

    # an error's report costs no more than its line (white-box red team 23, D13: IPython formatted a
    # traceback of 10**6 frames for ~6 minutes, past the cell's CPU limit, after
    # sys.setrecursionlimit(10**6))
    shell.InteractiveTB.set_mode("Minimal")
    shell.system = shell.system_raw = shell.system_piped = nothing
    shell.getoutput = no_output
    # straight into the table (register_magic_function sets an attribute named after the magic,
    # and `config` is one its class already has)
    # (an alias such as %ls already runs through shell.system, which does nothing)
    for kind, names in (("line", NEUTRAL_MAGICS), ("cell", NEUTRAL_CELL_MAGICS)):
        for name in names:
            if not shell.alias_manager.is_alias(name):
                shell.magics_manager.magics[kind][name] = nothing


def _answers(job: dict, out_fd: int) -> None:
    """The answers' process: run the notebook's code cells, then answer the relay's requests, one
    check each.

    Why long: what it binds before the first cell runs (the write function, the frame makers, the
    seal, the audit hook) must be local names no cell can rebind, so they live in this one
    function's frame and closures."""
    # a module a cell writes into the working folder must not be what `import <an allowed module>`
    # finds (code that no reading of the text sees: threat model, white-box red team 20); the
    # course's modules come from PYTHONPATH
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    import contextlib
    import io
    import signal

    import nbformat

    read, write = os.read, os.write  # kept before any student code runs (a cell may replace os's)
    read_frame = _read_frame

    def send(payload: bytes) -> None:
        write(out_fd, b"%d\n" % len(payload))
        view = memoryview(payload)
        while view:
            view = view[write(out_fd, view) :]

    # C code: nothing a cell rebinds reaches it
    from json.encoder import encode_basestring_ascii as quote

    reported: set[tuple[str, str]] = set()

    # bound before any cell (wire is sealed below: its code swapped is seen)
    side_frame = wire.side_frame

    def send_side(key: tuple[str, str], payload: bytes) -> None:
        """A side record out at once: what the parent has, no cell can take back."""
        if key in reported or len(reported) >= 256:
            return
        reported.add(key)
        view = memoryview(side_frame(payload))
        while view:
            view = view[write(out_fd, view) :]

    def side(check: str, rule: str) -> None:
        send_side(
            (check, rule[:150]),
            b'{"check": %s, "rule": %s}' % (quote(check).encode(), quote(rule[:150]).encode()),
        )

    def side_steps(check: str, label: str, steps: int) -> None:
        send_side(
            (check, f"{label[:100]}\0{steps}"),
            b'{"check": %s, "case": %s, "steps": %d}'
            % (quote(check).encode(), quote(label[:100]).encode(), int(steps)),
        )

    real_exit = os._exit
    nb = nbformat.reads(job["notebook"], as_version=4)
    from IPython.core.interactiveshell import InteractiveShell

    _load_check_packages()
    from course_lib.checks import trace

    trace._listen()  # its audit hook, in place before any cell (it is part of the seal below)
    # with the codec: both sealed below, as the engine is
    from autograde.inside.payload import run_encoded

    # json too: the child writes its results with it (a white-box red team rewrote them through
    # json.dumps)
    sealed = tuple(
        p
        for p in (
            "course_lib.checks",
            "autograde",
            "json",
            *os.environ.get("AUTOGRADE_CHECK_PACKAGES", "").split(","),
        )
        if p
    )
    seal = _Seal(sealed, sys.modules[__name__])
    # bound now: rebinding _Seal.broken reaches nothing
    broken_seal, seal_functions = seal.broken, seal.functions

    def on_audit(event: str, args: tuple) -> None:
        # a checks' function's code swapped and back within one call leaves no trace for the seal:
        # seen as it happens (libraries swap their own: asyncio's types.coroutine sets __code__ when
        # IPython imports it)
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            if id(args[0]) in seal_functions:
                side(
                    TAMPERED,
                    "a function's code was replaced "
                    f"({getattr(args[0], '__qualname__', '?')!s:.80})",
                )

    sys.addaudithook(on_audit)
    step = int(os.environ.get("AUTOGRADE_STEP_TIMEOUT", "120"))
    skip = {int(i) for i in os.environ.get("AUTOGRADE_SKIP_CELLS", "").split(",") if i}

    # not an Exception: the engine must not swallow it as one case's error
    class StepTimeout(BaseException):
        pass

    def on_alarm(signum, frame):
        raise StepTimeout(
            f"took longer than {step} s"
            if signum == signal.SIGPROF
            else f"waited longer than {step * WALL_FACTOR} s"
        )

    # As in the kernel (autograde.inside.runner.CpuWatch): the limit counts CPU time, so a loaded
    # machine does not turn slow work into a timeout; a wall-clock backstop stops a call that
    # sleeps.
    signal.signal(signal.SIGPROF, on_alarm)
    signal.signal(signal.SIGALRM, on_alarm)

    class limit_step:
        def __enter__(self):
            signal.setitimer(signal.ITIMER_PROF, step)
            signal.alarm(step * WALL_FACTOR)

        def __exit__(self, *exc):
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.alarm(0)

    shell = InteractiveShell()
    quiet_shell(shell)  # no automagic; shell lines and %pip-like magics do nothing (NEUTRAL_MAGICS)
    history = getattr(shell.history_manager, "save_thread", None)
    sink = io.StringIO()
    import tqdm

    # no thread of its own next to the checks (a subclass that sets one is seen)
    tqdm.tqdm.monitor_interval = 0

    def refuse_exit(code=0):
        raise SystemExit(f"os._exit({code}) is not allowed while checking answers")

    # a cell that kills its process must not cost the other answers their check
    os._exit = refuse_exit
    import posix

    # the same C function under its other name (a white-box red team's exit status)
    posix._exit = refuse_exit
    # from here on no new process: a process a cell starts could be handed the channel to the relay
    # and answer for this one with code no reading sees (white-box red team 24, E8)
    nospawn.forbid_new_processes()
    _run_cells(shell, nb, skip, sink, limit_step)
    for why in broken_seal():
        side(TAMPERED, why)
    for name in _own_folder_modules():
        side(TAMPERED, f"a module imported from the notebook's own folder ({name[:80]})")
    hung: dict[str, str] = {}  # exercise -> the check whose call ran over the step limit

    def run_check(name: str, info: dict) -> str:
        fn = shell.user_ns.get(info["exercise"])
        if info.get("forbidden") and (busy := _student_threads(history)):
            return _every_case_fails(info, busy)
        if info["exercise"] in hung:
            # as in the kernel, where the test cell stops at its first endless call: one loop costs
            # one answer once
            why = (
                f"StepTimeout: not run: {info['exercise']} took longer than {step} s in "
                f"{hung[info['exercise']]}"
            )
            return json.dumps([{"label": "*", "error": why, "mutated": []}])
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), limit_step():
                return run_encoded(
                    fn,
                    info["payload"],
                    lambda rule: side(name, rule),
                    lambda label, steps: side_steps(name, label, steps),
                )
        # the student's error (a timeout, SystemExit) is the check's outcome
        except BaseException as e:
            if isinstance(e, StepTimeout):
                hung[info["exercise"]] = name
            return json.dumps([{"label": "*", "error": f"{type(e).__name__}: {e}", "mutated": []}])
        finally:
            sink.seek(0)
            sink.truncate()
            for why in broken_seal():
                side(TAMPERED, why)

    while True:  # one request, one reply, until the relay is done (it then kills this process)
        request = read_frame(out_fd, read)
        if not request:
            break
        request = json.loads(request)
        send(run_check(request["name"], request["info"]).encode())
    real_exit(0)  # a thread the student left running must not keep this process waiting


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        sys.exit(_child())
    print("usage: python -m autograde.inside.relay child  (job on standard input)", file=sys.stderr)
    sys.exit(2)
