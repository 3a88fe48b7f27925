"""The adversarial catalog (issue 4): submissions that attack the grader, graded as one class with honest ones.

Every attack from the issue, each written as a student would: the answers themselves are wrong (`return 0`),
and the rest of the cell tries to make them pass anyway, to read what it must not, or to hurt the grader or a
classmate. For each one: grading of the whole class completes; the attacker scores no more than an untouched
notebook; every honest student's row is exactly what it is in a run without the attackers; no submitted file
changes; no process outlives the run. The attackers know the layout (the course root, the output folder, a
classmate's submission path), as a student who read the harness's source would.

Needs root and bubblewrap (the sandbox); ~3 min on 2 cores (about 20 students, two grading runs).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from autograde import sandbox
from autograde.grade import Limits, grade
from autograde.tests.conftest import digest, student_notebook, submit

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None,
                                reason=f"sandbox unavailable here: {sandbox.unavailable()}")

LIMITS = Limits(wall_s=150, memory_bytes=2 << 30)
HONEST = {
    "correct": {"double": "def double(x):\n    return x * 2\n", "square": "def square(x):\n    return x ** 2\n",
                "a_why": "2x = x + x."},
    "partial": {"double": "def double(x):\n    return 2 * float(x)\n", "square": "def square(x):\n    return x * x\n"},
    "untouched": {},
}
WRONG_DOUBLE = "def double(x):\n    return 0\n"
WRONG_SQUARE = "def square(x):\n    return 0\n"


def attacks(course_root: Path, classmate: Path, out: Path) -> dict[str, str]:
    """Attack code by name; each is put before the wrong `double` answer (its square answer is wrong too)."""
    return {
        "patch_numpy": (
            "import numpy as np\n"
            "np.allclose = lambda *a, **k: True\n"
            "np.isclose = lambda a, b, *r, **k: np.ones(np.shape(a), dtype=bool)\n"
            "np.array_equal = lambda *a, **k: True\n"
            "np.testing.assert_allclose = lambda *a, **k: None\n"),
        "patch_check_engine": (
            "import course_lib.checks.engine as E\n"
            "E.CheckResult.passed = property(lambda self: True)\n"
            "E.judge = lambda check, cases, outcomes, expected: E.CheckResult(check.name, len(cases), [])\n"),
        "input_transformer": (
            "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n"),
        "ast_transformer": (
            "import ast\n"
            "class Quiet(ast.NodeTransformer):\n"
            "    def visit_Assert(self, node):\n        return ast.Pass()\n"
            "    def visit_Raise(self, node):\n        return ast.Pass()\n"
            "get_ipython().ast_transformers.append(Quiet())\n"),
        "sys_modules": (
            "import sys, types\n"
            "for name in ['fx_checks', 'fx_hidden']:\n"
            "    fake = types.ModuleType(name)\n"
            "    fake.check = fake.hidden_check = lambda *a, **k: None\n"
            "    sys.modules[name] = fake\n"),
        "read_secrets": (
            "import glob, os\n"
            f"targets = [{str(course_root / 'solutions')!r}, {str(classmate.parent)!r}, {str(out)!r},\n"
            "           os.path.join(os.getcwd(), '..', '..', '..', 'source'), '/root']\n"
            "for t in targets:\n"
            "    for p in glob.glob(t + '/**/*.ipynb', recursive=True)[:5]:\n"
            "        try:\n            print(p, open(p).read()[:20000])\n"
            "        except OSError as e:\n            print('no', p, e)\n"
            "print('searched', len(targets), 'places')\n"),
        "gradebook": (
            "import glob, os, sqlite3\n"
            f"dbs = glob.glob({str(out)!r} + '/**/*.db', recursive=True)\n"
            "dbs += glob.glob(os.path.join(os.getcwd(), '..', '..', '..', '*.db'))\n"
            "for db in dbs:\n"
            "    try:\n"
            "        con = sqlite3.connect(db)\n"
            "        con.execute('update grade set manual_score = 100, auto_score = 100')\n"
            "        con.execute(\"update grade_cells set max_score = 0\")\n"
            "        con.commit()\n"
            "    except Exception as e:\n        print('no', db, e)\n"),
        "background_process": (
            "import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(999.75)'],\n"
            "                 start_new_session=True)\n"),
        "eq_always_true": (
            "class Anything(float):\n"
            "    def __eq__(self, other):\n        return True\n"
            "    __hash__ = float.__hash__\n"
            "    def __le__(self, other):\n        return True\n"
            "    __ge__ = __lt__ = __gt__ = __le__\n"
            "    def __sub__(self, other):\n        return Anything(0)\n"
            "    __rsub__ = __sub__\n"
            "    def __abs__(self):\n        return Anything(0)\n"
            "_wrong_double = lambda x: Anything(0)\n"),
        "bool_raises": (
            "class Trap:\n"
            "    def __bool__(self):\n        raise RuntimeError('gotcha')\n"
            "    __eq__ = lambda self, other: Trap()\n"
            "    __len__ = lambda self: 1\n"
            "_wrong_double = lambda x: Trap()\n"),
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
            "    print('fork stopped after', children, e)\n"),
        "memory_fill": "hog = [bytearray(100 << 20) for _ in range(60)]  # 6 GB\n",
        "huge_output": "print('x' * (100 << 20))\n",
        "write_classmate": (
            "import glob\n"
            f"for p in [{str(classmate)!r}] + glob.glob({str(out)!r} + '/**/*.ipynb', recursive=True):\n"
            "    try:\n"
            "        open(p, 'w').write('{}')\n"
            "    except OSError as e:\n        print('no', p, e)\n"),
        "kill_grader": (
            "import os, signal\n"
            "for pid in [os.getppid(), 1] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    if pid != os.getpid():\n"
            "        try:\n            os.kill(pid, signal.SIGKILL)\n"
            "        except OSError:\n            pass\n"),
    }


def _answer(attack: str) -> str:
    # attacks that return a fake value define _wrong_double; the others keep `return 0`
    if "_wrong_double" in attack:
        return attack + "def double(x):\n    return _wrong_double(x)\n"
    return attack + WRONG_DOUBLE


def _rows(path: Path) -> dict[str, dict]:
    with open(path) as f:
        return {r["student"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded(fx_course, tmp_path_factory):
    honest_only = tmp_path_factory.mktemp("honest")
    whole_class = tmp_path_factory.mktemp("class")
    for folder in (honest_only, whole_class):
        for student, answers in HONEST.items():
            submit(folder, student, student_notebook(fx_course, answers))
    out_honest = tmp_path_factory.mktemp("out_honest")
    out = tmp_path_factory.mktemp("out_class")
    catalog = attacks(fx_course.root, whole_class / "correct" / "fx" / "fx.ipynb", out)
    for name, attack in catalog.items():
        submit(whole_class, name, student_notebook(fx_course, {"double": _answer(attack), "square": WRONG_SQUARE}))
    before = digest(whole_class)
    grade(fx_course, honest_only, out_honest, workers=2, limits=LIMITS, log=lambda *_: None)
    grade(fx_course, whole_class, out, workers=2, limits=LIMITS, log=lambda *_: None)
    return {"honest": _rows(out_honest / "grades.csv"), "class": _rows(out / "grades.csv"), "out": out,
            "folder": whole_class, "before": before, "attacks": sorted(catalog)}


def test_the_whole_class_is_graded(graded):
    assert set(graded["class"]) == set(HONEST) | set(graded["attacks"])


def test_honest_students_get_exactly_what_they_get_without_the_attackers(graded):
    assert float(graded["honest"]["correct"]["score"]) == 3  # the comparison below is not between zeros
    for student in HONEST:
        assert graded["class"][student] == graded["honest"][student], student


@pytest.mark.parametrize("attack", sorted(attacks(Path("/r"), Path("/c"), Path("/o"))))
def test_an_attacker_scores_no_more_than_an_untouched_notebook(graded, attack):
    row, untouched = graded["class"][attack], graded["class"]["untouched"]
    assert float(row["score"]) <= float(untouched["score"]), row


def test_attacks_that_fooled_the_kernel_are_flagged(graded):
    """Patching the tests in the kernel passes there; the verification outside the kernel disagrees."""
    for attack in ["patch_check_engine", "input_transformer", "sys_modules"]:
        row = graded["class"][attack]
        assert row["status"] == "flagged" and "outside it" in row["detail"], row


def test_no_submitted_file_changed(graded):
    assert digest(graded["folder"]) == graded["before"]


def test_no_process_outlives_the_run(graded):
    import psutil
    marks = ("999.75", "999.5")
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if any(m in " ".join(p.info["cmdline"] or []) for m in marks)]
    assert left == []


def test_the_kernel_saw_no_secrets(graded):
    """What read_secrets printed (its own cell's output) holds no solution and no classmate's notebook."""
    nb = json.loads((graded["out"] / "autograded" / "read_secrets" / "fx" / "fx.ipynb").read_text())
    answer = next(c for c in nb["cells"] if "targets = " in "".join(c.get("source", "")))
    printed = "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                      for o in answer.get("outputs", []))
    assert "searched 5 places" in printed  # the attack ran to its end
    assert "BEGIN SOLUTION" not in printed and "BEGIN HIDDEN TESTS" not in printed
    assert "return x * 2" not in printed  # the classmate's answer
    assert "Multiplication distributes" not in printed  # the instructor's written answer


def test_huge_output_is_cut(graded):
    path = graded["out"] / "autograded" / "huge_output" / "fx" / "fx.ipynb"
    assert path.stat().st_size < 5 << 20
