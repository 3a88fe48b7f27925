"""The Gradescope bundle, run as Gradescope runs it: unpacked into source/ of a folder laid out like
/autograder, its run_autograder executed on a correct and a wrong submission of the fixture course,
and once in a root that may not create namespaces (root without CAP_SYS_ADMIN, as in Gradescope's
containers).

Truth: the fixture's points (double 2, square 1, a written answer 1) and answers that are right or
wrong by arithmetic; results.json is checked against the fields of Gradescope's documented format.
Cost: ~40 s.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograde.gradescope import build_bundle
from autograde.sandbox import unavailable
from autograde.tests.conftest import student_notebook
from autograde.tests.fixture import ASSIGNMENT

# Gradescope's results.json fields (gradescope-autograders.readthedocs.io/en/latest/specs/)
TOP_KEYS = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
TEST_KEYS = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}

pytestmark = pytest.mark.skipif(
    unavailable() is not None, reason=f"no sandbox here: {unavailable()}"
)


def _check_schema(res: dict) -> None:
    assert set(res) <= TOP_KEYS, set(res) - TOP_KEYS
    assert isinstance(res["score"], float)
    assert res.get("stdout_visibility", "hidden") in VISIBILITY
    for t in res["tests"]:
        assert set(t) <= TEST_KEYS, set(t) - TEST_KEYS
        assert isinstance(t["score"], float) and isinstance(t["max_score"], float)
        assert t["status"] in ("passed", "failed") and t["visibility"] in VISIBILITY
        assert isinstance(t["output"], str) and isinstance(t["name"], str)


@pytest.fixture(scope="module")
def bundle(fx_course, tmp_path_factory) -> Path:
    return build_bundle(fx_course, ASSIGNMENT, tmp_path_factory.mktemp("bundle") / "autograder.zip")


def _autograder(tmp_path: Path, bundle: Path, nb: dict) -> Path:
    """A folder laid out like Gradescope's /autograder, with the bundle unpacked and one
    submission."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
    for name in ("setup.sh", "run_autograder"):
        assert modes[name] & stat.S_IXUSR, f"{name} must be executable in the zip"
    # as Gradescope's image build does
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    # any file name: Gradescope keeps the student's
    (root / "submission" / "my_work.ipynb").write_text(json.dumps(nb))
    (root / "results").mkdir()
    return root


def _run(root: Path, prefix: list[str] = ()) -> dict:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADE_PYTHON": sys.executable}
    res = subprocess.run(
        [*prefix, str(root / "run_autograder")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def test_bundle_has_what_gradescope_needs(bundle):
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
    # at the root, not in a folder
    assert {"setup.sh", "run_autograder", "course.json"} <= names
    assert f"course/solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in names
    assert f"course/notebooks/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in names
    assert "repo/autograde/grade.py" in names and "repo/course_lib/checks/engine.py" in names
    assert not any("/tests/" in n or "__pycache__" in n for n in names)


def test_correct_and_wrong_submissions(fx_course, bundle, tmp_path):
    right = student_notebook(
        fx_course,
        {
            "double": "def double(x):\n    return 2 * x",
            "square": "def square(x):\n    return x * x",
        },
    )
    # 2x only at x = 2
    wrong = student_notebook(
        fx_course,
        {
            "double": "def double(x):\n    return x + 2",
            "square": "def square(x):\n    return x * x",
        },
    )
    good = _run(_autograder(tmp_path / "right", bundle, right))
    bad = _run(_autograder(tmp_path / "wrong", bundle, wrong))
    for res in (good, bad):
        _check_schema(res)
        assert {t["name"].split(":")[0]: t["max_score"] for t in res["tests"]} == {
            "test_double": 2.0,
            "test_square": 1.0,
        }
        # the written answer: by hand
        assert "a_why" in res["output"]
    assert good["score"] == 3.0 and all(t["status"] == "passed" for t in good["tests"])
    by = {t["name"].split(":")[0]: t for t in bad["tests"]}
    assert bad["score"] == 1.0
    assert by["test_double"]["score"] == 0.0 and by["test_double"]["status"] == "failed"
    assert by["test_square"]["score"] == 1.0
    text = json.dumps(bad)
    assert "double" in by["test_double"]["output"] and len(by["test_double"]["output"]) > 10
    assert "hidden_check(" not in text and "fx_hidden" not in text  # no hidden test source


def test_refuses_without_namespaces(fx_course, bundle, tmp_path):
    """Root that may not create namespaces (Gradescope's default container): score 0, a clear
    reason, and no student code run (a cell that would leave a file behind leaves none)."""
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv")
    marker = tmp_path / "student-code-ran"
    nb = student_notebook(
        fx_course,
        {"double": f"open({str(marker)!r}, 'w').write('x')\ndef double(x):\n    return 2 * x"},
    )
    root = _autograder(tmp_path, bundle, nb)
    res = _run(root, prefix=["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"])
    _check_schema(res)
    assert res["score"] == 0.0 and res["tests"] == []
    assert "sandbox" in res["output"] and "CAP_SYS_ADMIN" in res["output"]
    assert not marker.exists()
