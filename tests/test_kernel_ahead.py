"""A batch's grader process starts its next submission's kernel while the current one
runs, is judged and recorded (issue 26, goal 4: grader/batch/pool.py's NextJob,
grader/batch/task.py, NotebookSession.start_ahead). What must hold, with real processes
and real kernels: a job given ahead is graded next by the process that asked, and by no
other; near the end of a batch nothing is given (or started) ahead; a job given ahead to
a grader process that dies goes back to the queue; a hostile notebook graded while the
next student's kernel is being started can neither reach that kernel nor change its
grade; a notebook gets the same grade alone and after a kernel started ahead; its limits
count from its first cell, not from its kernel's start; and an interrupted batch leaves
no kernel, student process or leased uid behind."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from grader.batch.pool import Job, JobResult, run_jobs
from grader.batch.task import GradeTask
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.results import GradeReport
from grader.sandbox import isolation as isolation_module
from grader.sandbox import session as session_module
from grader.sandbox.deadline import backstop
from grader.sandbox.identity import LEASE_DIR, grader_is_root, processes_of
from grader.sandbox.opening import open_session
from grader.seeding import Seed
from grader.spec import load_spec

from .notebook_builder import notebook_from_py
from .test_batch import abgrade_batch, alive, descendants, rows, started, wait_for_rows

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"

pytestmark = pytest.mark.usefixtures("grader_files_untouched")


# --- the pool's side, with a task that only says what it was given -----------------------


@dataclass
class AheadTask:
    """Asks for its next job before it grades each one and writes down, per job, which
    process graded it and what it was given ahead; `dies` dies once, after asking."""

    log: Path
    dies: str = ""
    halves: bool = False  # asked on this thread, answered on another (as a `.py` grading does)
    _ask: object = field(default=None, repr=False)

    def look_ahead(self, ask) -> None:
        self._ask = ask

    def __call__(self, path: Path) -> str:
        if self.halves:
            self._ask.ask()
            answering = threading.Thread(target=self._ask.answer)
            answering.start()
            answering.join()
            given = self._ask.given
        else:
            given = self._ask() if callable(self._ask) else None
        (self.log / path.name).write_text(f"{os.getpid()} {given.name if given else ''}")
        if path.name == self.dies and not (self.log / "died").exists():
            (self.log / "died").touch()
            os._exit(1)
        return path.name.upper()


def _collect_into(results: dict[str, JobResult]):
    return lambda result: results.__setitem__(result.job.key, result)


def _graded(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """job -> (the process that graded it, the job it was given ahead)."""
    log = tmp_path / "log"
    return {p.name: tuple(p.read_text().split(" ")) for p in log.iterdir() if p.name != "died"}  # type: ignore[misc]


@pytest.mark.parametrize("workers,halves", [(1, False), (2, False), (2, True)])
def test_a_job_given_ahead_is_graded_next_by_the_process_that_asked(tmp_path, workers, halves):
    names = [f"job{i:02d}" for i in range(12)]
    log = tmp_path / "log"
    log.mkdir()
    results: dict[str, JobResult] = {}
    task = AheadTask(log, halves=halves)
    run_jobs([Job(n, tmp_path / n) for n in names], task, workers, 60.0, _collect_into(results))
    assert {k: (r.value, r.failure, r.job.attempts) for k, r in results.items()} == {
        n: (n.upper(), None, 1) for n in names
    }
    graded = _graded(tmp_path)
    given = {job: ahead for job, (_, ahead) in graded.items() if ahead}
    assert given, "no job was given ahead"
    assert len(set(given.values())) == len(given)  # no job given twice
    for job, ahead in given.items():
        assert graded[ahead][0] == graded[job][0], (job, ahead)  # the process that asked graded it
    # near the end nothing is given ahead: the last `workers` jobs are each handed to whoever is idle
    assert len(given) <= len(names) - workers


def test_a_job_given_ahead_goes_back_when_its_grader_process_dies(tmp_path):
    names = ["a", "b", "c", "d", "e", "f"]
    log = tmp_path / "log"
    log.mkdir()
    results: dict[str, JobResult] = {}
    run_jobs([Job(n, tmp_path / n) for n in names], AheadTask(log, dies="b"), 1, 60.0, _collect_into(results))
    assert {k: r.value for k, r in results.items()} == {n: n.upper() for n in names}
    assert results["b"].job.attempts == 2  # died once, then graded
    assert all(results[n].job.attempts == 1 for n in names if n != "b")  # what b held went back untried


@dataclass
class StoppedTask:
    """Given its next job ahead, then busy with its job until the batch stops it: writes
    down that the job was unwound and what its close() found opened ahead."""

    log: Path
    _ask: object = field(default=None, repr=False)
    _ahead: Path | None = field(default=None, repr=False)

    def look_ahead(self, ask) -> None:
        self._ask = ask

    def __call__(self, path: Path) -> str:
        self._ahead = self._ask() if callable(self._ask) else None
        (self.log / "asked").write_text(self._ahead.name if self._ahead else "")
        try:
            time.sleep(120)
        finally:
            (self.log / "unwound").write_text(path.name)
        return path.name

    def close(self) -> None:
        (self.log / "closed").write_text(self._ahead.name if self._ahead else "")


def test_a_stopped_grader_process_unwinds_its_job_and_closes_what_it_opened_ahead(tmp_path):
    log = tmp_path / "log"
    log.mkdir()

    def interrupt_once_given(running: list[float]) -> None:
        if (log / "asked").exists():
            raise KeyboardInterrupt  # Ctrl-C in the batch

    with pytest.raises(KeyboardInterrupt):
        run_jobs(
            [Job(n, tmp_path / n) for n in ("a", "b", "c")], StoppedTask(log), 1, 600.0, print, interrupt_once_given
        )
    assert (log / "asked").read_text() == "b"
    assert (log / "unwound").read_text() == "a"
    assert (log / "closed").read_text() == "b"


# --- real kernels ---------------------------------------------------------------------

LEVELS = ["namespaces", "process"] if isolation_module.detect_isolation().level == "namespaces" else ["process"]
LEVEL_OF = {"namespaces": isolation_module.NAMESPACES, "process": isolation_module.PROCESS}
needs_root = pytest.mark.skipif(not grader_is_root(), reason="kernels are started ahead where each leases a uid")

# Run while the next student's kernel is being started: look for every process and kernel
# connection file of another user, and try to signal each process (signal 0: permission only)
HOSTILE = r"""
import glob, os
mine = os.getuid()
scanned, signalled, found = 0, [], []
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    try:
        with open(f"/proc/{name}/status") as handle:
            uid = int(handle.read().split("\nUid:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        continue
    scanned += 1
    if uid != mine:
        try:
            os.kill(int(name), 0)
            signalled.append(name)
        except OSError:
            pass
for pattern in ("/tmp/*/kernel.json", "/tmp/*/*/kernel.json", "/dev/shm/*/kernel.json", "/var/tmp/*/kernel.json"):
    for path in glob.glob(pattern):
        try:
            if os.stat(path).st_uid != mine:
                with open(path) as handle:
                    found.append(path + " " + handle.read(40))
        except OSError:
            pass
print("SCANNED", scanned > 0, "SIGNALLED", signalled, "FOUND", found)
"""


def _notebooks(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    folder = tmp_path / "class"
    folder.mkdir()
    first = notebook_from_py(FIXTURES / "tree" / "bug_no_pruning.py", folder / "a_first.ipynb")
    solution = notebook_from_py(SOLUTION, folder / "b_solution.ipynb")
    hostile = folder / "c_hostile.ipynb"
    source = tmp_path / "hostile.py"
    source.write_text(SOLUTION.read_text() + "\n" + HOSTILE)
    notebook_from_py(source, hostile)
    bug = notebook_from_py(FIXTURES / "tree" / "bug_strict_cutoff.py", folder / "d_bug.ipynb")
    return first, solution, hostile, bug


def _summary(report: GradeReport) -> list[tuple]:
    return [(t.name, t.passed, t.max_score, t.output, t.diagnoses) for t in report.tests] + [report.load_notes]


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_a_hostile_notebook_cannot_reach_the_kernel_started_for_the_next_and_grades_are_as_alone(
    tmp_path, tree_spec, monkeypatch, level
):
    monkeypatch.setattr(session_module, "detect_isolation", lambda: LEVEL_OF[level])
    # the hostile notebook runs in a kernel started ahead, right after the solution's (itself
    # started ahead), and while the next student's kernel is being started
    first, solution, hostile, bug = _notebooks(tmp_path)
    seed = Seed(7, "test")
    task = GradeTask("tree", tree_spec, seed, hidden=(hostile.parent,))
    order = [first, solution, hostile, bug]
    reports = {}
    for number, path in enumerate(order):
        following = order[number + 1] if number + 1 < len(order) else None
        task.look_ahead(lambda following=following: following)
        reports[path] = task(path)
        if following is not None:  # started while `path` ran, for `following` only
            ahead = task._ahead
            assert ahead is not None, reports[path] and ahead.path == following and ahead.session is not None
            assert ahead.session._ahead is not None, "no kernel was started ahead"
    task.close()

    printed = reports[hostile].student_output
    assert "SCANNED True SIGNALLED [] FOUND []" in printed, printed
    lab = get_lab("tree")
    for path in (first, solution, bug):
        alone = grade_submission(path, lab, tree_spec, seed=seed, hidden=(hostile.parent,))
        assert _summary(reports[path]) == _summary(alone), path.name
    assert reports[solution].score == reports[solution].max_score == reports[hostile].score
    assert reports[bug].score < reports[bug].max_score and reports[first].score < reports[first].max_score


@needs_root
@pytest.mark.slow
@pytest.mark.timing
def test_a_kernel_started_ahead_counts_the_submissions_time_from_its_first_cell(tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec = yaml.safe_load((FIXTURES / "specs" / "tree_tight_limits.yaml").read_text())
    spec["limits"] = {"case_seconds": 1, "cell_seconds": 2, "submission_seconds": 2}
    spec_file.write_text(yaml.safe_dump(spec, sort_keys=False))
    tight = load_spec(spec_file)
    lab = get_lab("tree")
    notebook = notebook_from_py(SOLUTION, tmp_path / "lab.ipynb")
    session = open_session(notebook, lab.private_dirs)
    session.start_ahead(lab.probe, tight.limits)
    # longer than the submission's wall-clock backstop: had the kernel's start counted, its
    # time would be up before the first cell
    time.sleep(backstop(tight.limits.submission_seconds) + 2)
    report = grade_submission(notebook, lab, tight, seed=1, session=session)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]


@needs_root
@pytest.mark.slow
@pytest.mark.timing
def test_an_interrupted_batch_leaves_no_kernel_student_process_or_uid_behind(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    sleeper = tmp_path / "sleeper.py"  # sleeps (no CPU time): its grading lasts while the next kernel waits
    sleeper.write_text(SOLUTION.read_text() + "\nimport time\ntime.sleep(120)\n")
    for number in range(4):
        notebook_from_py(SOLUTION, folder / f"s{number}_solution.ipynb")
    notebook_from_py(sleeper, folder / "s4_sleeper.ipynb")
    for number in range(5, 8):
        notebook_from_py(SOLUTION, folder / f"s{number}_solution.ipynb")
    out = tmp_path / "out"
    batch = abgrade_batch(folder, out, "--jobs", 1, "--seed", 3, popen=True)
    try:
        wait_for_rows(out, 4, batch, timeout=240)
        deadline = time.monotonic() + 120  # the sleeper's kernel and the next one's, started ahead
        while len(_student_uids(batch.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        uids = _student_uids(batch.pid)
        assert len(uids) >= 2, descendants(batch.pid)
        family = {pid: started(pid) for pid in descendants(batch.pid)}
        os.killpg(batch.pid, signal.SIGINT)  # Ctrl-C, as a terminal sends it
        _, stderr = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
            batch.communicate()
    assert batch.returncode == 130 and "interrupted after" in stderr, stderr
    left = [p for p, t in family.items() if alive(p, t)]
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in left if alive(p)]
    for uid in uids:  # given back whole: nothing of it runs, and its lease says so
        assert _given_back(uid), uid
    assert rows(out, "SELECT status FROM runs") == [("interrupted",)]


def _student_uids(pid: int) -> set[int]:
    """The uids (other than ours) that the batch's descendants run as: its students'."""
    found = set()
    for child in descendants(pid):
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        uid = int(status.split("\nUid:", 1)[1].split()[0])
        if uid != os.getuid():
            found.add(uid)
    return found


def _given_back(uid: int) -> bool:
    """Nothing runs as the uid, and its lease is free, unless another grading on this
    machine has leased it since (its lock is then held by a live grader, not by anything
    of ours: every process of the batch is gone)."""
    fd = os.open(LEASE_DIR / str(uid), os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True  # leased again by another grading
        return processes_of(uid) == []
    finally:
        os.close(fd)


STOP_IN_A_CALLBACK = """
import gc, os, signal, sys, time, weakref
from grader.batch import pool

signal.signal(signal.SIGTERM, pool._stop)
sys.unraisablehook = pool._stop_again_if_swallowed

class Thing:
    pass

def callback(_):
    os.kill(os.getpid(), signal.SIGTERM)  # the stop lands in here, where it can't be raised
    for _ in range(1000):
        pass

thing = Thing()
ref = weakref.ref(thing, callback)
try:
    del thing
    gc.collect()
    deadline = time.monotonic() + 30  # the grading's code goes on until the stop is asked again
    while time.monotonic() < deadline:  # (20 ms later; a fixed count of loops ended first on an idle machine)
        pass
    print("NOT STOPPED")
except pool.Stopped:
    print("STOPPED IN THE GRADING'S CODE")
"""


def test_a_stop_that_lands_in_a_weakref_callback_is_asked_again_not_printed_and_lost():
    """SIGTERM's Stopped raised inside a weakref callback is "unraisable": Python printed a
    traceback on the batch's stderr and dropped it, and the grader process graded on."""
    done = subprocess.run([sys.executable, "-c", STOP_IN_A_CALLBACK], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "STOPPED IN THE GRADING'S CODE", done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
