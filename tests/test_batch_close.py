"""A batch's grader process closes a `.py` submission's sandbox in two steps: its
processes are killed before the grade is returned; its work folder and uid are given back
on the session's own thread while the next submission is graded (GradeTask, Closing);
and in the local pool the next submission's worker is forked and confines itself as soon
as the student's processes are closed (Session.on_closed, GradeTask._open_next).
What must hold anyway: no uid is leased while an earlier student still holds it, nothing
of a student (process, folder, lease) is left once the grader process's task is closed,
and every grade is the one the submission gets alone. Real gradings, hostile fixtures
that leave processes behind."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import grader.sandbox.session as session_module
from grader.batch.pool import Job, run_jobs
from grader.batch.task import GradeTask
from grader.results import GradeReport
from grader.sandbox import worker_zygote
from grader.sandbox.identity import StudentIdentity, grader_is_root, processes_of
from grader.seeding import Seed
from grader.spec import load_spec, spec_path

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
        held = {identity.uid for identity, _ in made if identity._lease_fd is not None}
        identity = lease()
        assert identity is not None
        made.append((identity, held))
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
    before closes its student's processes (as the local pool's NextJob answers)."""
    reports = []
    try:
        for number, path in enumerate(IN_TURN):
            following = IN_TURN[number + 1] if ahead and number + 1 < len(IN_TURN) else None
            task.look_ahead(lambda following=following: following)
            report = task(path)
            assert isinstance(report, GradeReport), report
            reports.append(report)
            assert task._closing is not None  # its folder and uid go while the next one is graded
            if following is not None:  # opened for `following` only, its worker forked
                assert task._ahead is not None and task._ahead.path == following
                assert task._ahead.session is not None and task._ahead.session._early is not None
            else:
                assert task._ahead is None
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
