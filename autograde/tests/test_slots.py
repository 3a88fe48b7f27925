"""Where concurrent grading runs share their sandbox slots (`autograde.grade._slot_folder`).

Guarantee (docs/threat-model.md): no local user can make the grader follow a link or take a lock it
placed. A second blind red team planted `N.lock` links in a shared /tmp/autograde-slots before root
graded, and root's grader emptied the file a link pointed to; the same folder, made by root, turned
every student of a non-root instructor into `error`. Now the folder is per user (root: /run), must
be a real directory that only that user owns and can write, and lock files are opened without
following links; otherwise the grader refuses in one line before writing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from autograde.course import REPO
from autograde.grade import _Slot, _slot_folder
from autograde.tests import unprivileged


def test_a_fresh_folder_is_made_private_and_slots_are_taken_in_order(tmp_path):
    folder = _slot_folder(tmp_path)
    assert folder == tmp_path / f"autograde-slots-{os.geteuid()}"
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_link_a_foreign_folder_or_an_open_folder_is_refused_and_nothing_is_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("root-only data")
    name = f"autograde-slots-{os.geteuid()}"
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "0.lock").symlink_to(victim)
    cases = {}
    base = tmp_path / "link"
    base.mkdir()
    (base / name).symlink_to(planted)  # the folder itself is a link
    cases["link"] = base
    base = tmp_path / "open"
    (base / name).mkdir(parents=True)
    os.chmod(base / name, 0o777)  # anyone may plant in it
    cases["open"] = base
    if os.geteuid() == 0:
        base = tmp_path / "foreign"
        (base / name).mkdir(parents=True)
        os.chmod(base / name, 0o700)
        os.chown(base / name, unprivileged.UID, unprivileged.UID)  # made by someone else
        cases["foreign"] = base
    for why, base in cases.items():
        with pytest.raises(RuntimeError, match="only this user owns"):
            _slot_folder(base)
    assert victim.read_text() == "root-only data"
    # control: the same planted link inside a folder that passes the check is not followed either
    (tmp_path / "ok").mkdir()
    ok = _slot_folder(tmp_path / "ok")
    (ok / "0.lock").symlink_to(victim)
    with pytest.raises(OSError):  # O_NOFOLLOW: ELOOP
        os.open(ok / "0.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    assert victim.read_text() == "root-only data"


def test_slots_are_exclusive_between_holders(tmp_path, monkeypatch):
    import autograde.grade as g

    monkeypatch.setattr(g, "_slot_folder", lambda base=None: _slot_folder(tmp_path))
    a, b = _Slot(), _Slot()
    try:
        assert a.n != b.n
    finally:
        a.release()
        b.release()
    c = _Slot()
    assert c.n == 0
    c.release()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_a_non_root_grader_with_a_planted_slot_folder_is_refused_in_one_line(tmp_path):
    """The refusal names the folder; no traceback; nothing written to OUT."""
    home = unprivileged.shared_folder("slots-")
    tmp = home / "tmp"
    tmp.mkdir()
    os.chmod(tmp, 0o1777)
    (tmp / f"autograde-slots-{unprivileged.UID}").mkdir()  # made by root: not nobody's
    env = {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
    }
    try:
        r = subprocess.run(
            unprivileged.command(
                [
                    sys.executable,
                    "-m",
                    "autograde",
                    "grade",
                    str(tmp_path),
                    "--out",
                    str(home / "o"),
                ],
                env,
            ),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 2, r.stderr
        assert (
            r.stderr.count("\n") == 1
            and "cannot grade safely" in r.stderr
            and "autograde-slots" in r.stderr
        ), r.stderr
        assert "Traceback" not in r.stderr and not (home / "o").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_folder_names_reach_the_terminal_without_control_characters():
    """A student folder named with escape sequences cleared the instructor's screen, and one with a
    newline printed a forged progress line (a red team did). The progress lines show such characters
    as \\xNN."""
    from autograde.grade import shown

    name = "x\x1b[2J\x1b[31mred\nvictim/02: graded 26/26\r"
    out = shown(name)
    assert out.isprintable() and "\n" not in out and "\x1b" not in out
    assert out == "x\\x1b[2J\\x1b[31mred\\x0avictim/02: graded 26/26\\x0d"
    assert shown("alice_01") == "alice_01"


def test_a_folder_without_a_notebook_says_what_it_holds(tmp_path):
    """Near misses (`.IPYNB`, a zip, a notebook one folder down) all read 'no notebook found': the
    detail now names what is there, so the instructor (or the student) can rename it."""
    from autograde.grade import Job, _holds

    d = tmp_path / "s1" / "02_logits_softmax"
    (d / "nested").mkdir(parents=True)
    (d / "02_logits_softmax.IPYNB").write_text("{}")
    (d / "work.zip").write_bytes(b"PK")
    text = _holds(Job("s1", "02_logits_softmax", d))
    assert (
        "02_logits_softmax.IPYNB, nested/, work.zip" in text
        and "reads 02_logits_softmax.ipynb" in text
    )
    (tmp_path / "empty").mkdir()
    assert _holds(Job("s2", "02_logits_softmax", tmp_path / "empty")) == " (the folder is empty)"
    assert _holds(Job("s3", "02_logits_softmax", tmp_path / "absent")) == ""
