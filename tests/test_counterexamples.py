"""The smallest failing case (grader/shrinking.py, grader/counterexample.py): a failed
random case is shrunk by sending smaller cases to the student's real process and judging
them in the grader; the smallest one found is no larger than the random case, still fails
the same check, is the same on every grading of the same file, and is shown where the
spec says (random.reveal_counterexample)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grader import results
from grader.checks import Verdict
from grader.counterexample import Counterexample, counterexample_of, shown
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.labs.kit import CasePlan, Judgement, Shrinkable
from grader.report.terminal import summary
from grader.results import GradeReport
from grader.sandbox.channel import WorkerFailure
from grader.sandbox.deadline import Limit
from grader.shrinking import Budget, shrink_all
from grader.spec import SpecError, load_spec, spec_path
from grader.spec.model import ShrinkPolicy

from .conftest import TESTS_DIR

FIXTURES = TESTS_DIR / "fixtures"

# a buggy file of every lab whose random cases fail on the spec's default settings
BUGGY = {
    "tree": "tree/bug_strict_cutoff.py",
    "tictactoe": "tictactoe/bug_depth_not_incremented.py",
    "negamax": "negamax/value_not_negated.py",
    "agents": "agents/bug_sign_not_flipped.py",
    "connect4": "connect4/bug_flags_swapped.py",
}


def random_only_spec(lab: str, folder: Path, name: str = "random", **random: object) -> Path:
    """The bundled spec of `lab` with its random cases only (fixed cases and matches left
    out: they would grade the same with or without shrinking), `random` settings over it."""
    raw = yaml.safe_load(spec_path(lab).read_text())
    raw["cases"] = []
    raw["checks"] = {kind: raw["checks"][kind] for kind in ("load", "random", "limits")}
    if lab == "agents":
        raw["random"]["games"] = 0
    raw["random"].update(random)
    path = folder / f"{lab}_{name}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def graded(lab: str, spec: Path, seed: int = 3) -> GradeReport:
    return grade_submission(FIXTURES / BUGGY[lab], get_lab(lab), load_spec(spec), seed=seed)


def examples(report: GradeReport) -> list[tuple[Counterexample, results.TestResult]]:
    found = []
    for test in report.tests:
        example = counterexample_of(test)
        if example is not None:
            found.append((example, test))
    return found


@pytest.mark.parametrize("lab", sorted(BUGGY))
def test_a_failed_random_case_shows_a_smaller_case_that_still_fails_the_same_way_every_time(lab, tmp_path):
    spec = random_only_spec(lab, tmp_path)
    first, again = graded(lab, spec), graded(lab, spec)
    found = examples(first)
    assert found, f"no smallest failing case: {[t.output[:80] for t in first.tests if not t.passed]}"
    for example, test in found:
        assert not test.passed and test.kind == "random" and example.case == test.case
        assert example.size <= example.original_size and example.size[0] <= example.original_size[0]
        assert example.size != example.original_size  # strictly smaller: the hidden case itself is never shown
        assert example.calls > 0
        headline = example.output.splitlines()[0]
        assert "all right" not in headline and "all match" not in headline  # it fails ...
        if lab in ("tictactoe", "agents", "connect4"):  # labs that tag each part of a random verdict
            assert f"[{example.check}]" in example.output  # ... on the same check
    # the same file and assignment: the same examples, byte for byte
    assert [e.to_json() for e, _ in found] == [e.to_json() for e, _ in examples(again)]


def test_the_tree_example_is_drawn_and_the_search_really_parts_from_the_reference_there(tmp_path):
    from reference.tree_bugs import BUGS, call_with_bug
    from reference.tree_search import alphabeta
    from reference.trees import GameTree

    report = graded("tree", random_only_spec("tree", tmp_path))
    example, _ = examples(report)[0]
    details = example.details
    assert details is not None and details["view"] == "tree"
    tree = GameTree.from_mapping(details["graph"], details["terminal_nodes"], details["root"])
    assert details["seen"] != details["expected"]  # the student's reads, observed on the small tree
    assert details["expected"] == alphabeta(tree).trace.order
    strict = next(bug for bug in BUGS if bug.name == "strict_cutoff")
    assert details["seen"] == call_with_bug(strict, tree, tree.root, float("-inf"), float("inf"), True).trace.order
    assert "Likely cause: You cut off only when alpha > beta" in example.output
    assert example.size[0] < 10 and all(abs(v) < 10 for v in tree.values.values())  # small, with small values


def test_revealed_examples_show_to_students_and_unrevealed_ones_only_with_hidden_details(tmp_path):
    revealed = graded("tree", random_only_spec("tree", tmp_path))
    kept = graded("tree", random_only_spec("tree", tmp_path, "kept", reveal_counterexample=False))
    assert all(t.visibility != "visible" for t in revealed.tests if t.kind == "random")
    assert shown(revealed.tests) and "Smallest failing case (random" in summary(revealed)
    assert not shown(kept.tests) and "Smallest failing case" not in summary(kept)
    assert shown(kept.tests, show_hidden=True) and "Smallest failing case" in summary(kept, show_hidden=True)


def test_no_budget_no_shrinking_and_the_score_is_the_same(tmp_path):
    shrunk = graded("tree", random_only_spec("tree", tmp_path))
    plain = graded("tree", random_only_spec("tree", tmp_path, "plain", shrink={"calls": 0}))
    assert examples(shrunk) and not examples(plain)
    assert [(t.name, t.passed) for t in shrunk.tests] == [(t.name, t.passed) for t in plain.tests]


# --- the descent itself, on made-up cases --------------------------------------------


def plan_of(n: int, fails) -> CasePlan:
    """A case of size n whose smaller cases are n-1, n-2, ... 1 (the biggest cut first:
    1 first), failing `value` where `fails(n)`."""

    def judge(calls: list[dict]) -> Judgement:
        verdict = Verdict.fail(f"case {n} failed") if fails(n) else Verdict.ok(f"case {n} passed")
        return Judgement({"random": Verdict(verdict.passed, verdict.message, parts=("value",) if fails(n) else ())})

    smaller = lambda: (plan_of(m, fails) for m in range(1, n))  # noqa: E731
    return CasePlan(
        f"case {n}", {"id": str(n), "calls": [{}]}, ("random",), judge, shrink=Shrinkable((n,), f"size {n}", smaller)
    )


def run_locally(plan: CasePlan, seconds: float) -> Judgement:
    return plan.judge([{}])


def test_the_descent_takes_the_first_smaller_case_that_still_fails_and_stops_at_the_budget():
    fails = lambda n: n >= 4  # noqa: E731 - the smallest failing case is 4
    original = plan_of(9, fails)
    judged = [(original, original.judge([{}]))]
    found = shrink_all(judged, run_locally, ShrinkPolicy(calls=100, seconds=60), lambda: 0.0)
    assert found[0].plan.shrink.size == (4,) and found[0].stopped == "smallest"
    # tried 1, 2, 3, 4 (taken); then 1, 2, 3 from 4: seven calls
    assert found[0].calls == 7
    cut = shrink_all(judged, run_locally, ShrinkPolicy(calls=5, seconds=60), lambda: 0.0)
    assert cut[0].plan.shrink.size == (4,) and cut[0].stopped == "calls" and cut[0].calls == 5
    ran = [0]

    def run_25_seconds_each(plan: CasePlan, seconds: float) -> Judgement:
        ran[0] += 1
        return plan.judge([{}])

    three = [(plan_of(9, lambda n: n >= 3), None)]
    three = [(plan, plan.judge([{}])) for plan, _ in three]
    timed = shrink_all(three, run_25_seconds_each, ShrinkPolicy(calls=100, seconds=60), lambda: 25.0 * ran[0])
    # 1 and 2 pass, 3 fails (75 s used): no time is left to try below 3
    assert timed[0].plan.shrink.size == (3,) and timed[0].stopped == "seconds" and timed[0].calls == 3


def test_only_the_case_found_is_diagnosed_when_the_candidates_put_their_diagnoses_off():
    """A candidate's judge may leave its diagnoses out (Judgement.complete): the descent reads
    only which checks failed, and the case shown gets them, once."""
    completed: list[int] = []

    def plan_putting_off(n: int) -> CasePlan:
        failed = Verdict(False, f"case {n} failed", parts=("value",))

        def judge(calls: list[dict]) -> Judgement:
            def complete() -> Judgement:
                completed.append(n)
                return Judgement({"random": failed.with_diagnoses(("a_bug",))}, frozenset({"a_bug"}))

            verdict = failed if n >= 4 else Verdict.ok(f"case {n} passed")
            return Judgement({"random": verdict}, frozenset(), complete if n >= 4 else None)

        smaller = lambda: (plan_putting_off(m) for m in range(1, n))  # noqa: E731
        return CasePlan(
            f"case {n}", {"id": str(n), "calls": [{}]}, ("random",), judge, shrink=Shrinkable((n,), "", smaller)
        )

    original = plan_putting_off(9)
    found = shrink_all(
        [(original, original.judge([{}]))], run_locally, ShrinkPolicy(calls=100, seconds=60), lambda: 0.0
    )
    assert found[0].plan.shrink.size == (4,) and found[0].calls == 7
    assert completed == [4]  # not 9 (the random case's own judgement is the pipeline's), not each step
    assert found[0].verdict.diagnoses == ("a_bug",) and found[0].judgement.bugs() == frozenset({"a_bug"})
    assert found[0].verdict.message == "case 4 failed" and found[0].verdict.parts == ("value",)


def test_a_candidate_that_crashes_is_passed_over_and_the_submissions_limit_ends_shrinking():
    original = plan_of(6, lambda n: True)
    judged = [(original, original.judge([{}]))]

    def crashes_below_3(plan: CasePlan, seconds: float) -> Judgement | WorkerFailure:
        assert plan.shrink is not None
        return WorkerFailure("died", "killed") if plan.shrink.size[0] < 3 else plan.judge([{}])

    found = shrink_all(judged, crashes_below_3, ShrinkPolicy(), lambda: 0.0)
    assert found[0].plan.shrink.size == (3,) and found[0].stopped == "smallest"

    def out_of_time(plan: CasePlan, seconds: float) -> WorkerFailure:
        return WorkerFailure("timeout", "used up", limit=Limit("submission", "cpu", 120.0, "120 s"))

    assert not shrink_all(judged, out_of_time, ShrinkPolicy(), lambda: 0.0)  # nothing smaller found


def test_a_passing_random_case_is_not_shrunk_and_budget_counts_from_its_start():
    original = plan_of(6, lambda n: False)
    assert not shrink_all([(original, original.judge([{}]))], run_locally, ShrinkPolicy(), lambda: 0.0)
    clock = iter([100.0, 100.0, 125.0])
    budget = Budget(ShrinkPolicy(calls=3, seconds=20), lambda: next(clock))
    assert budget.spent() is None and budget.spent() == "seconds"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("shrink: {calls: -1}", "random.shrink.calls: must be a non-negative whole number"),
        ("shrink: {calls: 10, budget: 3}", "random.shrink.budget: unknown field; expected calls or seconds"),
        ("shrink: 10", "random.shrink: must be a mapping {calls: N, seconds: S}"),
        ("reveal_counterexample: sometimes", "random.reveal_counterexample: must be true or false"),
    ],
)
def test_bad_shrink_settings_are_spec_errors_with_file_and_line(tmp_path, text, problem):
    spec = tmp_path / "tree.yaml"
    spec.write_text(
        "lab: tree\nchecks:\n  load: {points: 1}\n  random: {points: 1}\nrandom:\n  count: 2\n  "
        + text
        + "\ncases: []\n"
    )
    with pytest.raises(SpecError) as error:
        load_spec(spec)
    assert str(error.value).startswith(f"{spec}:7: {problem}"), str(error.value)
