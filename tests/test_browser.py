"""Where students and instructors work: JupyterLab in a real (headless) browser.

JupyterLab runs on 127.0.0.1 (free port, token, scratch runtime/config dirs) with this environment's
Python, on copies of the notebooks in a temporary folder. Debian's Chromium, driven by Playwright
(never its own browser download), then:
1. opens every student notebook (`notebooks/`), runs all cells ("Run All"; where a failing check
stops it, Run
   All Below from the next cell, as a student would), saves it, and asserts from the saved file that
   every code cell ran and the only errors are the graded stubs' NotImplementedError (raised
   directly, or reported by a visible check: "your function raised NotImplementedError");
2. opens the cheapest solution notebook (01_pipeline_trace), runs all, and asserts no error at all
and that its
   plots are rendered (<img> elements in the output areas, PNGs in the saved file);
3. opens nbgrader's formgrader from JupyterLab's command (as `./course lab` installs it) and asserts
that every
   assignment is listed.
Screenshots go to artifacts/browser/ (git-ignored; $COURSE_ARTIFACTS overrides), the path is
printed.

Needs: /usr/bin/chromium (`apt-get install chromium`; `./course test` installs it when root) and the
`playwright` package (the `test` extra). Skipped, with the reason, where either is missing.
Cost on the 2-core CI machine: see `docs/ecosystem.md` (~4-5 min, most of it the notebooks' own
cells).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
ASSIGNMENTS = [
    "01_pipeline_trace",
    "02_logits_softmax",
    "03_sampling",
    "04_generation_loop",
    "05_debugging_generation",
]
CLEAN_SOLUTION = "01_pipeline_trace"  # the cheapest solution notebook top to bottom (~1 min)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
NOTEBOOK_TIMEOUT_S = 240

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="pip install playwright (the course's `test` extra)"
)
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"
)


def artifacts_dir() -> Path:
    """Where screenshots go (created; printed by the tests)."""
    d = Path(os.environ.get("COURSE_ARTIFACTS") or ROOT / "artifacts") / "browser"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """(base URL, token, work folder): JupyterLab serving copies of notebooks/, solutions/ and
    nbgrader_config.py."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    shutil.copytree(ROOT / "solutions", work / "solutions")
    # formgrader's course = this copy
    shutil.copy(ROOT / "nbgrader_config.py", work / "nbgrader_config.py")
    scratch = tmp_path_factory.mktemp("jupyter")
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MPLBACKEND", "COURSE_GRADING", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR")
    }
    env.update(
        JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
        JUPYTER_CONFIG_DIR=str(scratch / "config"),
        JUPYTERLAB_WORKSPACES_DIR=str(scratch / "workspaces"),
        IPYTHONDIR=str(scratch / "ipython"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work}",
        # window.jupyterapp: run JupyterLab's own commands
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(scratch / "lab.log", "wb")
    proc = subprocess.Popen(
        cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            assert proc.poll() is None, (
                "JupyterLab exited:\n" + (scratch / "lab.log").read_text()[-3000:]
            )
            try:
                req = urllib.request.Request(
                    f"{base}/api/status", headers={"Authorization": f"token {token}"}
                )
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.time() < deadline, "JupyterLab did not answer in 120 s"
            time.sleep(0.5)
        yield base, token, work
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started (own session)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Debian's Chromium under Playwright with a fresh profile (a context: ``.new_page()`` opens a
    tab)."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        # Playwright refuses --user-data-dir in args; a persistent context is the same thing.
        ctx = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        yield ctx
        ctx.close()


_READY = """() => {
    const app = window.jupyterapp, w = app && app.shell.currentWidget;
    if (!w || !w.sessionContext || !w.content || !w.context || !w.context.isReady) return false;
    const k = w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.status === 'idle';
}"""

# Run All; where an error stops it, Run All Below from the cell after the error, until the end.
# Resolves to the number of Run All / Run All Below rounds.
_RUN_ALL = """async () => {
    const app = window.jupyterapp, w = app.shell.currentWidget, nb = w.content;
    const hasError = (cell) => cell.model.type === 'code'
        && cell.model.outputs.toJSON().some((o) => o.output_type === 'error');
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    // After an error the kernel aborts the requests still queued behind it; a new run sent before it is idle
    // again is aborted too (no error output anywhere): wait for idle, and retry such a round.
    const settle = async () => {
        for (let t = 0; t < 200 && w.sessionContext.session.kernel.status !== 'idle'; t++) await sleep(100);
        await sleep(500);
    };
    let start = 0, rounds = 0, retries = 0;
    while (start < nb.widgets.length) {
        if (rounds) await settle();
        nb.activeCellIndex = start;
        rounds += 1;
        window.__progress = {rounds, start, retries, cells: nb.widgets.length};
        const ok = await app.commands.execute(start === 0 ? 'notebook:run-all-cells' : 'notebook:run-all-below');
        if (ok) break;
        await settle();  // the execute reply can arrive before the error output (another channel)
        let i = start;
        while (i < nb.widgets.length && !hasError(nb.widgets[i])) i++;
        if (i >= nb.widgets.length) {
            if (++retries > 3) throw new Error('runs from cell ' + start + ' keep stopping without an error output');
            continue;
        }
        start = i + 1;
    }
    await app.commands.execute('docmanager:save');
    return rounds;
}"""  # noqa: E501


def run_notebook_in_browser(browser, lab, rel: str, shot: str) -> tuple[dict, int, int]:
    """Open ``rel`` in JupyterLab, run all, save; (saved notebook, rounds, <img> in outputs).
    Screenshot saved."""
    base, token, work = lab
    page = browser.new_page()
    try:
        # a workspace of its own, reset: otherwise JupyterLab restores the notebooks earlier tabs
        # had open
        page.goto(f"{base}/lab/workspaces/{shot}/tree/{rel}?reset&token={token}")
        page.wait_for_function(_READY, timeout=120_000)
        page.evaluate("() => { window.__run = null; }")
        page.evaluate(
            f"() => {{ ({_RUN_ALL})().then((r) => window.__run = r, "
            "(e) => window.__run = 'error: ' + e); }"
        )
        try:
            page.wait_for_function(
                "() => window.__run !== null", timeout=NOTEBOOK_TIMEOUT_S * 1000, polling=500
            )
        except Exception:
            page.screenshot(path=str(artifacts_dir() / f"{shot}-stuck.png"), full_page=False)
            state = page.evaluate(
                "() => ({progress: window.__progress, active: jupyterapp.shell.currentWidget"
                ".content.activeCellIndex, kernel: jupyterapp.shell.currentWidget.sessionContext"
                ".session.kernel.status})"
            )
            raise AssertionError(
                f"{rel}: Run All did not finish in {NOTEBOOK_TIMEOUT_S} s: {state}"
            ) from None
        rounds = page.evaluate("() => window.__run")
        assert isinstance(rounds, int), f"{rel}: {rounds}"
        page.wait_for_function(_READY, timeout=30_000)
        imgs = page.locator(".jp-OutputArea-output img").count()
        page.screenshot(path=str(artifacts_dir() / f"{shot}.png"), full_page=False)
        page.evaluate(
            "() => { const a = jupyterapp.shell.currentWidget.content; "
            "a.activeCellIndex = a.widgets.length - 1; a.mode = 'command'; }"
        )
        page.screenshot(path=str(artifacts_dir() / f"{shot}-end.png"), full_page=False)
        return json.loads((work / rel).read_text()), rounds, imgs
    finally:
        page.close()


def _errors(nb: dict) -> list[tuple[int, str, str]]:
    return [
        (i, o.get("ename", ""), o.get("evalue", ""))
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


def _stub_error(ename: str, evalue: str) -> bool:
    """A graded stub's NotImplementedError: raised directly, or every failed case of a visible check
    says so."""
    if ename == "NotImplementedError":
        return True
    if ename != "CheckFailed":
        return False
    cases = [ln for ln in evalue.splitlines() if ln.strip().startswith("case ")]
    return bool(cases) and all("raised NotImplementedError" in ln for ln in cases)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_notebook_runs_with_only_stub_errors(browser, lab, assignment):
    t0 = time.perf_counter()
    nb, rounds, _ = run_notebook_in_browser(
        browser, lab, f"notebooks/{assignment}/{assignment}.ipynb", f"student-{assignment}"
    )
    not_run = [
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and c.get("execution_count") is None
    ]
    assert not not_run, f"cells never ran: {not_run}"
    errors = _errors(nb)
    others = [e for e in errors if not _stub_error(e[1], e[2])]
    assert not others, f"errors other than the stubs' NotImplementedError: {others}"
    # each untouched exercise's check cell says so and lets Run All go on (it raises only when
    # graded)
    told = "".join(
        "".join(o.get("text", ""))
        for c in nb["cells"]
        if c["cell_type"] == "code"
        # saved text: a list of lines
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream"
    )
    assert "not attempted yet" in told, (
        "a student notebook with stubs should say its exercises are not attempted"
    )
    print(
        f"{assignment}: {len(errors)} stub errors, {rounds} Run All rounds, "
        f"{time.perf_counter() - t0:.0f} s; screenshots in {artifacts_dir()}"
    )


def test_solution_notebook_runs_clean_with_plots(browser, lab):
    t0 = time.perf_counter()
    rel = f"solutions/{CLEAN_SOLUTION}/{CLEAN_SOLUTION}.ipynb"
    nb, rounds, imgs = run_notebook_in_browser(browser, lab, rel, f"solution-{CLEAN_SOLUTION}")
    assert _errors(nb) == [] and rounds == 1, _errors(nb)
    pngs = sum(
        "image/png" in o.get("data", {})
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
    )
    assert pngs >= 1 and imgs >= 1, f"plots: {pngs} PNG outputs saved, {imgs} <img> rendered"
    print(
        f"{CLEAN_SOLUTION} (solution): clean, {imgs} plots rendered, "
        f"{time.perf_counter() - t0:.0f} s"
    )


def test_formgrader_lists_every_assignment(browser, lab):
    base, token, _ = lab
    page = browser.new_page()
    try:
        page.goto(f"{base}/lab/workspaces/formgrader?reset&token={token}")
        page.wait_for_function(
            "() => window.jupyterapp && "
            "window.jupyterapp.commands.hasCommand('nbgrader:open-formgrader')",
            timeout=120_000,
        )
        page.evaluate("() => window.jupyterapp.commands.execute('nbgrader:open-formgrader')")
        frame = page.frame_locator("iframe").first
        for a in ASSIGNMENTS:
            frame.get_by_text(a, exact=True).first.wait_for(timeout=60_000)
        page.screenshot(path=str(artifacts_dir() / "formgrader.png"))
    finally:
        page.close()
