"""The notebooks' thread policy (course_lib.device.thread_policy): its rule and the environment
override.

Why the rule is what it is lives in benchmarks/pace.py and docs/benchmarks.md (speed claims are
benchmarks, never timed tests). Cost: well under a second.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from course_lib.device import thread_policy


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (3, 1), (4, 2), (8, 4), (64, 4)])
def test_one_thread_on_small_machines_half_the_cores_elsewhere(monkeypatch, cores, threads):
    monkeypatch.delenv("COURSE_THREADS", raising=False)
    assert thread_policy(cores) == threads


def test_environment_wins(monkeypatch):
    monkeypatch.setenv("COURSE_THREADS", "3")
    assert thread_policy(2) == 3
    monkeypatch.setenv("COURSE_THREADS", "0")
    with pytest.raises(ValueError, match="COURSE_THREADS"):
        thread_policy(2)


def test_use_thread_policy_sets_torch_in_a_fresh_process():
    code = (
        "import torch; from course_lib.device import use_thread_policy; n = use_thread_policy(); "
        "print(n, torch.get_num_threads(), torch.get_num_interop_threads())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "COURSE_THREADS": "2"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "2", "1"]
