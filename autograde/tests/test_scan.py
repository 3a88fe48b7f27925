"""The static scan flags each tampering pattern from issue 4 and nothing in the course's own
notebooks."""

from __future__ import annotations

import io
import os
import sys

import nbformat
import pytest

from autograde.course import REPO
from autograde.inside.scan import scan_notebook, scan_source, tampering

ATTACKS = {
    "np.allclose = lambda *a, **k: True": "assigns np.allclose",
    "import numpy\nnumpy.testing.assert_allclose = print": "assigns numpy.testing.assert_allclose",
    "torch.testing.assert_close = lambda *a, **k: None": "assigns torch.testing.assert_close",
    "import builtins\nbuiltins.AssertionError = Exception": "assigns builtins.AssertionError",
    "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass'])": "get_ipython()",
    "ip = get_ipython()\nip.ast_transformers.append(object())": "input/ast transformers",
    "import sys\nsys.modules['course_lib.checks'] = None": "sys.modules",
    "import sqlite3\nsqlite3.connect('gradebook.db')": "import sqlite3",
    "import subprocess\nsubprocess.Popen(['sleep', '999'])": "import subprocess",
    "import os\nos._exit(0)": "os._exit()",
    "import ctypes\nctypes.CDLL(None)": "import ctypes",
    "print(open('../../source/02/02.ipynb').read())": "solutions/",
    "import os\nos.kill(os.getppid(), 9)": "os.kill()",
    "setattr(__import__('numpy'), 'allclose', lambda *a: True)": "setattr()",
    "import torch\nsetattr(torch, 'allclose', lambda *a: True)": "setattr()",
    # a vocabulary loop that runs only when no line counter watches (the cost rules count lines)
    "import sys\nslow = sys.gettrace() is None and sys.getprofile() is None": "tracing hooks",
    "from sys import settrace as st\nst(None)": "tracing hooks",
    # a forbidden softmax reached through a computed name, then the checks' record of the
    # routines it used emptied by walking the callers' frames
    "import torch\n_f = getattr(torch.Tensor, 'soft' + 'max')": "getattr() with a computed name",
    "import inspect\nf = inspect.currentframe().f_back": "frame introspection",
    "import sys\nf = sys._getframe(1)": "frame introspection",
    "try:\n    1 / 0\nexcept Exception as e:\n    f = e.__traceback__": "frame introspection",
    "import gc\nw = [o for o in gc.get_objects() if type(o).__name__ == 'Watch']": "import gc",
    "import inspect\ncf = getattr(inspect, 'current' + 'frame')": "getattr() with a computed name",
    "try:\n    1 / 0\nexcept Exception as e:\n    tb = getattr(e, '__trace' + "
    "'back__')": "getattr() with a computed name",
    "t = 'tb'\nf = getattr(tb, f'{t}_frame')": "getattr() with a computed name",
    "from operator import attrgetter\nback = attrgetter('f_' + 'back')": "attrgetter() with a "
    "computed name",
}


@pytest.mark.parametrize("code, flag", list(ATTACKS.items()))
def test_each_attack_is_flagged(code, flag):
    flags = scan_source(code)
    assert any(flag.split("(")[0] in f for f in flags), flags


def test_honest_code_is_not_flagged():
    code = (
        "import numpy as np\nimport torch\nx = torch.softmax(torch.tensor([1.0]), "
        "-1)\nnp.random.seed(0)\n%matplotlib inline"
    )
    assert scan_source(code) == []
    # what a blind class wrote for reproducibility and configuration (flagged before, for a look at
    # every row)
    code = (
        "import torch\ntorch.backends.cudnn.deterministic = True\ntorch.backends.cudnn.benchmark "
        "= False\n"
        "class Cfg:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n            "
        "setattr(self, k, v)\n"
    )
    assert scan_source(code) == []
    # getattr with a literal name, or on the student's own objects, is ordinary code
    code = (
        "import torch\nf = getattr(torch, 'softmax')\nclass A:\n    pass\nname = "
        "'x'\ngetattr(A(), name, None)"
    )
    assert scan_source(code) == []


def test_red_team_16s_watch_scrub_is_flagged():
    """The whole answer cell of a replayed attack (a forbidden softmax whose record it erased; a
    blind red team's): flagged twice, for the computed name and for the frame walk."""
    code = (
        "import torch, inspect\n_f = getattr(torch.Tensor, 'soft' + 'max')\ndef softmax(logits):\n"
        "    r = _f(logits, -1)\n    f = inspect.currentframe().f_back\n    while f:\n"
        "        for v in list(f.f_locals.values()):\n            if type(v).__name__ == 'Watch':\n"
        "                for a in vars(v).values():\n                    if isinstance(a, (set, "
        "list, dict)): a.clear()\n"
        "        f = f.f_back\n    return r\n"
    )
    flags = scan_source(code)
    assert any("computed name" in f for f in flags) and any(
        "frame introspection" in f for f in flags
    ), flags


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "solutions").glob("*/*.ipynb")) + sorted((REPO / "notebooks").glob("*/*.ipynb")),
    ids=lambda p: p.name,
)
def test_course_notebooks_raise_no_flags(path):
    nb = nbformat.read(str(path), as_version=4)
    assert (
        scan_notebook(nb) == []
        and tampering(nb, course_lines=_course_lines(), runs=_verified) == []
    )


def _course_lines() -> set[str]:
    """The released notebooks' code lines, stripped: the course's own text (autograde.intake passes
    the release's)."""
    return {
        line.strip()
        for path in sorted((REPO / "notebooks").glob("*/*.ipynb"))
        for c in nbformat.read(str(path), as_version=4).cells
        if c.cell_type == "code"
        for line in c.source.splitlines()
        if line.strip()
    }


def _verified(cell) -> bool:
    from autograde.course import is_autograded_test, is_demo

    return not is_autograded_test(cell) and not is_demo(cell)


def _one_cell(code: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])


# What a white-box red team's forgers did from a cell of the checking process (issue 37), and the
# other ways into it
REACHING_IN = [
    # white-box red team 22: torch's tensor class given a method, through a class reached at run
    # time; the engine's own work after a call (copying, encoding the result) would run it unwatched
    "def softmax(logits):\n    type(logits).detach = lambda self: self\n    return logits",
    "import torch\nT = torch.Tensor\nT.clone = lambda self: self",
    "def f(x):\n    T = type(x)\n    T.tolist = lambda self: [1.0]\n    return x",
    "def f(x):\n    T = type(x)\n    setattr(T, 'tolist', print)\n    return x",
    "def f(x):\n    del type(x).clone\n    return x",
    "def f(x):\n    c = x.__class__\n    return c.__name__",
    "def f(x):\n    x.__class__.__name__ = 'T'\n    return x",
    "import os, stat\nfd = [n for n in range(3, 64) if "
    "stat.S_ISFIFO(os.fstat(n).st_mode)][0]\nos.write(fd, b'2\\n{}')",
    "import os\nhead = os.read(0, 24)",
    "import sys\njob = sys._getframe(3).f_locals['job']",
    "import inspect\nf = inspect.currentframe().f_back",
    "import json\n_d = json.dumps\njson.dumps = lambda o, *a, **k: _d(o)",
    "import os\nprint(os.listdir('/proc/self/fd'))",
    "f = open(3, 'wb', buffering=0)",
    "import sys\ndata = sys.stdin.buffer.read(10)",
    "import io, os\nw = io.FileIO(os.dup(1), 'wb')",
    "from course_lib.checks import engine\nengine._watch = lambda *a: None",
    "import sys\nsys.modules['json'] = None",
    "import json\nsetattr(json, 'dumps', str)",
    # the white-box red team's forger: only in the checking child, and the engine reached through a
    # constant name
    "import sys\nif sys.argv[-1:] == ['child']:\n    pass",
    "import course_lib\nE = getattr(course_lib.checks, 'engine')",
    "from course_lib.checks import VISIBLE\nchk = VISIBLE.get('softmax')",
    "from course_lib.checks import decode, Outcome",
    # the same reached by names built at run time, or without writing them (issue 37's open item)
    "import os\nw = vars(os)['wri' + 'te']",
    "import os\nw = os.__dict__['wri' + 'te']",
    "import os\ng = getattr\nw = g(os, 'wri' + 'te')",
    "import os, functools\nw = functools.partial(getattr, os)('write')",
    "import os\nname = 'write'\nw = getattr(os, name)",
    "from operator import attrgetter\nimport os\nw = attrgetter('wri' + 'te')(os)",
    "import os\nmatch os:\n    case object(write=w):\n        pass",
    "from os import *",
    "import importlib\nos_ = importlib.import_module('o' + 's')",
    "x = globals()['__builtins__']",
    "import sys\nf = sys._getframe",
    "import torch\nsm = torch.ops.aten._softmax",
    "import builtins\nopen_ = builtins.open",
    "import threading\nthreading.Thread(target=print).start()",
    "t = (1).__class__.__mro__[-1].__subclasses__()",
    "c = x.__class__",
    "from IPython import get_ipython",
    "locals()['x'] = 1",
    "v = vars(obj)\nv['f'] = g",
    "import traceback\ns = traceback.extract_stack()",
    "print(vars(self)['f'])",
    "import IPython\nIPython.core.getipython.get_ipython()",
    "from transformers import utils",
    "import transformers\nm = transformers.dynamic_module_utils",
    "print(x.__class__.__dict__)",
    "setattr(x.__class__, 'softmax', f)",
    "x.__class__.softmax = f",
    "exec('import os')",
    "def softmax(x):\n    return eval('x.soft' + 'max(-1)')",
    # code a reading of the cell's Python would not see: magics that run or write code, shell lines,
    # bodies
    "%run helper.py",
    "%%writefile helper.py\nimport os",
    "!cat /proc/self/cmdline",
    "out = !ls /proc/self/fd",
    "%%capture\nimport os\nw = vars(os)['write']",
    "%time w = vars(os)",
    "get_ipython().run_cell('import os')",
    # a no-op magic's line is still expanded by IPython ({...} evaluated) before the magic is called
    "%pip install {__import__('os').getpid()}",
    "%load_ext {x.y}",
    "%autoreload $x",
    # the relay's socket, by number or by module
    "import socket\ns = socket.socket(fileno=5)",
    "f = open(2 + 3, 'wb', buffering=0)",
    "f = open(int('5'), 'wb')",
    "from io import FileIO\nf = FileIO(5, 'wb')",
    # the same names through an import of another name
    "from os import write\nwrite(5, b'2\\n{}')",
    "import os as o\no.write(5, b'')",
    "from sys import argv\nprint(argv)",
    "import json as j\nj.dumps = str",
    "import json as j\nsetattr(j, 'dumps', str)",
    "from sys import _getframe",
    # the line counter's tracing, and torch's own ways of intercepting or registering calls
    "import sys\nt = sys.gettrace()\nsys.settrace(None)",
    "from sys import settrace as st\nst(None)",
    "from torch.overrides import TorchFunctionMode\nclass M(TorchFunctionMode):\n    pass",
    "from torch import ops\nf = ops.aten.softmax",
    # the standard library's own name resolvers (the checks' watch behind the profile hook, the
    # tracing hooks, the trace module's counters: threat model, white-box red team 20, A1, A2, A7),
    # and other modules outside the list an answer may import
    "import pydoc\nhook = pydoc.locate('sys.get' + 'profile')()",
    "from string import Formatter\nw = Formatter().get_field('0.__se' + 'lf__', (hook,), {})[0]",
    "import string\nw = string.Formatter().get_field('0.x', (hook,), {})",
    "from typing import get_type_hints\ndef f(x: 'vars(os)'):\n    pass\nget_type_hints(f)",
    "import logging.config\nlogging.config.valid_ident('x')",
    "import unittest.mock",
    "import subprocess",
    "from . import sibling",
    "import stat, struct",
    # the relay's socket opened by a number or a path the text does not write
    "for fd in range(3, 30):\n    f = open(fd, 'wb', buffering=0)",
    "p = '/proc/self/fd/' + str(n)\nf = open(p, 'wb')",
    "from pathlib import Path\nPath('/proc/self/fd/' + str(n)).write_bytes(b'x')",
    "import os\nfd = os.open(p, 1)",
    "f = open(f'/proc/self/fd/{n}', 'wb')",
    # white-box red team 21: a string evaluated through singledispatch's get_type_hints (B1),
    # refused modules held as attributes of allowed ones (B2, B3), an automagic %run on a line that
    # is valid Python (B4), the tracing hooks through another module's attribute, a name imported in
    # one cell and used in the next
    "import functools\nclass A:\n    @functools.singledispatchmethod\n    def f(self, x):\n       "
    " pass",
    "from functools import singledispatchmethod as sd",
    "import typing\nf = typing.get_type_hints",
    "import string\nt = string.Formatter",
    "from typing import ForwardRef",
    "import tiktoken.registry\nr = tiktoken.registry.pkgutil.resolve_name('torch._refs.softmax')",
    "from tiktoken.registry import pkgutil",
    "import tracemalloc\np = tracemalloc.pickle.loads",
    "import logging\nT = logging.threading.Thread",
    "import torch\nP = torch.ctypes.CDLL",
    "import torch\nP = torch.cuda.tunable.concurrent.futures.ThreadPoolExecutor",
    "from torch.cuda import tunable as t\nP = t.concurrent.futures",
    "import tqdm\ntqdm.sys.settrace(None)",
    "import psutil\npsutil.os.write(5, b'')",
    "import torch.testing\ntorch.testing.FileCheck",
    "from torch.testing import assert_close, FileCheck",
    "%cd /tmp",
    "import dataclasses, torch\nS = dict(dataclasses.inspect.getmembers(torch))",
    "import typing\nNS = typing.types",
    "import matplotlib\nr = matplotlib.subprocess.run",
    "import matplotlib\nm = matplotlib.importlib.util",
    "import psutil\ns = psutil.socket.socket(fileno=fd)",
    "import os\nfds = [n for n in range(9) if os.stat(n)]",
    "import sys\nsys.path.insert(0, '')\nimport statistics",
    "from sys import path\npath.append('.')",
    "import sys\nsys.meta_path.insert(0, finder)",
    "class L(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, func, types, "
    "args=(), kwargs=None):\n"
    "        return func(*args)",
    "def softmax(x):\n    return x.clone().as_subclass(K)",
    # white-box red team 24 (E1): numpy hands a ufunc to an argument's __array_ufunc__, so a
    # module-level self-test call gave a class the forbidden routine; bound without a def or by name
    "class _Tap:\n    def __array_ufunc__(self, ufunc, method, *a, **k):\n        _Tap.op = ufunc\n"
    "        return 0.0\nnp.logaddexp(_Tap(), 0.0)",
    "class _Tap:\n    __array_ufunc__ = _grab",
    "setattr(_Tap, '__array_function__', _grab)",
    "T = type('T', (), {'__array_wrap__': _grab})",
    # E4: a grammar the readings do not parse for every later cell
    "from __future__ import barry_as_FLUFL",
    # F6's controls: a magic line IPython expands (evaluates) before the magic is called
    "%env X={os.system('id')}",
    "import numpy as np\nm = np.testing.extbuild.build_and_import_extension('m', [])",
    "from numpy.testing import extbuild",
    "%%html {x}\n<b>a</b>",
    # F3's controls: what sits beside the names now allowed
    "import numpy as np\nw = np.lib.stride_tricks.as_strided(x, (3,), (8,))",
    "from numpy.lib.stride_tricks import as_strided",
    "import IPython.core.display as d\nd.os.system('x')",
    "from IPython.core.display import display_functions",
    "import sys\nprint(sys.path.insert(0, ''))",
    "from __future__ import annotations, barry_as_FLUFL",
    "class L(torch.Tensor):\n    __torch_function__ = classmethod(_grab)",
    # B12: a process forked under another name, fed through descriptors under other names
    "import os\npid, fd = os.forkpty()",
    "import os\nos.eventfd_write(w, 1)",
    "from os import posix_spawnp",
    "import os\nos.register_at_fork(after_in_child=f)",
    # white-box red team 25, E10/E11: the collector switched on (under another module's name) and
    # finalizers, which a collection inside the counter's or the watch's callback runs unseen
    "import torch\ntorch.cuda.graphs.gc.enable()",
    "import torch\ncollector = torch.cuda.graphs.gc",
    "import gc\ngc.set_threshold(1)",
    "class Later:\n    def __del__(self):\n        pass",
    "import weakref\nweakref.finalize(object(), print)",
    # white-box red team 25's allowances, kept narrow: the module table only asked `in`, numpy's
    # testing module only for its assertions, unittest without mock
    "import sys\nmods = [m for m in sys.modules]",
    'import sys\nt = sys.modules["torch"]',
    'import sys\nok = "a" in sys.modules["torch"].__dict__',
    "import numpy.testing as npt\nf = npt",
    "import numpy.testing as npt\nnpt.build_err_msg",
    "import unittest.mock",
    "from unittest import mock",
    'import unittest\nunittest.mock.patch("torch.softmax")',
    # B5: identifiers Python reads as their NFKC form (fullwidth letters), past patterns that read
    # the raw text
    "from course_lib.checks import \uff45\uff4e\uff47\uff49\uff4e\uff45",
    "try:\n    raise ValueError\nexcept ValueError as e:\n    F = "
    "e.__traceback__.\uff54\uff42_frame",
]
# cells that are harmless alone and reach in together: a name imported in one cell, used in the next
REACHING_IN_ACROSS_CELLS = [
    ("import os as o", "o.write(5, b'')"),
    ("from tiktoken import registry as r", "r.pkgutil"),
    ("import sys as s", "s.settrace(None)"),
]
HONEST = [
    # white-box red team 25 (F1-F3, F6): the Colab test, a unittest self-test, a shell cell, the
    # editor's and debugger's magics, torch's reproducibility switches, a version printed, numpy's
    # assertions under an alias, Hugging Face's processors where the course imports them from
    'import sys\nIN_COLAB = "google.colab" in sys.modules',
    'import sys\nIN_COLAB = "google.colab" in sys.modules  # am I on Colab?\nprint(IN_COLAB)',
    'import sys\nif "google.colab" not in sys.modules:\n    print("local")',
    "import unittest\nclass T(unittest.TestCase):\n    def test_sum(self):\n"
    "        self.assertAlmostEqual(1.0, 1.0)\nunittest.main(argv=[''], exit=False)",
    '%%bash\nnvidia-smi || echo "no GPU"',
    "%reset -f",
    "%autosave 60",
    "%hist -n -l 3",
    "%prun -l 5 softmax(x)",
    "%tb",
    "%pdb on",
    "torch.backends.cudnn.deterministic = True\ntorch.backends.cudnn.benchmark = False",
    "torch.backends.cuda.matmul.allow_tf32 = False",
    "import IPython\nprint(IPython.__version__)",
    "try:\n    from einops import rearrange\nexcept ImportError:\n    rearrange = None",
    "from typing_extensions import Literal",
    "from tqdm.notebook import tqdm\nfor _ in tqdm(range(3)):\n    pass",
    "import numpy.testing as npt\nnpt.assert_allclose(softmax(x), ref, rtol=1e-5)",
    "from transformers.generation.logits_process import TopKLogitsWarper\nw = "
    "TopKLogitsWarper(top_k=3)",
    # white-box red team 24 (F1): exploration imports of data and plotting packages the grading
    # environment does not have (they fail in the kernel; test_the_absent_imports_are_absent)
    "import pandas as pd\ndf = pd.DataFrame({'token': [1, 2]})\ndf",
    "from __future__ import annotations\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return x",
    "import datetime\nprint(datetime.datetime.now())",
    "import numpy as np\nnp.testing.assert_allclose(softmax(x), ref, rtol=1e-6)",
    "from numpy.testing import assert_allclose\nassert_allclose(softmax(x), ref)",
    # F6: a notebook's settings and notes
    "%config InlineBackend.figure_format = 'retina'",
    "%env TOKENIZERS_PARALLELISM=false",
    "%%html\n<b>softmax</b>: notes",
    "%pwd",
    # F3: where imports look printed, an old tutorial's display import, 05's natural n-gram tool
    "import sys\nprint(sys.version)\nprint(sys.path)  # why does my import fail?",
    "from IPython.core.display import HTML\nHTML('<b>softmax</b> done')",
    "from numpy.lib.stride_tricks import sliding_window_view\nw = sliding_window_view(x, 3)",
    "import numpy as np\nw = np.lib.stride_tricks.sliding_window_view(x, 3)",
    "from google.colab import drive\ndrive.mount('/content/drive')",
    "import hashlib\nprint(hashlib.sha256(b'x').hexdigest())",
    "from scipy.stats import entropy\nprint(entropy([0.5, 0.5]))",
    "try:\n    import seaborn as sns\n    sns.set_theme()\nexcept ImportError:\n    pass",
    # white-box red team 22's fairness findings: a docstring line starting with "run" (IPython's
    # automagic applies to one-line cells only: C3), and a student's own self-test against torch's
    # softmax with torch.testing (C6)
    'def softmax(logits):\n    """Softmax.\n\n    run over the last axis: subtract the max.\n    '
    '"""\n    return logits',
    "x = 1\nrun = 2\nrun",
    # white-box red team 23 (D3, D5): a variable displayed, Colab reflexes: the verification runs no
    # automagic, shell line or %pip-like magic (autograde.inside.relay.quiet_shell); B4's `run
    # #a.py` is a name there
    "config = {'temperature': 0.7}\nconfig",
    "config",
    "debug  # on while fixing softmax",
    "run  #a.py",
    "run",
    "!nvidia-smi",
    "%pip show torch",
    "%pip install -q einops",
    "%load_ext autoreload\n%autoreload 2",
    "import torch\nx = torch.randn(3, 5)\ntorch.testing.assert_close(x.softmax(-1), "
    "torch.softmax(x, dim=-1))",
    "from torch.testing import assert_close\nimport torch\nassert_close(torch.ones(1), "
    "torch.ones(1))",
    # C6b: a type named in an error message
    "def f(x):\n    raise TypeError(f'expects a tensor, got {x.__class__.__name__} "
    "({x.__class__.__qualname__})')",
    # white-box red team 23, D10: words of the course in a comment or a docstring, which never run
    "# torch is already in sys.modules after the first cell, so importing it again is "
    "free\nimport torch",
    "# from course_lib.checks import check: the set-up cell's line\nx = 1  # softmax.__code__ is "
    "a code object",
    'def f(x):\n    """Like course_lib.checks.engine, read f_locals of sys.stdin via os.write(1, '
    'b"")."""\n    return x',
    # white-box red team 23, D5: a namespace or an error shown
    "class Box:\n    def __repr__(self):\n        return f'Box({vars(self)})'\n\n    def "
    "show(self):\n"
    "        print(self.__dict__)",
    "print(locals())",
    "import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    traceback.print_exc()",
    # white-box red team 23, D5: IPython's display by its package, 03's self-test against Hugging
    # Face
    "import IPython\nIPython.display.display('x')",
    "from transformers import TopKLogitsWarper\nimport torch\nx = torch.randn(2, 50)\n"
    "print(TopKLogitsWarper(top_k=5)(None, x))",
    # white-box red team 23, D5: a class printed, formatted or compared
    "import torch\nx = torch.ones(1)\nprint(type(x), x.__class__)\nok = x.__class__ is "
    "torch.Tensor\ns = f'{x.__class__}'",
    # attributes of one's own objects, and a type looked at, not changed
    "class Box:\n    pass\nb = Box()\nb.x = 1\nkind = type(b)\nprint(kind.__name__, type(b) is "
    "Box)",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.set_title('t')\nimport "
    "torch\nt = torch.ones(2)\nT = type(t)\nok = isinstance(t, T)",
    "try:\n    1 / 0\nexcept Exception as e:\n    tb = e.__traceback__\n    import sys\n    "
    "print(sys.exc_info())",
    "with open('notes.txt', 'w') as f:\n    f.write('x')",
    "import gc\ngc.collect()",
    "import tracemalloc\ntracemalloc.start()",
    "import json\nprint(json.dumps({'a': 1}))",
    "import os\nprint(os.environ.get('HOME'), os.getcwd())",
    "import sys\nprint('warning', file=sys.stderr)",
    "from course_lib.checks import check, check_all\ncheck('softmax', softmax)",
    # a student looking at memory while exploring 04 (process plumbing of their own, not the
    # checker's)
    "import psutil\nprint(psutil.Process().memory_info().rss)",
    "print(open('/proc/self/status').read()[:200])",
    "import sys\nprint('to the terminal', file=sys.__stdout__)",
    "class L(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        "
    "self.w = getattr(self, 'w', None)",
    "n = xs.__len__()\nprint(torch.__version__)\nseen = set(ids)\nhit = "
    "list(map(seen.__contains__, ids))",
    "import math, itertools, collections\nc = collections.Counter(ids)",
    "%matplotlib inline\n%time y = softmax(x)\ntorch.topk?",
    "%%time\nout = generate(model, ids, 8)",
    "def f(:\n    pass",  # a syntax error: it does not run, it hides nothing
    "import logging, warnings\nlogging.warning('doubling %s', 2)\nwarnings.warn('careful')",
    "with open(f'notes_{i}.txt', 'w') as f:\n    f.write('x')\nfrom pathlib import Path\np = "
    "Path('out.txt')",
    "from typing import Optional\nfrom collections import defaultdict, Counter\nimport "
    "dataclasses, string\n"
    "letters = string.ascii_letters\nimport torch.nn.functional as F\nfrom course_lib.generate "
    "import greedy",
    # names that look like the refused ones: torch.select is a function, `run = ...` an assignment
    "import torch\nrow = torch.select(x, 0, 1)\nfrom functools import partial, reduce, lru_cache\n"
    "from typing import List, Tuple\nrun = 3\nrun(1)\ncdf = x.cumsum(-1)\n"
    "load = 2\ncd = load + run",
    "import numpy as np\nr = np.random.default_rng(0).random(3)\nimport torch\nq = "
    "torch.random.manual_seed(0)",
    "import os\nsize = os.stat('notes.txt').st_size",
]


@pytest.mark.parametrize("code", REACHING_IN)
def test_code_that_reaches_into_the_checking_process_is_tampering(code):
    assert tampering(_one_cell(code)), code


def test_every_attribute_named_like_a_refused_module_is_listed():
    """The reading refuses a refused module's name inside a dotted name (tiktoken.registry.pkgutil),
    except for the libraries' public attributes that only share such a name (torch.select is a
    function): recomputed here from the installed libraries (in a fresh process importing what the
    notebooks import, so that the answer does not depend on what other tests loaded): a new
    version's collision fails this test, not a student."""
    import json
    import subprocess

    from autograde.inside.scan import ATTRIBUTES_NAMED_LIKE_MODULES

    probe = """
import json, sys, types, warnings
warnings.simplefilter("ignore")
import torch, torch.nn.functional, numpy, tiktoken, matplotlib.pyplot, tqdm, psutil
from autograde.inside.scan import _allowed_import, _module_names
print(json.dumps(sorted(f"{name}.{k}" for name, m in list(sys.modules.items())
      if isinstance(m, types.ModuleType) and _allowed_import(name)
      and not any(p.startswith("_") for p in name.split("."))
      for k, v in list(vars(m).items()) if k in _module_names() and not k.startswith("_")
      and not _allowed_import(k) and not isinstance(v, types.ModuleType))))
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert set(json.loads(out.stdout)) - ATTRIBUTES_NAMED_LIKE_MODULES == set()


@pytest.mark.parametrize("cells", REACHING_IN_ACROSS_CELLS)
def test_a_name_imported_in_one_cell_is_read_in_the_next(cells):
    """White-box red team 21's imports alias a module in one cell and use it in another: the reading
    binds the names of the whole notebook's imports. Control: each cell alone is clean (the alias
    alone names nothing)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    assert tampering(nb), cells
    assert tampering(_one_cell(cells[0])) == [] and tampering(_one_cell(cells[1])) == [], cells


def test_honest_code_is_not_tampering_and_neither_is_any_answer_in_the_corpora():
    """Tampering fails every check of a notebook: no honest pattern, and no file of the
    correct-answer and bug-zoo corpora (bodies that compute, right or wrong), may trip it."""
    for code in HONEST:
        assert tampering(_one_cell(code)) == [], code
    files = sorted((REPO / "autograde" / "alternatives").rglob("*.py")) + sorted(
        (REPO / "autograde" / "bugzoo").rglob("*.py")
    )
    assert len(files) > 400
    lines = _course_lines()
    hits = [f.name for f in files if tampering(_one_cell(f.read_text()), course_lines=lines)]
    assert hits == []


def test_a_module_the_course_imports_for_its_demos_is_still_refused_in_the_students_lines():
    """White-box red team 22 (C8): 01's set-up cell imports inspect for its demo cells; the line is
    the course's, so its import was exempt, and a student's
    `dict(inspect.getmembers(F))["scaled_dot_product_" + "attention"]` read clean. Uses of such a
    module are read on their own lines. Control: the course's demo line copied verbatim stays the
    course's."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import inspect\nimport torch.nn.functional as F"),
            nbformat.v4.new_code_cell(
                'sd = dict(inspect.getmembers(F))["scaled_dot_product_" + "attention"]'
            ),
        ]
    )
    course = {
        "import inspect",
        "import torch.nn.functional as F",
        "print(inspect.getsource(course_lib.model.apply_rope))",
    }
    assert tampering(nb, course_lines=course)
    demo = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import inspect\nimport course_lib"),
            nbformat.v4.new_code_cell("print(inspect.getsource(course_lib.model.apply_rope))"),
        ]
    )
    assert tampering(demo, course_lines=course) == []


def test_a_course_line_copied_verbatim_is_the_courses_unless_it_runs_a_shell_or_a_magic():
    """`%pip install -q --no-deps {COURSE_GIT_URL}` is a release line (the Colab cell,
    a demo cell the verification does not run); copied into an answer cell after binding
    COURSE_GIT_URL, it would run the student's shell text unread. 01's `weight = getattr(layer,
    name).weight`, copied, stays the course's."""
    lines = _course_lines()
    pip = next(line for line in lines if line.startswith("%pip install"))
    assert tampering(
        _one_cell(f"COURSE_GIT_URL = 'x; cat /proc/1/environ'\n{pip}"), course_lines=lines
    )
    assert tampering(_one_cell("weight = getattr(layer, name).weight"), course_lines=lines) == []
    # control: not a course line
    assert tampering(_one_cell("weight = getattr(layer, name).weight")) != []


def test_red_team_18s_builtin_vocabulary_loops_are_flagged_and_honest_builtins_are_not():
    """A loop over the vocabulary run by C builtins makes no Python line (the cost checks cannot
    count it); the scan asks for a look. Honest uses of the same builtins, over ids or a history,
    raise nothing."""
    looped = [
        "table = [list(map(set(r).__contains__, range(V))) for r in hist.tolist()]",
        "banned = list(compress(range(logits.shape[-1]), map(seen.__contains__, zip(range(V)))))",
        "counts = list(map(c.__getitem__, range(logits.size(-1))))",
        "m = list(map(f, range(vocab_size)))",
        "n = logits.shape[-1]\nhit = list(filter(seen.__contains__, range(n)))",
        # the vocabulary made a list first, then handed to map (threat model, white-box red team 20,
        # A5); and other sized sources
        "vocab = torch.arange(logits.shape[-1]).tolist()\nbanned = list(map(follow.__contains__, "
        "vocab))",
        "hit = list(map(f, islice(count(), V)))",
        # white-box red team 21, B11: a key function called per item by C code
        "banned = sorted(range(V), key=follow.__contains__)[-k:]",
        "best = max(range(logits.shape[-1]), key=f)",
        "acc = reduce(g, range(V), 0)",
        # white-box red team 23, D8: a callable run per element by torch or numpy, given a C method
        "banned = torch.arange(V).apply_(follow.__contains__)",
        "hit = np.frompyfunc(follow.__contains__, 1, 1)(np.arange(V))",
        "f = np.vectorize(follow.__contains__)",
        "t.map_(t, seen.get)",
        # white-box red team 22, C4: a list display, a sort method on a sized list, a helper's
        # parameter
        "hit = list(filter(follow.__contains__, [*range(V)]))",
        "vocab = list(range(V))\nvocab.sort(key=follow.__contains__, reverse=True)",
        "def _keep(s, r):\n    return list(filter(s.__contains__, r))\n\n\nhit = _keep(follow, "
        "range(V))",
        # white-box red team 25, E5: the ids 0..V-1 made without range or arange
        "mask = list(map(seen.__contains__, np.flatnonzero(np.ones(V))))",
        "mask = list(map(seen.__contains__, (torch.ones(V).cumsum(0) - 1).tolist()))",
        "mask = list(map(seen.__contains__, np.nonzero(np.ones(logits.shape[-1]))[0]))",
    ]
    for src in looped:
        assert any("over range(<a size>)" in f for f in scan_source(src)), src
    honest = [
        "pairs = list(zip(ids[:-1], ids[1:]))",
        "rows = list(map(len, seqs))",
        "grams = set(zip(*[r[i:len(r) - n + 1 + i] for i in range(n)]))",
        "for v in range(V):\n    pass",
        "xs = list(map(float, range(10)))",
        "rows = ids.tolist()\nout = list(map(len, rows))",
        "prefix = tuple(row[L - n + 1:])",
        "layers = tuple(range(model.config.n_layer))",
        # a lambda key is Python code: its lines are counted (an honest beam search sorts candidates
        # so)
        "order = sorted(range(len(scores)), key=lambda i: -scores[i])[:b]",
        "xs = [*range(4)]\nvocab = list(range(V))\nvocab.sort()\nvocab.sort(key=lambda v: -v)",
        "def _keep(s, r):\n    return list(filter(s.__contains__, r))\n\n\nhit = _keep(follow, "
        "ids)",
        "t = torch.zeros(3).apply_(lambda v: v + 1)",
        "f = np.vectorize(lambda v: v * 2)",
    ]
    for src in honest:
        assert scan_source(src) == [], src


def test_a_frame_s_trace_switches_are_tampering():
    """White-box red team 23 (D6): 05's cost rule counts 'line' events, and CPython sends a frame's
    only while its f_trace_lines is true; an async generator's frame, reached as `agen.ag_frame` (no
    frame-walking call), set `f_trace_lines = False` and ran the O(V) loop uncounted: 211 lines for
    49,152 steps, 20/24 unflagged. The frame and the switches are the checking process's business:
    tampering. Control: the same loop, plain."""
    attack = (
        "async def _ban_all(out_row, follow, V):\n    for v in range(V):\n        if v in follow:\n"
        "            out_row[v] = float('-inf')\n    yield None\n\ndef _quietly(agen):\n"
        "    agen.ag_frame.f_trace_lines = False\n    try:\n        agen.asend(None).send(None)\n"
        "    except StopIteration:\n        pass\n"
    )
    for variant in (
        attack,
        attack.replace("agen.ag_frame.f_trace_lines = False", "agen.ag_frame.f_trace = None"),
        "def f(g):\n    g.gi_frame.f_trace_opcodes = True\n",
        "def f(c):\n    return c.cr_code\n",
    ):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(variant)])
        flags = scan_notebook(nb)
        assert any("frame introspection" in f for f in flags), variant
        assert tampering(nb, flags, set(), runs=lambda c: True), variant
    plain = attack.replace("    agen.ag_frame.f_trace_lines = False\n", "")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(plain)])
    assert scan_notebook(nb) == [] and tampering(nb, [], set(), runs=lambda c: True) == []


def test_the_verification_runs_no_automagic_shell_line_or_neutral_magic(tmp_path):
    """What makes the lines above plain (white-box red team 23, D3/D5; red team 21's B4): the
    verification's shell (relay.quiet_shell) reads `run  #a.py` as a name and a comment, `config` as
    the variable, and does nothing for `!cmd`, `x = !cmd` and %pip/%load_ext/%autoreload. Ground
    truth: IPython itself, with and without it."""
    from IPython.core.interactiveshell import InteractiveShell

    from autograde.inside.relay import quiet_shell

    shell = InteractiveShell.instance()
    try:
        assert shell.automagic
        shell.run_cell(f"!touch {tmp_path / 'control'}")
        assert (tmp_path / "control").exists()  # control: a plain shell runs the line
        quiet_shell(shell)
        shell.run_cell("config = {'t': 0.7}")
        assert shell.run_cell("config").result == {"t": 0.7}
        # not %run of '#a.py'
        assert isinstance(shell.run_cell("run  #a.py").error_in_exec, NameError)
        marker = tmp_path / "quiet_shell_marker"
        for line in (
            f"!touch {marker}",
            f"out = !touch {marker}",
            "%pip install --no-index nothing-at-all",
            "%load_ext no_such_extension",
            "%autoreload 2",
            # white-box red team 24, F6
            "%config InlineBackend.figure_format = 'retina'",
            "%env QUIET_SHELL_MARKER=1",
            "%xmode Plain",
            f"%%html\n<b>{marker}</b>",
            f"%%javascript\nconsole.log('{marker}')",
            # white-box red team 25, F1/F3: nothing of these runs, %reset empties nothing
            f"%%bash\ntouch {marker}",
            f"%%script bash\ntouch {marker}",
            "%reset -f",
            f"%prun -q open('{marker}', 'w')",
            "%autosave 60",
            "%pdb on",
            "%tb",
            "%hist -n -l 3",
        ):
            result = shell.run_cell(line)
            assert result.success and not marker.exists(), line
        assert shell.user_ns["config"] == {"t": 0.7}  # %reset -f emptied nothing
        assert list(shell.user_ns["out"]) == []
        assert "QUIET_SHELL_MARKER" not in os.environ
    finally:
        InteractiveShell.clear_instance()


def test_timing_magics_run_and_are_read_as_the_code_they_time():
    """White-box red team 23 (D7): `%time softmax, log_softmax = helpers` rebound the answers inside
    a string no reading parsed (20/26 unflagged), and `%timeit -n1 -r1 global _x; import inspect as
    _x` hid a refused import from the tampering scan. The verification now runs a timing magic as
    its statement (rules.plain_cell) and both readings read that same text. Ground truth: the
    relay's own cell runner on a real IPython shell."""

    from course_lib.checks.rules import notebook_violations

    for cell in (
        "%timeit -n1 -r1 global _x; import inspect as _x",
        "%timeit -n 1 import inspect",
        "%%timeit -n1 import inspect\npass",
        "%time import inspect",
    ):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        assert tampering(nb, scan_notebook(nb), set(), runs=lambda c: True), cell
    helper = "import numpy as np\n\ndef _np(x):\n    return np.logaddexp(x, x)\n"
    honest = "def log_softmax(x):\n    s = x - x.max()\n    return s - s.exp().sum().log()\n"
    for cell in ("%time log_softmax = _np", "%timeit -n1 -r1 global _h; _h = _np"):
        assert notebook_violations([helper, honest, cell], "log_softmax", ["numpy.logaddexp"]), cell
    assert (
        notebook_violations(
            [helper, honest, "%time y = _np(2.0)"], "log_softmax", ["numpy.logaddexp"]
        )
        == []
    )
    ns = _run_in_quiet_shell([helper, honest, "%time log_softmax = _np", "%%time\nz = 3"])
    assert ns["log_softmax"] is ns["_np"] and ns["z"] == 3


def test_an_endless_recursion_costs_the_verification_no_more_than_its_cell():
    """White-box red team 23 (D13): `sys.setrecursionlimit(10**6)` and an endless recursion in a
    last cell held a worker 965 s and failed every honest answer (timeout): IPython formats the
    traceback of every frame (~0.38 ms each, measured: 23 s of CPU at 60,000 frames), after the
    cell's CPU limit had fired. The verification's shell reports errors in one line and puts the
    recursion limit back after each cell. Truth from the arithmetic: at 30,000 frames the per-frame
    formatting alone would cost ~11 s of CPU; the cell must cost under 3 s (CPU time, so a loaded
    machine does not change it)."""
    import time

    from IPython.core.interactiveshell import InteractiveShell

    from autograde.inside.relay import _run_cells, quiet_shell

    depth = sys.getrecursionlimit()
    cell = "import sys\nsys.setrecursionlimit(30000)\ndef r(n):\n    return r(n + 1)\nr(0)\n"
    shell = InteractiveShell.instance()
    try:
        quiet_shell(shell)

        class Limit:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        t0 = time.process_time()
        _run_cells(shell, nb, set(), io.StringIO(), Limit)
        assert time.process_time() - t0 < 3.0
        assert sys.getrecursionlimit() == depth
    finally:
        sys.setrecursionlimit(depth)
        InteractiveShell.clear_instance()


def test_the_absent_imports_are_absent_where_notebooks_are_graded():
    """scan.ABSENT_IMPORTS are allowed because importing them fails in the grading kernel (white-box
    red team 24, F1): were one installed, its code would run unread, so this fails until it is
    reviewed and moved to the allowed list or taken off."""
    import importlib.util

    from autograde.inside.scan import ABSENT_IMPORTS

    def installed(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # its package (google, of google.colab) is absent too
            return False

    assert [m for m in ABSENT_IMPORTS if installed(m)] == []


def _run_in_quiet_shell(cells: list[str]) -> dict:
    """The namespace after the relay's own cell runner ran ``cells`` on a real IPython shell set up
    as the verification's (relay.quiet_shell)."""
    from IPython.core.interactiveshell import InteractiveShell

    from autograde.inside.relay import _run_cells, quiet_shell

    class Limit:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    shell = InteractiveShell.instance()
    try:
        quiet_shell(shell)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        _run_cells(shell, nb, set(), io.StringIO(), Limit)
        return dict(shell.user_ns)
    finally:
        InteractiveShell.clear_instance()


E6_FORMS = (
    "\n%%time\nlog_softmax = _np",
    ">>> %%time\n... log_softmax = _np",
    ">>> %time log_softmax = _np",
    "In [3]: %time log_softmax = _np",
    "%%time\n%%capture\nlog_softmax = _np",
    "  %%time\n  log_softmax = _np",
)


@pytest.mark.parametrize("cell", E6_FORMS)
def test_a_timing_magic_after_ipythons_clean_up_is_read_as_the_code_it_runs(cell):
    """White-box red team 24 (E6): IPython finds magics after its clean-up (leading blank lines,
    common indentation, `>>> ` and `In [3]: ` prompts); plain_cell rewrote only a magic on the raw
    first line, so "\\n%%time\\nBODY" ran BODY and the rules read a string (20/26, unflagged).
    Ground truth: the relay's cell runner on a real IPython shell rebinds the answer; the reading
    sees the rebinding."""

    from course_lib.checks.rules import notebook_violations

    helper = "import numpy as np\n\ndef _np(x):\n    return np.logaddexp(x, x)\n"
    honest = "def log_softmax(x):\n    s = x - x.max()\n    return s - s.exp().sum().log()\n"
    assert notebook_violations([helper, honest, cell], "log_softmax", ["numpy.logaddexp"]), cell
    ns = _run_in_quiet_shell([helper, honest, cell])
    assert ns["log_softmax"] is ns["_np"], cell


def test_a_c_loop_written_with_console_prompts_is_flagged_as_without():
    """White-box red team 24 (E7): an answer in Python-console form (`>>> `, `... `) did not parse
    for the C-loop reading, which IPython runs after stripping the prompts (05 20/24 unflagged;
    the same answer without prompts: flagged). Control: the prompt-free form flags the same."""
    body = (
        "def ban(logits, banned):\n"
        "    V = logits.shape[-1]\n"
        "    keep = torch.tensor(list(map(banned.__contains__, range(V))))\n"
        "    return logits.masked_fill(keep, float('-inf'))\n"
    )
    lines = body.splitlines()
    prompted = "\n".join([">>> " + lines[0]] + ["... " + line for line in lines[1:]]) + "\n"
    plain_flags = [f for f in scan_source(body) if "loop run by C code" in f]
    assert plain_flags
    assert [f for f in scan_source(prompted) if "loop run by C code" in f] == plain_flags
