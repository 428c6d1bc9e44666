"""Time limits charged on the student process tree's own CPU time (issue 22, point 2):
the meters (a CPU-accounting cgroup, and /proc where there is none), and real gradings
where a case computes past its limit (stopped by the CPU limit), sleeps (stopped by the
wall-clock backstop) or uses up the submission's limit; every message names the limit
that stopped the code. No test here asserts a duration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.sandbox import cgroup
from grader.sandbox.cgroup import StudentCgroups
from grader.sandbox.cpu_clock import ProcessTreeCpu
from grader.spec import load_spec

from .notebook_builder import notebook_from_py

BURN = "import time\nwhile time.process_time() < 0.5:\n    pass\n"
SPEC = """lab: tree
limits: {case_seconds: 1, submission_seconds: 2.5}
checks:
  load: {points: 1}
  value: {points: 1}
  limits: {points: 1}
cases:
"""
CASE = """  - name: tiny-{n}
    checks: [value]
    graph: {{a0: [b0, b1]}}
    terminal_nodes: {{b0: 1, b1: {n}}}
    expect: {{value: {n}, nodes: 3, pruned: []}}
"""
LOOPS = "graph = {}\nterminal_nodes = {}\n\n\ndef alphabeta(node, alpha, beta, max_player):\n    while True:\n        pass\n"
SLEEPS = "import time\n\ngraph = {}\nterminal_nodes = {}\n\n\ndef alphabeta(node, alpha, beta, max_player):\n    time.sleep(3600)\n"
PER_CASE = "ran past the time limit of 1 s of CPU time per case"

pytestmark = pytest.mark.timing  # every test here waits for a limit to stop the code


def spec_with(tmp_path: Path, cases: int):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC + "".join(CASE.format(n=n) for n in range(2, 2 + cases)))
    return load_spec(path)


def graded(tmp_path: Path, source: str, cases: int = 1, notebook: bool = False):
    path = tmp_path / "lab.py"
    path.write_text(source)
    if notebook:
        path = notebook_from_py(path, tmp_path / "lab.ipynb")
    return grade_submission(path, get_lab("tree"), spec_with(tmp_path, cases), seed=1)


def failures(report) -> list[str]:
    return [t.output for t in report.tests if not t.passed and t.kind == "value"]


# --- the meters -----------------------------------------------------------------------


def test_proc_counts_a_live_child_and_one_that_was_waited_for():
    """The fallback without a cgroup: the tree's live processes, plus the children they
    waited for (their time moves into the parent's cutime)."""
    script = (
        "import os, sys, time\n"
        "def burn():\n    while time.process_time() < 0.5:\n        pass\n"
        "first = os.fork()\n"
        "if first == 0:\n    burn()\n    os._exit(0)\n"
        "os.waitpid(first, 0)\n"
        "second = os.fork()\n"
        "if second == 0:\n    burn()\n    print('burnt', flush=True)\n    time.sleep(60)\n    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    tree = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert tree.stdout is not None and tree.stdout.readline() == b"burnt\n"
        assert ProcessTreeCpu(tree.pid).seconds() >= 0.95  # both children, 10 ms ticks
    finally:
        tree.kill()
        tree.wait()


def test_a_cgroup_counts_processes_that_already_ended():
    groups = StudentCgroups()
    if groups.cpu_file is None:
        groups.remove()
        pytest.skip("no CPU-accounting cgroup can be made here")
    try:
        done = subprocess.run([sys.executable, "-c", BURN], preexec_fn=groups.join, timeout=120)
        assert done.returncode == 0
        meter = groups.meter(0)
        # the child burned 0.5 s by its own clock; the cgroup's count of it may trail by a
        # tick (its statistics are gathered lazily), never by more
        assert meter.seconds() >= 0.45
        groups.remove()
        assert meter.seconds() >= 0.45  # the last reading is kept once the cgroup is gone
    finally:
        groups.remove()


def test_a_cgroup_meter_keeps_one_descriptor_and_closes_it_with_the_session():
    groups = StudentCgroups()
    if groups.cpu_file is None:
        groups.remove()
        pytest.skip("no CPU-accounting cgroup can be made here")
    try:
        meter, folder = groups.meter(0), groups.cpu_file.parent
        before = set(os.listdir("/proc/self/fd"))
        meter.seconds()
        kept = set(os.listdir("/proc/self/fd")) - before
        assert len(kept) == 1  # opened on the first reading
        done = subprocess.run([sys.executable, "-c", BURN], preexec_fn=groups.join, timeout=120)
        assert done.returncode == 0
        assert set(os.listdir("/proc/self/fd")) - before == kept  # read again, not reopened
        assert meter.seconds() >= 0.45  # the same descriptor sees what was charged since
        groups.remove()  # a kept descriptor doesn't hold the cgroup back
        assert not folder.exists() and meter.seconds() >= 0.45
        meter.close()
        assert set(os.listdir("/proc/self/fd")) - before == set()
        assert meter.seconds() >= 0.45  # the last reading stays once closed
    finally:
        groups.remove()


# --- gradings -------------------------------------------------------------------------


def test_a_case_that_computes_past_its_limit_is_stopped_by_the_cpu_limit(tmp_path):
    report = graded(tmp_path, LOOPS)
    assert [PER_CASE in f for f in failures(report)] == [True], failures(report)
    assert PER_CASE in next(t.output for t in report.tests if t.kind == "limits")


def test_a_case_that_sleeps_is_stopped_by_the_wall_clock_backstop(tmp_path):
    report = graded(tmp_path, SLEEPS)
    (failure,) = failures(report)
    assert "ran past the wall-clock backstop of 15 s per case (its limit is 1 s of CPU time" in failure
    assert "not computing" in failure


def test_without_a_cgroup_proc_stops_a_loop_at_its_cpu_limit(tmp_path, monkeypatch):
    real = cgroup._controller_root
    monkeypatch.setattr(cgroup, "_controller_root", lambda c: None if c == "cpuacct" else real(c))
    report = graded(tmp_path, LOOPS)
    assert [PER_CASE in f for f in failures(report)] == [True], failures(report)


@pytest.mark.slow
def test_a_notebook_kernels_case_is_stopped_by_the_cpu_limit(tmp_path):
    report = graded(tmp_path, LOOPS, notebook=True)
    assert [PER_CASE in f for f in failures(report)] == [True], failures(report)


def test_the_submissions_limit_counts_every_worker_it_needed(tmp_path):
    """Four looping cases with 1 s each of a 2.5 s submission: two meet the case limit
    (each kills its worker: a fresh one is loaded), the third what is left of the
    submission's, and the fourth finds it used up."""
    report = graded(tmp_path, LOOPS, cases=4)
    said = failures(report)
    assert len(said) == 4, said
    assert all(PER_CASE in s for s in said[:2]), said
    assert "ran past the time limit of 2.5 s of CPU time per submission" in said[2], said
    assert "the submission had used up the time limit of 2.5 s of CPU time per submission" in said[3], said
