"""A batch's grader process closes a `.py` or notebook submission's sandbox in two steps: its
processes are killed before the grade is returned; its work folder and uid are given back
on the session's own thread while the next submission is graded (GradeTask, Closing);
and in the local pool the next submission is opened on a thread (its own uid and folder)
and its worker forked, to confine itself, as soon as the current one is loaded
(Session.on_ready, GradeTask._open_next), so two students' sessions are open at once.
What must hold anyway: no uid is leased while an earlier student still holds it, nothing
of a student (process, folder, lease) is left once the grader process's task is closed,
and every grade is the one the submission gets alone. Real gradings, hostile fixtures
that leave processes behind."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import grader.sandbox.session as session_module
from grader.batch.pool import Job, run_jobs
from grader.batch.task import GradeTask, opener
from grader.results import GradeReport
from grader.sandbox import worker_zygote
from grader.sandbox.identity import StudentIdentity, grader_is_root, processes_of
from grader.sandbox.limits import die_with_grader
from grader.seeding import Seed
from grader.spec import load_spec, spec_path

from .notebook_builder import notebook_from_py
from .test_batch import abgrade_batch, alive, descendants, started, wait_for_rows
from .test_kernel_ahead import _given_back, _student_uids

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED = Seed(2718, "test", secret=True)
# one that leaves 20 sleeping children behind, a correct one, the same hostile one again
IN_TURN = [
    FIXTURES / "hostile" / "sleeping_children.py",
    FIXTURES / "tree" / "correct_fail_hard.py",
    FIXTURES / "hostile" / "sleeping_children.py",
    FIXTURES / "tree" / "bug_no_pruning.py",
]

needs_root = pytest.mark.skipif(not grader_is_root(), reason="uids are leased by a root grader")


@dataclass
class ClosedTask:
    """Writes down each job's grader process, and each process's close() at its end."""

    log: Path

    def __call__(self, path: Path) -> str:
        (self.log / f"graded-{path.name}").write_text(str(os.getpid()))
        return path.name

    def close(self) -> None:
        (self.log / f"closed-{os.getpid()}").touch()


@pytest.mark.parametrize("workers", [1, 2])
def test_at_a_batch_end_every_grader_process_closes_its_task_and_exits(tmp_path, workers):
    """Where the last submission's folder and uid are given back (GradeTask.close): each
    grader process is told the batch is done, not killed (a pipe's end closed would not
    do: the processes forked after it hold that end too)."""
    log = tmp_path / "log"
    log.mkdir()
    done: list[str] = []
    run_jobs(
        [Job(f"j{i}", tmp_path / f"j{i}") for i in range(8)],
        ClosedTask(log),
        workers,
        60.0,
        lambda r: done.append(r.value),
    )
    assert sorted(done) == sorted(f"j{i}" for i in range(8))
    graders = {p.read_text() for p in log.glob("graded-*")}
    assert {p.name.removeprefix("closed-") for p in log.glob("closed-*")} == graders


@pytest.fixture
def leases(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[StudentIdentity, set[int]]]]:
    """This test process grades as a batch's grader process does; every lease made, with
    the uids the earlier leases of this process still held at that moment."""
    monkeypatch.delenv("ABGRADE_WORKER_ZYGOTE", raising=False)
    worker_zygote.use()
    made: list[tuple[StudentIdentity, set[int]]] = []
    lease = session_module.lease

    def recorded() -> StudentIdentity | None:
        # held both before and after the lease: an earlier student's uid that the closing
        # thread releases while this lease is being made (its mark at once, its lock once
        # the student is reaped) may rightly be leased again, and is no finding
        before = {identity.uid for identity, _ in made if identity._lease_fd is not None}
        identity = lease()
        assert identity is not None
        after = {earlier.uid for earlier, _ in made if earlier._lease_fd is not None}
        made.append((identity, before & after))
        return identity

    monkeypatch.setattr(session_module, "lease", recorded)
    yield made
    worker_zygote.use(False)


def left_behind(uid: int) -> list[int]:
    """The hostile fixture's sleeping children still running as `uid` (the uid itself may
    be leased again by now, by another grading on this machine)."""
    left = []
    for pid in processes_of(uid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"sleeping_children" in command:
            left.append(pid)
    return left


def graded_in_turn(task: GradeTask, ahead: bool) -> list[GradeReport]:
    """IN_TURN graded by `task`; with `ahead`, each submission's worker started as the one
    before is loaded (as the local pool's NextJob answers)."""
    reports = []
    try:
        for number, path in enumerate(IN_TURN):
            following = IN_TURN[number + 1] if ahead and number + 1 < len(IN_TURN) else None
            task.look_ahead(lambda following=following: following)
            report = task(path)
            assert isinstance(report, GradeReport), report
            reports.append(report)
            assert task._closing is not None  # its folder and uid go while the next one is graded
            opened = task._ahead
            session = opened.opened() if opened is not None else None
            if following is not None:  # opened for `following` only, its worker forked
                assert opened is not None and opened.path == following
                assert session is not None and session._early is not None
            else:  # nothing given: nothing opened
                assert session is None and (opened is None or opened.path is None)
    finally:
        task.close()
    return reports


@needs_root
@pytest.mark.parametrize("ahead", [False, True], ids=["one-by-one", "next-worker-ahead"])
def test_no_uid_is_leased_while_an_earlier_student_holds_it(tmp_path, leases, ahead):
    task = GradeTask("tree", load_spec(spec_path("tree")), SEED, temp_root=tmp_path)
    reports = graded_in_turn(task, ahead)
    assert task._closing is None
    assert all(isinstance(report, GradeReport) for report in reports)
    assert len(leases) == len(IN_TURN)
    for identity, held in leases:
        assert identity.uid not in held
    for identity, _ in leases:
        assert identity._lease_fd is None  # released
        assert left_behind(identity.uid) == []  # the sleeping children too
    assert list(tmp_path.iterdir()) == []  # every job folder and work folder removed


@needs_root
def test_a_grade_after_a_hostile_one_and_started_ahead_is_its_solo_grade(tmp_path, leases):
    spec = load_spec(spec_path("tree"))
    in_turn = graded_in_turn(GradeTask("tree", spec, SEED, temp_root=tmp_path), ahead=True)
    for path, report in zip(IN_TURN, in_turn):
        alone_task = GradeTask("tree", spec, SEED, temp_root=tmp_path)
        try:
            alone = alone_task(path)
        finally:
            alone_task.close()
        assert isinstance(report, GradeReport) and isinstance(alone, GradeReport)
        assert [(t.name, t.passed, t.output) for t in report.tests] == [
            (t.name, t.passed, t.output) for t in alone.tests
        ]
        assert report.student_output == alone.student_output


SOLUTION = Path(__file__).resolve().parent.parent / "reference" / "solutions" / "tree.py"
# loads at once (its next submission is opened then), then sleeps in its first case (no
# CPU time): its grading lasts while the next submission's worker waits, confined
SLEEPER = """
import time as _time
_alphabeta = alphabeta
def alphabeta(*args, **kwargs):
    _time.sleep(120)
    return _alphabeta(*args, **kwargs)
"""


@needs_root
@pytest.mark.slow
@pytest.mark.timing
@pytest.mark.parametrize("way_out", ["ctrl-c", "sigkill"])
def test_a_worker_opened_ahead_and_never_used_leaves_no_process_or_uid_behind(tmp_path, way_out):
    """A `.py` batch stopped while a submission's cases run and the next one's worker waits
    opened ahead (its own uid, confined): Ctrl-C (the grader processes unwind and close
    what they opened ahead) or SIGKILL of the batch alone (everything dies with it, the
    leases with their holders). Nothing of either student runs afterwards, as any uid."""
    folder = tmp_path / "class"
    folder.mkdir()
    for number in range(3):
        shutil.copyfile(SOLUTION, folder / f"s{number}_solution.py")
    (folder / "s3_sleeper.py").write_text(SOLUTION.read_text() + SLEEPER)
    for number in range(4, 7):
        shutil.copyfile(SOLUTION, folder / f"s{number}_solution.py")
    out = tmp_path / "out"
    batch = abgrade_batch(folder, out, "--jobs", 1, "--seed", 3, popen=True)
    try:
        wait_for_rows(out, 3, batch, timeout=240)
        deadline = time.monotonic() + 120  # the sleeper's worker and the next one's, opened ahead
        while len(_student_uids(batch.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        uids = _student_uids(batch.pid)
        assert len(uids) >= 2, descendants(batch.pid)
        family = {pid: started(pid) for pid in descendants(batch.pid)}
        if way_out == "ctrl-c":
            os.killpg(batch.pid, signal.SIGINT)  # as a terminal sends it
        else:
            os.kill(batch.pid, signal.SIGKILL)  # only the batch itself: the rest must follow
        _, stderr = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
            batch.communicate()
    if way_out == "ctrl-c":
        assert batch.returncode == 130 and "interrupted after" in stderr, stderr
    deadline = time.monotonic() + 60  # after SIGKILL: each dies with its parent, in turn
    while [p for p, t in family.items() if alive(p, t)] and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p, t in family.items() if alive(p, t)]
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in left if alive(p)]
    for (
        uid
    ) in uids:  # nothing runs as it, and its lease is free (after SIGKILL it says "leased": reaped at its next lease)
        assert _given_back(uid), uid


# a notebook's cell that leaves sleeping children in its kernel's cgroup (their command
# lines carry the name left_behind looks for)
CHILDREN = """
import subprocess as _subprocess, sys as _sys
_children = [_subprocess.Popen([_sys.executable, "-c", "import time; time.sleep(600)", "sleeping_children"])
             for _ in range(3)]
"""


@needs_root
def test_graded_notebooks_give_their_uid_back_on_a_thread_never_before_their_lease_ends(tmp_path, leases):
    """Notebooks in one grader process: the next one is opened on a thread, its kernel
    started (GradeTask._open_ahead), and each graded one's folder and uid are given back on
    a thread while the next one is graded (Closing). No uid is leased while an earlier
    student holds it, nothing is left once the task is closed, and the grades are whole."""
    source = tmp_path / "class"
    source.mkdir()
    (source / "sleeping_children.py").write_text(SOLUTION.read_text() + CHILDREN)
    notebooks = [
        notebook_from_py(source / "sleeping_children.py", source / "a_sleeping_children.ipynb"),
        notebook_from_py(SOLUTION, source / "b_solution.ipynb"),
    ]
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    task = GradeTask("tree", load_spec(spec_path("tree")), SEED, temp_root=jobs)
    reports = []
    try:
        for number, path in enumerate(notebooks):
            following = notebooks[number + 1] if number + 1 < len(notebooks) else None
            task.look_ahead(lambda following=following: following)
            report = task(path)
            assert isinstance(report, GradeReport), report
            reports.append(report)
            assert task._closing is not None  # its folder and uid go while the next one is graded
            opened = task._ahead
            session = opened.opened() if opened is not None else None
            if following is not None:  # opened on the thread for `following` only, its kernel started
                assert opened is not None and opened.path == following
                assert session is not None and getattr(session, "started_ahead", False)
    finally:
        task.close()
    assert [report.score for report in reports] == [report.max_score for report in reports]
    assert len(leases) == len(notebooks)
    for identity, held in leases:
        assert identity.uid not in held
        assert identity._lease_fd is None  # released
        assert left_behind(identity.uid) == []
    assert list(jobs.iterdir()) == []  # every job folder and work folder removed


def test_a_grader_process_freezes_its_long_lived_objects_once_and_only_when_it_grades_many():
    """GradeTask._freeze_long_lived: nothing frozen for a task that grades one submission
    (no look_ahead: `abgrade grade`'s way), once for a batch's grader process, as its first
    grading begins (conftest unfreezes after each test)."""
    task = GradeTask("tree", load_spec(spec_path("tree")), SEED)
    task._freeze_long_lived(SOLUTION)
    assert gc.get_freeze_count() == 0
    task.look_ahead(lambda: None)
    task._freeze_long_lived(SOLUTION)
    frozen = gc.get_freeze_count()
    assert frozen > 0
    gc.unfreeze()
    task._freeze_long_lived(SOLUTION)  # once only
    assert gc.get_freeze_count() == 0


def test_a_process_spawned_while_opening_ahead_lives_on_after_the_opening():
    """The Opener is one thread for the grader process's life: a student process spawned
    from it without a zygote (die_with_grader: PR_SET_PDEATHSIG fires when the thread that
    forked it ends) is not killed when the opening is over, as it was from a thread per
    opening (a kernel started ahead with ABGRADE_KERNEL_ZYGOTE=0 died before its grading)."""
    spawned: list[subprocess.Popen] = []

    def spawn() -> None:
        command = [sys.executable, "-c", "import time; time.sleep(60)"]
        spawned.append(subprocess.Popen(command, preexec_fn=die_with_grader))

    try:
        opener().submit(spawn).join()
        opener().submit(lambda: None).join()  # the thread is still there, serving
        assert opener() is opener()
        assert spawned and spawned[0].poll() is None
    finally:
        for process in spawned:
            process.kill()
            process.wait()
