"""The student edition (`python -m autograde publish`): nothing in it answers an exercise, and it
works alone.

Leaks, over the edition's files and over the wheel pip builds from it (both offline):
- no line of an answer: the code between `### BEGIN SOLUTION` and `### END SOLUTION` of every
solution notebook,
  and every line of its written answers (markdown solution cells: model answers and marking
  schemes);
- no line of a hidden check (autograde/hidden/*.py and the notebooks' `BEGIN HIDDEN TESTS` blocks),
of an
  alternative answer (autograde/alternatives) or of a bug-zoo entry (autograde/bugzoo);
- no stored reference or generated value (every float written with 6 or more decimals, and every
inputs hash,
  in autograde/references and autograde/generated);
- no `autograde` module.
A line is compared after normalising whitespace (runs of spaces, tabs and indentation become one
space), and as a substring of the edition's normalised lines, so a leak inside a longer line or a
docstring is found too. Two kinds of line are not secrets, and `secrets()` leaves them out:
- *trivial* lines: imports (they name a module, not what an answer does with it; every notebook
imports the same
  ones) and lines of at most two words (`return x`, `pass`, `break`, `else:`, `return out`, `x =
  y`): such a line says nothing about how an exercise is solved, and the edition's own README and
  tests hold some;
- lines every student receives by design, outside any answer: those of the instructor repository's
released
  notebooks (nbgrader's stripped output, kept in step by `release --check`) and of the visible
  package course_lib (stubs' signatures and docstrings, which alternatives and bug-zoo entries
  repeat; greedy decoding, which the course ships). This test is about what publish adds, so these
  come from the instructor repository, never from the edition;
  `test_secrets_cover_almost_every_answer_line` keeps that exception small.
`test_the_leak_check_finds_a_planted_answer` plants a marker in a solution cell of a copy and shows
the check fails.

Works alone: a fresh venv whose only third-party packages come from the instructor's venv through a
plain path (a `.pth` line: the editable install's finder is not run, so neither `autograde` nor the
instructor's course_lib is importable, which the test asserts) gets the edition's wheel (`pip
install --no-deps --no-index`); there the edition's own `course.py test` passes (its install and
check-machinery tests, and its untouched-notebook test for the cheapest notebook, 02; the edition's
own `./course test` runs all five), and notebook 02 with its answer cells filled in from solutions/
(in a temporary file, never in the edition) passes every visible check and "check my work" shows all
passed; the Colab cell of an edition published with a URL installs it there. Route (b) of
docs/instructors.md runs end to end on the tiny fixture course. Durations: docs/instructors.md,
section 0.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograde.course import Course
from autograde.publish import NAME, publish

ROOT = Path(__file__).resolve().parents[2]
NOTES_DIR = ROOT.parent / "shared" / "seed"
FLOAT = re.compile(r"-?\d+\.\d{6,}(?:[eE][-+]?\d+)?")
SHA256 = re.compile(r"\b[0-9a-f]{64}\b")
# untouched: ~5 s on 2 cores (03 ~6 s, 01 ~9 s, 04 and 05 ~25 s: the edition runs all)
CHEAP = ["02_logits_softmax"]
FILLED = "02_logits_softmax"


# ------------------------------------------------------------------------------------------ what is
# secret
def norm(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip()


def trivial(line: str) -> bool:
    """An import, or a line of at most two words (see the module docstring for why these are not
    secrets)."""
    return line.startswith(("import ", "from ")) or len(re.findall(r"\w+", line)) <= 2


def cell_source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def between(text: str, begin: str, end: str) -> list[str]:
    out, inside = [], False
    for line in text.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            out.append(line)
    return out


def answer_lines(notebook: Path) -> list[str]:
    """Every line of the notebook's answers: solution blocks of code cells, whole written-answer
    cells."""
    out = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        src = cell_source(cell)
        if cell["cell_type"] == "markdown" and cell.get("metadata", {}).get("nbgrader", {}).get(
            "solution"
        ):
            out += src.splitlines()
        elif cell["cell_type"] == "code":
            out += between(src, "### BEGIN SOLUTION", "### END SOLUTION")
    return out


def hidden_lines(notebook: Path) -> list[str]:
    return [
        line
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for line in between(cell_source(cell), "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
    ]


def public_lines(root: Path) -> set[str]:
    """Normalised lines every student receives by design: released notebooks and the visible
    package."""
    out = set()
    for nb in sorted((root / "notebooks").glob("*/*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            out |= {norm(line) for line in cell_source(cell).splitlines()}
    for p in sorted((root / "course_lib").rglob("*.py")):
        out |= {norm(line) for line in p.read_text(encoding="utf-8").splitlines()}
    return out


@dataclass
class Secrets:
    lines: dict[str, str] = field(default_factory=dict)  # normalised line -> where it comes from
    # float or hash text -> where it comes from
    values: dict[str, str] = field(default_factory=dict)
    public: set[str] = field(default_factory=set)
    # the public lines, joined: what the search would match
    public_text: str = ""

    def add_lines(self, lines: list[str], where: str) -> None:
        for line in map(norm, lines):
            if (
                line
                and not trivial(line)
                and line not in self.lines
                and line not in self.public
                and line not in self.public_text
            ):
                self.lines[line] = where

    def copy(self) -> Secrets:
        return Secrets(dict(self.lines), dict(self.values), self.public, self.public_text)


def secrets(root: Path = ROOT) -> Secrets:
    public = public_lines(root)
    s = Secrets(public=public, public_text="\n".join(sorted(public)))
    for nb in sorted((root / "solutions").glob("*/*.ipynb")):
        s.add_lines(answer_lines(nb), f"answer in {nb.name}")
        s.add_lines(hidden_lines(nb), f"hidden test in {nb.name}")
    for folder in ("hidden", "alternatives", "bugzoo"):
        for p in sorted((root / "autograde" / folder).rglob("*.py")):
            s.add_lines(p.read_text(encoding="utf-8").splitlines(), str(p.relative_to(root)))
    public_values = set(FLOAT.findall(s.public_text)) | set(SHA256.findall(s.public_text))
    for folder in ("references", "generated"):
        for p in sorted((root / "autograde" / folder).glob("*.json")):
            text = p.read_text(encoding="utf-8")
            for v in (set(FLOAT.findall(text)) | set(SHA256.findall(text))) - public_values:
                s.values.setdefault(v, str(p.relative_to(root)))
    return s


# ------------------------------------------------------------------------------------------ the
# search
def notebook_text(text: str) -> str:
    return "\n".join(cell_source(c) for c in json.loads(text)["cells"])


def folder_texts(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            text = p.read_bytes().decode("utf-8", errors="replace")
            out[str(p.relative_to(folder))] = notebook_text(text) if p.suffix == ".ipynb" else text
    return out


def wheel_texts(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(n).decode("utf-8", errors="replace") for n in z.namelist()}


def leaks(texts: dict[str, str], s: Secrets) -> list[tuple[str, str, str]]:
    """(file, leaked text, where it comes from) for every secret line or value found in the
    files."""
    found = []
    for name, text in texts.items():
        lines = "\n".join(norm(line) for line in text.splitlines())
        found += [(name, line, where) for line, where in s.lines.items() if line in lines]
        found += [
            (name, v, where)
            for v in set(FLOAT.findall(text)) | set(SHA256.findall(text))
            if (where := s.values.get(v))
        ]
    return found


# ------------------------------------------------------------------------------------------
# fixtures
@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    return publish(Course(), tmp_path_factory.mktemp("edition"))


@pytest.fixture(scope="module")
def wheel(edition, tmp_path_factory) -> Path:
    """The wheel pip builds from a copy of the edition (offline: setuptools from this
    environment)."""
    src = tmp_path_factory.mktemp("wheel-src") / NAME
    shutil.copytree(edition.folder, src)
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (whl,) = out.glob("*.whl")
    return whl


@pytest.fixture(scope="module")
def the_secrets() -> Secrets:
    return secrets()


# ------------------------------------------------------------------------------------------ leak
# tests
def test_secrets_cover_almost_every_answer_line(the_secrets):
    """The exceptions (trivial, public by design) leave nearly every answer line a secret: the check
    is not vacuous."""
    answers = {
        norm(line)
        for nb in sorted((ROOT / "solutions").glob("*/*.ipynb"))
        for line in answer_lines(nb)
    }
    nontrivial = {line for line in answers if line and not trivial(line)}
    kept = {line for line in nontrivial if line in the_secrets.lines}
    assert len(nontrivial) > 300
    assert len(kept) >= 0.97 * len(nontrivial), sorted(nontrivial - kept)
    assert len(the_secrets.values) > 10_000


def test_no_answer_in_the_editions_files(edition, the_secrets):
    found = leaks(folder_texts(edition.folder), the_secrets)
    assert not found, f"{len(found)} leak(s), e.g. {found[:5]}"
    names = {p.relative_to(edition.folder).parts[0] for p in edition.folder.rglob("*")}
    assert names == {
        ".gitignore",
        "MANIFEST.sha256",
        "README.md",
        "course",
        "course.py",
        "course_lib",
        "environment.yml",
        "notebooks",
        "pyproject.toml",
        "tests",
    }


def test_no_hidden_check_is_named_in_the_edition(edition):
    """The hidden checks' names (and so their case labels, which name inputs) stay with the
    instructor: a table of every exercise's domain once listed 64 hidden case labels in
    course_lib/checks (a new instructor's audit found them in the edition). Control: the instructor
    repository's own autograde/domains.py names them."""
    from autograde.course import Course

    names = {chk.name for chk, _ in Course().hidden_registry().all()}
    assert names and any(n in (ROOT / "autograde" / "domains.py").read_text() for n in names)
    texts = folder_texts(edition.folder)
    found = sorted({n for n in names for path, text in texts.items() if n in text})
    assert not found, found


def test_check_my_work_ships_unchanged(edition):
    """The edition's visible checks are this repository's, byte for byte (so their verdicts are the
    same); only colab.py (its URL) differs, and toy_inputs.py (hidden cases' inputs, registered only
    for grading) is left out."""
    ours = {
        p.relative_to(ROOT).as_posix(): p.read_bytes()
        for p in (ROOT / "course_lib").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    theirs = {
        p.relative_to(edition.folder).as_posix(): p.read_bytes()
        for p in (edition.folder / "course_lib").rglob("*.py")
    }
    assert set(ours) - set(theirs) == {"course_lib/checks/toy_inputs.py"} and set(theirs) <= set(
        ours
    )
    assert [n for n in theirs if theirs[n] != ours[n]] == ["course_lib/colab.py"]
    assert "toy_inputs" not in "".join(t.decode() for t in theirs.values())


def test_no_answer_and_no_autograde_in_the_wheel(wheel, the_secrets):
    texts = wheel_texts(wheel)
    assert {n.split("/")[0] for n in texts} == {"course_lib", "how_llms_work-0.1.0.dist-info"}, (
        sorted(texts)
    )
    # grading-only inputs of hidden cases
    assert "course_lib/checks/toy_inputs.py" not in texts
    found = leaks(texts, the_secrets)
    assert not found, f"{len(found)} leak(s), e.g. {found[:5]}"


def test_the_leak_check_finds_a_planted_answer(tmp_path, edition, the_secrets):
    """A marker planted in a solution cell of a copy is a secret, and found wherever a faulty
    edition puts it."""
    marker = 'planted = "ANSWER-MARKER-5c1e" + str(len(probs))'
    src = ROOT / "solutions" / FILLED / f"{FILLED}.ipynb"
    nb = json.loads(src.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "### BEGIN SOLUTION" in cell_source(c))
    cell["source"] = cell_source(cell).replace(
        "### BEGIN SOLUTION\n", f"### BEGIN SOLUTION\n    {marker}\n", 1
    )
    planted = tmp_path / "solutions" / FILLED / src.name
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps(nb), encoding="utf-8")
    s = the_secrets.copy()
    s.add_lines(answer_lines(planted), f"answer in {src.name}")
    assert s.lines[marker] == f"answer in {src.name}"
    texts = folder_texts(edition.folder)
    assert not leaks(texts, s)
    # a faulty edition: the instructor notebook shipped whole / the line pasted, re-indented, into
    # the package
    faulty = {
        **texts,
        f"solutions/{FILLED}/{src.name}": notebook_text(planted.read_text(encoding="utf-8")),
    }
    assert (f"solutions/{FILLED}/{src.name}", marker, f"answer in {src.name}") in leaks(faulty, s)
    pasted = {
        **texts,
        "course_lib/generate.py": texts["course_lib/generate.py"] + f"\n\t\t{marker}  # ok\n",
    }
    assert [f[1] for f in leaks(pasted, s)] == [marker]
    # hidden checks and stored references are found the same way
    hidden = {
        "course_lib/checks/extra.py": (ROOT / "autograde/hidden/logits_softmax.py").read_text()
    }
    assert any(f[2] == "autograde/hidden/logits_softmax.py" for f in leaks(hidden, s))
    refs = {"data.json": (ROOT / "autograde/references/02_logits_softmax.json").read_text()}
    assert any(f[2] == "autograde/references/02_logits_softmax.json" for f in leaks(refs, s))


# ------------------------------------------------------------------------------------------ the
# edition itself
def test_publishing_twice_writes_identical_bytes(edition, tmp_path):
    again = publish(Course(), tmp_path)
    assert again.zip.read_bytes() == edition.zip.read_bytes()
    with zipfile.ZipFile(edition.zip) as z:
        infos = z.infolist()
    names = [i.filename for i in infos]
    assert names == sorted(names) and all(n.startswith(f"{NAME}/") for n in names)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    files = sorted(
        str(p.relative_to(edition.folder)) for p in edition.folder.rglob("*") if p.is_file()
    )
    assert [n[len(NAME) + 1 :] for n in names] == files


def test_colab_cells_point_at_the_url_or_say_there_is_none(edition, tmp_path):
    with_url = publish(Course(), tmp_path, "https://github.com/acme/llm-course")
    for folder in (edition.folder, with_url.folder):
        text = "\n".join(folder_texts(folder).values())
        assert "OWNER" not in text and "github.com/OWNER" not in text
    first = lambda nb: next(
        cell_source(c) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"
    )
    for nb in sorted(with_url.folder.glob("notebooks/*/*.ipynb")):
        assert '"git+https://github.com/acme/llm-course.git"' in first(nb)
        a = nb.stem
        assert (
            f"https://colab.research.google.com/github/acme/llm-course/blob/main/notebooks/{a}/{a}.ipynb"
            in (with_url.folder / "README.md").read_text()
        )
    for nb in sorted(edition.folder.glob("notebooks/*/*.ipynb")):
        assert "github" not in first(nb) and "./course lab" in first(nb)
    readme = (edition.folder / "README.md").read_text()
    assert (
        "colab.research.google.com/github" not in readme
        and "./course lab" in readme
        and "./course test" in readme
    )
    with pytest.raises(ValueError, match="GitHub"):
        publish(Course(), tmp_path / "x", "https://example.org/course")


def test_readmes_quote_the_notes_verbatim(edition):
    files = sorted(NOTES_DIR.glob("*.txt"))
    if not files:
        pytest.skip(f"the module's notes are not beside the repository ({NOTES_DIR}/*.txt)")
    squash = lambda t: re.sub(r"\s+", "", t)  # noqa: E731 - as tests/test_notes_quotes.py compares
    notes = squash("\n".join(f.read_text(encoding="utf-8") for f in files))
    for readme in (ROOT / "README.md", edition.folder / "README.md"):
        text = readme.read_text(encoding="utf-8")
        assert "the module's lecture notes" in text, readme
        quotes = [line[1:].strip() for line in text.splitlines() if line.startswith(">")]
        assert quotes and all(squash(q) in notes for q in quotes), (readme, quotes)


# ------------------------------------------------------------------------------------------ works
# alone
def fill_answers(student: Path, solution: Path, out: Path) -> None:
    """The student notebook with each answer cell replaced by the solution notebook's cell of the
    same id, less its `### BEGIN/END SOLUTION` marker lines (as a student's answer reads; the grader
    flags the markers)."""
    nb = json.loads(student.read_text(encoding="utf-8"))
    answers = {
        c["id"]: "\n".join(
            line
            for line in cell_source(c).splitlines()
            if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
        )
        for c in json.loads(solution.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code" and "### BEGIN SOLUTION" in cell_source(c)
    }
    filled = 0
    for cell in nb["cells"]:
        if cell.get("id") in answers:
            cell["source"], filled = answers[cell["id"]], filled + 1
    assert filled == len(answers) > 0
    out.write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, wheel) -> Path:
    """A venv with the instructor venv's third-party packages on a plain path and the edition's
    wheel installed."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    py = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "instructor-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = "import importlib.util as u; print(u.find_spec('autograde'), u.find_spec('course_lib'))"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    before = subprocess.run(
        [str(py), "-c", probe], capture_output=True, text=True, cwd=venv, env=env
    )
    # no instructor code
    assert before.stdout.split() == ["None", "None"], before.stdout + before.stderr
    # --target: pip leaves the instructor venv's own distribution of the same name alone
    subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=300,
        env=env,
        cwd=venv,
    )
    after = subprocess.run(
        [str(py), "-c", probe], capture_output=True, text=True, cwd=venv, env=env
    )
    assert after.stdout.split()[0] == "None" and str(site) in after.stdout, (
        after.stdout + after.stderr
    )
    return py


def venv_env(py: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "COURSE_GRADING")
    }
    return {
        **env,
        "COURSE_NO_SETUP": "1",
        "CI": "true",
        "PATH": f"{py.parent}{os.pathsep}{env.get('PATH', '')}",
    }


def test_the_editions_own_tests_pass_in_a_fresh_venv(fresh_venv, edition, tmp_path):
    """`course.py test` (set-up skipped: the venv is made above) from a copy of the edition, outside
    this repo."""
    folder = tmp_path / NAME
    shutil.copytree(edition.folder, folder)
    pick = " or ".join(["test_install", "test_checks"] + CHEAP)
    done = subprocess.run(
        [str(fresh_venv), "course.py", "test", "-p", "no:cacheprovider", "-k", pick],
        cwd=folder,
        env=venv_env(fresh_venv),
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "PASS  pytest -q tests" in out
    ran = re.search(r"(\d+) passed", out)
    assert ran and int(ran.group(1)) >= 14 and not re.search(r"\d+ (failed|error)", out), out[
        -2000:
    ]
    for a in CHEAP:
        assert f"test_untouched_notebook_runs_top_to_bottom[{a}]" in out, out[-3000:]


def test_a_filled_notebook_passes_every_visible_check_in_the_fresh_venv(
    fresh_venv, edition, tmp_path
):
    student = edition.folder / "notebooks" / FILLED / f"{FILLED}.ipynb"
    filled = tmp_path / FILLED / f"{FILLED}.ipynb"
    filled.parent.mkdir()
    fill_answers(student, ROOT / "solutions" / FILLED / f"{FILLED}.ipynb", filled)
    script = (
        f"import sys; sys.path.insert(0, {str(edition.folder / 'tests')!r})\n"
        "from pathlib import Path\nimport test_notebooks as t\n"
        f"nb = t.run(Path({str(filled)!r}))\n"
        "print('ERRORS', t.errors(nb))\n"
        "print(''.join(o.get('text', '') for c in nb.cells if c.cell_type == 'code' and "
        "'check_all(' in c.source for o in c.outputs if o.output_type == 'stream'))\n"
    )
    done = subprocess.run(
        [str(fresh_venv), "-c", script],
        cwd=tmp_path,
        env=venv_env(fresh_venv),
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout
    assert done.returncode == 0, (out + done.stderr)[-4000:]
    assert "ERRORS []" in out, out[-4000:]
    n_checks = len(re.findall(r"^ [✓✗·?] ", out, re.M))  # the rows of "check my work"
    assert (
        n_checks >= 6 and f"{n_checks} passed, 0 failed, 0 not attempted (of {n_checks})" in out
    ), out[-3000:]


def test_the_editions_colab_cell_installs_it_in_the_fresh_venv(fresh_venv, tmp_path):
    """The first cell of an edition published with a URL, run with Colab forced on, as Colab's
    kernel would: its `%pip install --no-deps URL` (here a copy of that edition: what the git URL
    gives), then `setup()` (nothing to install: the venv has every requirement; the model file is
    verified in its cache). Offline: no index, and setuptools from the venv instead of an isolated
    build. Runs last: it reinstalls the edition in the venv."""
    published = publish(Course(), tmp_path / "out", "https://github.com/acme/llm-course")
    src = tmp_path / "src"
    shutil.copytree(published.folder, src)
    nb = json.loads((src / "notebooks" / FILLED / f"{FILLED}.ipynb").read_text(encoding="utf-8"))
    cell = next(cell_source(c) for c in nb["cells"] if c["cell_type"] == "code")
    url = "git+https://github.com/acme/llm-course.git"
    assert (
        f'COURSE_GIT_URL = "{url}"' in cell and "%pip install -q --no-deps {COURSE_GIT_URL}" in cell
    )
    body = cell.replace(url, str(src)).replace(
        "%pip install -q --no-deps {COURSE_GIT_URL}",
        "subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', "
        "COURSE_GIT_URL], check=True)",
    )
    assert "%" not in body
    script = tmp_path / "cell.py"
    script.write_text(
        "import subprocess, sys\n" + body + "\nimport course_lib, importlib.util as u\n"
        "print('[test]', course_lib.__file__, course_lib.cl100k_base().name, "
        "u.find_spec('autograde'))\n"
    )
    env = {
        **venv_env(fresh_venv),
        "COLAB_RELEASE_TAG": "forced",
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
    }
    done = subprocess.run(
        [str(fresh_venv), str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "[course] ready" in done.stdout
    where, enc, grader = done.stdout.split("[test] ")[1].split()
    assert Path(where).is_relative_to(fresh_venv.parents[1]) and (enc, grader) == (
        "cl100k_base",
        "None",
    ), done.stdout


# ------------------------------------------------------------------------------------------ route
# (b): the exchange
STUDENT_SIDE = """
import json, os, sys
from pathlib import Path
from traitlets.config import Config
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit

exchange, home, answers = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
os.chdir(home)
def step(cls):
    c = Config()
    c.Exchange.root, c.CourseDirectory.course_id, c.CourseDirectory.assignment_id = exchange, "llm101", "fx"
    c.CourseDirectory.root = str(home)
    cls(coursedir=CourseDirectory(config=c), authenticator=Authenticator(config=c), config=c).start()
step(ExchangeFetchAssignment)                        # the Assignments tab's "Fetch"
path = home / "fx" / "fx.ipynb"
nb = json.loads(path.read_text())
for cell in nb["cells"]:
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    if gid in answers:
        cell["source"] = answers[gid]
path.write_text(json.dumps(nb))
step(ExchangeSubmit)                                 # the Assignments tab's "Submit"
print("submitted as", os.getuid())
"""  # noqa: E501


def test_route_b_release_fetch_submit_collect_grade_through_nbgraders_exchange(fx_course, tmp_path):
    """docs/instructors.md route (b) on the tiny fixture course: the instructor releases into a
    local exchange folder; a second local user (nobody, uid 65534) fetches, answers and submits; the
    instructor collects and grades with the harness's grade (what `python -m autograde grade` runs).
    Needs root and the sandbox."""
    from autograde import sandbox
    from autograde.tests import unprivileged

    if sandbox.unavailable() is not None or os.geteuid() != 0:
        pytest.skip(f"needs root and the grading sandbox: {sandbox.unavailable()}")
    # collected outside the shared course
    course_root, submitted = fx_course.root, tmp_path / "submitted"
    exchange = unprivileged.shared_folder("exchange-") / "exchange"
    home = unprivileged.shared_folder("student-home-")
    try:
        _route_b(fx_course, course_root, submitted, exchange, home, tmp_path)
    finally:
        shutil.rmtree(exchange.parent, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def _route_b(
    fx_course, course_root: Path, submitted: Path, exchange: Path, home: Path, tmp_path: Path
) -> None:
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeCollect, ExchangeReleaseAssignment
    from traitlets.config import Config

    from autograde.grade import Limits, grade
    from autograde.tests import unprivileged

    def instructor(cls, **dirs):
        c = Config()
        c.Exchange.root, c.CourseDirectory.course_id, c.CourseDirectory.assignment_id = (
            str(exchange),
            "llm101",
            "fx",
        )
        c.CourseDirectory.root = str(course_root)
        # not in the shared fixture course
        c.CourseDirectory.db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
        for k, v in dirs.items():
            setattr(c.CourseDirectory, k, v)
        cls(
            coursedir=CourseDirectory(config=c), authenticator=Authenticator(config=c), config=c
        ).start()

    # nbgrader release_assignment fx
    instructor(ExchangeReleaseAssignment, release_directory="notebooks")
    answers = {
        "double": "def double(x):\n    return x * 2\n",
        "square": "def square(x):\n    return x ** 2\n",
    }
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(home)}
    done = subprocess.run(
        unprivileged.command(
            [sys.executable, "-c", STUDENT_SIDE, str(exchange), str(home), json.dumps(answers)], env
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "submitted as 65534" in done.stdout, (
        done.stdout + done.stderr
    )[-3000:]
    instructor(ExchangeCollect, submitted_directory=str(submitted))  # nbgrader collect fx
    assert [p.relative_to(submitted).as_posix() for p in submitted.glob("*/fx/fx.ipynb")] == [
        "nobody/fx/fx.ipynb"
    ]
    assert not (course_root / "gradebook.db").exists() and not (course_root / "submitted").exists()
    out = tmp_path / "graded"
    grade(
        fx_course,
        submitted,
        out,
        limits=Limits(wall_s=120, memory_bytes=2 << 30),
        log=lambda *_: None,
    )
    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text())))
    # double (2 points) and square (1) right; the written answer left as released scores 0 without a
    # marker; the time comes from nbgrader's exchange (its timestamp.txt), and no deadline is set
    assert [
        (
            r["student"],
            r["score"],
            r["max_score"],
            r["status"],
            r["flags"],
            r["time_source"],
            r["final_score"],
        )
        for r in rows
    ] == [("nobody", "3", "4", "graded", "", "nbgrader exchange", "3")], rows


def test_publish_refuses_uncommitted_changes_that_would_reach_students(tmp_path):
    """A new instructor's trial published a colleague's half-written edit of course_lib/ (copied
    from disk; `release --check` looks at notebooks and references only). The command now refuses,
    naming the files."""
    clone = tmp_path / "kit"
    subprocess.run(
        ["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=300
    )
    run = lambda *extra: subprocess.run(
        [
            sys.executable,
            "-m",
            "autograde",
            "--root",
            str(clone),
            "publish",  # noqa: E731
            str(tmp_path / "out"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    (clone / "course_lib" / "half_written.py").write_text("x = 1\n")
    refused = run()
    assert refused.returncode == 2 and "course_lib/half_written.py" in refused.stderr, (
        refused.stderr
    )
    assert not (tmp_path / "out").exists()
    (clone / "course_lib" / "half_written.py").unlink()
    done = run()  # control: the clean clone publishes
    assert done.returncode == 0, done.stderr[-2000:]
