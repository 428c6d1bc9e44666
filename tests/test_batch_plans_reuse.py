"""A batch's grader process builds a lab's plans once when the lab says they keep nothing
of a grading (Lab.reusable_plans) and grades every submission with them. Same code, same
score: a submission graded after others in one grader process gets exactly the result it
gets alone (a plan or judge changed while judging one student would carry that student's
state to the next). Real gradings: the grader process's own task (GradeTask), in this
process, with `.py` workers forked from the worker zygote as in a batch."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.batch.task import GradeTask
from grader.labs import get_lab
from grader.results import GradeReport
from grader.sandbox import worker_zygote
from grader.seeding import Seed
from grader.spec import load_spec, spec_path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED = Seed(31337, "test", secret=True)

# lab -> submissions graded in turn by one grader process: buggy ones that fail random
# cases (their judging and shrinking runs on the shared plans) around a correct one
IN_TURN = {
    "tree": ["tree/bug_strict_cutoff.py", "tree/correct_fail_hard.py", "tree/bug_no_pruning.py"],
    "tictactoe": ["tictactoe/bug_strict_cutoff.py", "tictactoe/correct_fail_hard.py"],
    "negamax": ["negamax/strict_cutoff.py", "negamax/fail_hard.py"],
}


@pytest.fixture
def grader_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test process grades as a batch's grader process does (`.py` workers forked
    from the worker zygote)."""
    monkeypatch.delenv("ABGRADE_WORKER_ZYGOTE", raising=False)
    worker_zygote.use()
    yield
    worker_zygote.use(False)


def graded(report: GradeReport | object) -> tuple:
    """What a student gets: the tests (verdicts, texts, pictures, causes), the output kept."""
    assert isinstance(report, GradeReport), report
    tests = [dataclasses.asdict(test) for test in report.tests]
    return report.score, report.max_score, tests, report.student_output, report.public_output, report.load_notes


@pytest.mark.parametrize("lab", sorted(IN_TURN))
def test_each_submission_gets_its_solo_result_after_others(lab, tmp_path, grader_process):
    spec = load_spec(spec_path(lab))
    files = [FIXTURES / name for name in IN_TURN[lab]]
    shared = GradeTask(lab, spec, SEED, temp_root=tmp_path)
    in_turn = [graded(shared(path)) for path in files]
    # the first is graded alone already (a fresh task); each after it again, in a task of its own
    alone = in_turn[:1] + [graded(GradeTask(lab, spec, SEED, temp_root=tmp_path)(path)) for path in files[1:]]
    assert in_turn == alone
    assert in_turn[0][0] < in_turn[0][1]  # the buggy file did fail (its judging ran on the plans)


def count_plans(monkeypatch: pytest.MonkeyPatch, lab: str) -> list[int]:
    built: list[int] = []
    cls = type(get_lab(lab))
    plans = cls.plans

    def counted(self, spec, seed):  # type: ignore[no-untyped-def]
        built.append(seed)
        return plans(self, spec, seed)

    monkeypatch.setattr(cls, "plans", counted)
    return built


def test_a_lab_with_reusable_plans_plans_once_per_grader_process(tmp_path, monkeypatch, grader_process):
    assert get_lab("tree").reusable_plans
    built = count_plans(monkeypatch, "tree")
    task = GradeTask("tree", load_spec(spec_path("tree")), SEED, temp_root=tmp_path)
    for name in IN_TURN["tree"]:
        task(FIXTURES / name)
    assert built == [SEED.value]


def test_a_lab_whose_plans_keep_a_grading_plans_for_each(tmp_path, monkeypatch, grader_process):
    """The agents lab's matches record the games they play (tournaments.MatchPlay): its
    plans are never shared; tictactoe's, not audited for it, are not either."""
    assert not get_lab("agents").reusable_plans
    assert not get_lab("tictactoe").reusable_plans
    built = count_plans(monkeypatch, "tictactoe")
    task = GradeTask("tictactoe", load_spec(spec_path("tictactoe")), SEED, temp_root=tmp_path)
    for name in IN_TURN["tictactoe"]:
        task(FIXTURES / name)
    assert built == [SEED.value] * len(IN_TURN["tictactoe"])
