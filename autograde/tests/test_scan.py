"""The static scan flags each tampering pattern from issue 4 and nothing in the course's own notebooks."""

from __future__ import annotations

import nbformat
import pytest

from autograde.course import REPO
from autograde.scan import scan_notebook, scan_source

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
    # red team 14: a vocabulary loop that runs only when no line counter watches
    "import sys\nslow = sys.gettrace() is None and sys.getprofile() is None": "tracing hooks",
    "from sys import settrace as st\nst(None)": "tracing hooks",
}


@pytest.mark.parametrize("code, flag", list(ATTACKS.items()))
def test_each_attack_is_flagged(code, flag):
    flags = scan_source(code)
    assert any(flag.split("(")[0] in f for f in flags), flags


def test_honest_code_is_not_flagged():
    code = "import numpy as np\nimport torch\nx = torch.softmax(torch.tensor([1.0]), -1)\nnp.random.seed(0)\n%matplotlib inline"
    assert scan_source(code) == []
    # what a blind class wrote for reproducibility and configuration (flagged before, for a look at every row)
    code = ("import torch\ntorch.backends.cudnn.deterministic = True\ntorch.backends.cudnn.benchmark = False\n"
            "class Cfg:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n            setattr(self, k, v)\n")
    assert scan_source(code) == []


@pytest.mark.parametrize("path", sorted((REPO / "solutions").glob("*/*.ipynb")) + sorted((REPO / "notebooks").glob("*/*.ipynb")),
                         ids=lambda p: p.name)
def test_course_notebooks_raise_no_flags(path):
    assert scan_notebook(nbformat.read(str(path), as_version=4)) == []
