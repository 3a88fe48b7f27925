"""`release` on unchanged instructor notebooks writes no byte; a real change to a reference is
written.

Each test works on a copy of the course (solutions/, notebooks/, references) in a temp dir, with the
real nbgrader generate_assignment and references computed in-process (the instructor notebooks
without test and `demo` cells). The truth is the committed files themselves: `release --check`
passes on them (selfcheck). Cost, measured on the 2-core machine: ~2 min for all five assignments
(most of it running the notebooks).
"""

from __future__ import annotations

import json
import shutil

import pytest

from autograde.course import REPO, Course, tools_beside_python
from autograde.tests.conftest import REAL_ASSIGNMENTS, digest

pytestmark = pytest.mark.skipif(not REAL_ASSIGNMENTS, reason="no solutions/ in this checkout")


@pytest.fixture(scope="module")
def course_copy(tmp_path_factory) -> Course:
    """A copy of this course's release inputs and outputs; references live in root/references."""
    tools_beside_python()  # nbgrader runs `alembic` by name
    root = tmp_path_factory.mktemp("course")
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    shutil.copytree(REPO / "solutions", root / "solutions", ignore=ignore)
    shutil.copytree(REPO / "notebooks", root / "notebooks", ignore=ignore)
    shutil.copytree(REPO / "autograde" / "references", root / "references")
    return Course(root=root, references_dir=root / "references")


def _outputs(course: Course) -> dict[str, str]:
    return {
        **{f"notebooks/{k}": v for k, v in digest(course.release).items()},
        **{f"references/{k}": v for k, v in digest(course.refs_dir).items()},
    }


@pytest.mark.parametrize("assignment", REAL_ASSIGNMENTS)
def test_unchanged_release_writes_nothing(course_copy: Course, assignment: str):
    from autograde.release import release

    before = _outputs(course_copy)
    written = release(course_copy, [assignment], log=lambda *_: None)
    assert written == [], f"release of an unchanged {assignment} rewrote {written}"
    assert _outputs(course_copy) == before


def _first_float_case(refs: dict) -> tuple[str, int, list]:
    """(check, case index, the flat float list) of the first stored expected tensor with float
    data."""
    for name in sorted(refs["checks"]):
        for i, case in enumerate(refs["checks"][name]["cases"]):
            data = (
                case.get("expected", {}).get("$tensor", {}).get("data")
                if isinstance(case.get("expected"), dict)
                else None
            )
            if (
                data
                and isinstance(data, list)
                and all(isinstance(x, float) and x != 0.0 for x in data[:1])
            ):
                return name, i, data
    raise AssertionError("no stored float tensor to perturb")


def test_rounding_noise_is_kept_and_real_change_is_written(course_copy: Course):
    """A stored value 1e-9 off (far below every comparator's tolerance, like last-bit noise of
    another CPU) stays as stored, byte for byte; a stored value 1.0 off (a real change) is rewritten
    to the fresh value."""
    from autograde.references import verify_references
    from autograde.release import dump_references, release

    a = "02_logits_softmax" if "02_logits_softmax" in REAL_ASSIGNMENTS else REAL_ASSIGNMENTS[0]
    path = course_copy.hidden_registry().reference_path(a)
    original = json.loads(path.read_text())
    name, i, data = _first_float_case(original)
    true_value = data[0]

    noisy = json.loads(path.read_text())
    _first_float_case(noisy)[2][0] = true_value * (1 + 1e-9)
    noisy_text = dump_references(noisy)
    path.write_text(noisy_text)
    assert verify_references(course_copy, a) == []  # release --check: nothing stale
    assert release(course_copy, [a], log=lambda *_: None) == []
    assert path.read_text() == noisy_text

    wrong = json.loads(path.read_text())
    _first_float_case(wrong)[2][0] = true_value + 1.0
    path.write_text(dump_references(wrong))
    assert verify_references(course_copy, a) != []  # release --check: stale
    assert release(course_copy, [a], log=lambda *_: None) == [str(path)]
    fixed = json.loads(path.read_text())
    assert fixed["checks"][name]["cases"][i]["expected"]["$tensor"]["data"][0] == pytest.approx(
        true_value, rel=1e-6
    )
    assert verify_references(course_copy, a) == []
    # every other case kept its stored text: only the changed case differs from the noisy file
    changed = [
        k
        for k, (x, y) in enumerate(zip(noisy_text.splitlines(), path.read_text().splitlines()))
        if x != y
    ]
    assert len(changed) == 1
