"""A course's own conventions (the spec's `conventions:`): a strict cut-off (prune only when
alpha > beta) and which return convention counts as correct. The reference, the stored
expectations, the accepted searches and the diagnoses follow the declaration; a bad one is
a spec error naming the file and the line."""

from __future__ import annotations

import dataclasses
import html
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.results import GradeReport
from grader.spec import Conventions, SpecError, load_spec, spec_path

from .conftest import PROJECT_DIR, TESTS_DIR

EXAMPLE = PROJECT_DIR / "specs" / "examples" / "tree-strict.yaml"
TREE = TESTS_DIR / "fixtures" / "tree"
# correct searches of a strict course only (not in fixtures/tree: the bundled spec's batch
# and the tree folder's comparison grade every file there as its name says)
STRICT = TESTS_DIR / "fixtures" / "strict"
# searches that cut off as soon as alpha >= beta: correct in the bundled spec
INCLUSIVE = ("correct_seed_style", "correct_fail_hard", "correct_iterative", "correct_negamax")


def failing_kinds(report: GradeReport) -> set[str]:
    return {kind for kind, (got, most) in report.subtotals().items() if got < most}


def explain(report: GradeReport) -> str:
    return "\n".join(f"{t.name}: {t.output}" for t in report.tests if not t.passed) or "(no failed test)"


@pytest.fixture(scope="module")
def strict_spec():
    return load_spec(EXAMPLE)


def test_the_example_declares_a_strict_cutoff_and_is_verified(strict_spec):
    """That a plain `abgrade specs verify` verifies every example spec (this one and the
    other labs' strict ones): tests/test_cli.py, which runs that command once for both."""
    assert strict_spec.conventions.strict and strict_spec.conventions.only is None
    assert get_lab("tree").verify(strict_spec) == []


@pytest.mark.parametrize("name", ["bug_strict_cutoff", STRICT / "tree_fail_hard.py"], ids=["fail_soft", "fail_hard"])
def test_a_strict_cutoff_search_gets_full_marks_under_the_strict_convention(grade, strict_spec, name):
    """Fail-soft and fail-hard alike: a fail-hard search hands its parent the bound where a
    fail-soft one hands a value past it, so under `alpha > beta` it reads on where the
    fail-soft reference stops (seed 1's random cases 2, 4 and 6): both orders are correct."""
    report = grade(name, spec=strict_spec)
    assert report.score == report.max_score, explain(report)


def test_a_strict_course_that_counts_fail_hard_only_takes_the_fail_hard_search(grade, strict_spec):
    hard_only = Conventions(cutoff="strict", returns=frozenset({"fail-hard"}))
    # a digest of its own: the `grade` fixture remembers reports by the spec's digest
    spec = dataclasses.replace(strict_spec, conventions=hard_only, digest=f"{strict_spec.digest}+fail-hard")
    good = grade(STRICT / "tree_fail_hard.py", spec=spec)
    assert good.score == good.max_score, explain(good)
    soft = grade("bug_strict_cutoff", spec=spec)
    assert failing_kinds(soft) == {"bounds"}, explain(soft)


@pytest.mark.parametrize("name", INCLUSIVE)
def test_an_inclusive_search_gets_the_mirrored_diagnosis(grade, strict_spec, name):
    report = grade(name, spec=strict_spec)
    assert failing_kinds(report) == {"nodes", "pruned", "random"}, explain(report)
    assert {d for t in report.tests for d in t.diagnoses} == {"inclusive_cutoff"}, explain(report)
    (first,) = [t for t in report.tests if t.name == "equal-bounds: pruned"]
    assert "Likely cause: You cut off as soon as alpha >= beta; this course prunes only when alpha > beta" in (
        first.output
    )
    assert "strict_cutoff" not in str([t.tags for t in report.tests])


def test_the_bundled_spec_still_calls_the_strict_cutoff_the_bug(grade):
    report = grade("bug_strict_cutoff")
    assert {d for t in report.tests for d in t.diagnoses} == {"strict_cutoff"}


def test_a_newer_bug_written_for_the_strict_course_is_named_in_the_courses_words(grade, strict_spec, tmp_path):
    """bug_late_cutoff with the course's `alpha > beta`: still one child late, so named
    `late_cutoff` alone, with a hint that holds in this course too (the replays of the four
    newer bugs under every strict case: tests/test_diagnoses.py)."""
    from reference.tree_bugs import hints_for

    source = (TREE / "bug_late_cutoff.py").read_text()
    assert source.count("alpha >= beta") == 1
    strict = tmp_path / "late_strict.py"
    strict.write_text(source.replace("alpha >= beta", "alpha > beta"))
    report = grade(strict, spec=strict_spec)
    assert failing_kinds(report) == {"nodes", "pruned", "random"}, explain(report)
    assert {d for t in report.tests for d in t.diagnoses} == {"late_cutoff"}, explain(report)
    hints = hints_for(">")
    assert all(f"Likely cause: {hints['late_cutoff']}" in t.output for t in report.tests if t.diagnoses)
    for bug in ("window_swapped", "window_not_passed", "late_cutoff", "bound_updates_swapped"):
        assert ">=" not in hints[bug], bug  # no word of the bundled course's cut-off


def test_the_html_report_of_grade_lists_the_diagnoses_in_the_courses_words(tmp_path):
    """`abgrade grade --html` under the strict example: the page's list of likely causes
    gives no_pruning's hint with the course's cut-off (the batch's pages: test_batch)."""
    from reference.tree_bugs import hints_for

    page = tmp_path / "report.html"
    command = [sys.executable, "-m", "grader", "grade", str(TREE / "bug_no_pruning.py"), "--lab", "tree"]
    run = subprocess.run(
        [*command, "--spec", str(EXAMPLE), "--seed", "1", "--html", str(page), "-q"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1 and page.is_file(), run.stdout + run.stderr
    text = html.unescape(page.read_text())
    assert hints_for(">")["no_pruning"] in text and hints_for(">=")["no_pruning"] not in text


def with_conventions(tmp_path: Path, text: str, name: str = "tree.yaml") -> Path:
    """specs/tree.yaml with `text` (a `conventions:` block) after its title."""
    bundled = spec_path("tree").read_text()
    head, marker, rest = bundled.partition("\nlimits:")
    path = tmp_path / name
    path.write_text(f"{head}\n{text}\n{marker.lstrip()}{rest}")
    return path


@pytest.mark.parametrize(
    ("returns", "passes", "fails", "says"),
    [
        ("fail-hard", "correct_fail_hard", "correct_seed_style", "fail hard (the spec's conventions)"),
        ("fail-soft", "correct_seed_style", "correct_fail_hard", "fail soft (the spec's conventions)"),
    ],
)
def test_one_return_convention_only_counts_that_one_on_narrowed_windows(grade, tmp_path, returns, passes, fails, says):
    spec = load_spec(with_conventions(tmp_path, f"conventions:\n  returns: [{returns}]"))
    assert spec.conventions.only == returns and get_lab("tree").verify(spec) == []
    good = grade(passes, spec=spec)
    assert good.score == good.max_score, explain(good)
    bad = grade(fails, spec=spec)
    assert failing_kinds(bad) == {"bounds"}, explain(bad)
    first = next(t.output for t in bad.tests if t.kind == "bounds" and not t.passed)
    assert says in first and "so the result must be exactly" in first, first


def test_both_return_conventions_is_the_bound_specification(grade, tmp_path):
    spec = load_spec(with_conventions(tmp_path, "conventions: {returns: [fail-soft, fail-hard], cutoff: inclusive}"))
    for name in ("correct_fail_hard", "correct_seed_style", "correct_v_from_alpha"):
        report = grade(name, spec=spec)
        assert report.score == report.max_score, explain(report)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("conventions:\n  cutoff: lenient", 9, "conventions.cutoff: must be inclusive (prune when alpha >= beta)"),
        ("conventions:\n  cutoff: strict\n  pruning: never", 10, "conventions.pruning: unknown convention"),
        ("conventions:\n  returns: [fail-medium]", 9, "conventions.returns: must list what counts as correct"),
        ("conventions:\n  returns: []", 9, "conventions.returns: must list what counts as correct"),
        ("conventions: strict", 8, "conventions: must be a mapping, e.g. {cutoff: strict}"),
    ],
)
def test_a_bad_convention_is_a_spec_error_with_file_and_line(tmp_path, text, line, problem):
    path = with_conventions(tmp_path, text)
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert str(error.value).startswith(f"{path}:{line}: {problem}"), str(error.value)


def test_a_lab_that_takes_no_conventions_says_so(tmp_path):
    """A lab folder's reference is the course's own: it declares no conventions."""
    folder = tmp_path / "nim"
    shutil.copytree(PROJECT_DIR / "examples" / "labs" / "nim", folder)
    spec = folder / "spec.yaml"
    spec.write_text(spec.read_text().replace("\nlimits:", "\nconventions: {cutoff: strict}\n\nlimits:", 1))
    get_lab(str(folder))  # the folder is read; its spec when a grading needs it
    with pytest.raises(SpecError) as error:
        load_spec(spec)
    assert "conventions.cutoff: not a convention of this lab (the nim lab takes none" in str(error.value)
    assert str(error.value).startswith(f"{spec}:")


@pytest.mark.parametrize(
    ("lab", "text", "key", "takes"),
    [
        ("connect4", "conventions: {cutoff: strict}", "cutoff", "none"),
        ("connect4", "conventions:\n  returns: [fail-hard]", "returns", "none"),
        ("negamax", "conventions:\n  returns: [fail-hard]", "returns", "cutoff"),
        ("agents", "conventions:\n  cutoff: strict\n  returns: [fail-soft]", "returns", "cutoff"),
    ],
)
def test_a_convention_a_built_in_lab_does_not_take_is_one_line_with_file_and_line(tmp_path, lab, text, key, takes):
    bundled = spec_path(lab).read_text()
    head, marker, rest = bundled.partition("\nlimits:")
    path = tmp_path / f"{lab}.yaml"
    path.write_text(f"{head}\n{text}\n{marker.lstrip()}{rest}")
    line = head.count("\n") + 2 + text.split("\n").index(next(t for t in text.split("\n") if key in t))
    with pytest.raises(SpecError) as error:
        load_spec(path)
    message = str(error.value)
    assert "\n" not in message
    assert (
        message
        == f"{path}:{line}: conventions.{key}: not a convention of this lab (the {lab} lab takes {takes}; DESIGN.md)"
    )


TICTACTOE_EXAMPLE = PROJECT_DIR / "specs" / "examples" / "tictactoe-strict.yaml"
TICTACTOE = TESTS_DIR / "fixtures" / "tictactoe"


@pytest.fixture(scope="module")
def tictactoe_strict():
    spec = load_spec(TICTACTOE_EXAMPLE)
    assert spec.conventions.strict and get_lab("tictactoe").verify(spec) == []
    return spec


@pytest.fixture(scope="module")
def grade_tictactoe(tictactoe_strict):
    """`grade_tictactoe(name)`: a tic-tac-toe fixture graded once under the strict example."""
    lab = get_lab("tictactoe")
    reports: dict[Path, GradeReport] = {}

    def grade_once(name: str | Path) -> GradeReport:
        path = name if isinstance(name, Path) else TICTACTOE / f"{name}.py"
        if path not in reports:
            reports[path] = grade_submission(path, lab, tictactoe_strict, seed=1)
        return reports[path]

    return grade_once


@pytest.mark.parametrize("name", ["strict_course", STRICT / "tictactoe_fail_hard.py"], ids=["fail_soft", "fail_hard"])
def test_the_course_code_with_a_strict_cutoff_gets_full_marks_at_tictactoe(grade_tictactoe, name):
    """The fail-hard form expands more boards than the course's code under `>` (a child's
    clamped answer equals the bound): both are correct."""
    report = grade_tictactoe(name)
    assert report.score == report.max_score, explain(report)


def test_a_strict_tictactoe_course_that_counts_fail_hard_only_gives_it_full_marks(tictactoe_strict):
    spec = dataclasses.replace(
        tictactoe_strict, conventions=Conventions(cutoff="strict", returns=frozenset({"fail-hard"}))
    )
    report = grade_submission(STRICT / "tictactoe_fail_hard.py", get_lab("tictactoe"), spec, seed=1)
    assert report.score == report.max_score, explain(report)


@pytest.mark.parametrize("name", ["correct_prints", "correct_fail_hard", "bug_strict_cutoff"])
def test_a_tictactoe_search_that_cuts_off_on_equality_gets_the_mirrored_diagnosis(grade_tictactoe, name):
    """The skeleton's `>=` / `<=` (both sides, or, for bug_strict_cutoff, the MIN side left)
    is the strict course's bug: it prunes boards the course expands."""
    report = grade_tictactoe(name)
    assert failing_kinds(report) == {"nodes", "pruned", "random"}, explain(report)
    assert {d for t in report.tests for d in t.diagnoses} == {"inclusive_cutoff"}, explain(report)
    first = next(t.output for t in report.tests if t.kind == "pruned" and not t.passed)
    assert "Likely cause: You cut off as soon as maxUtility >= beta" in first, first
    assert "strict_cutoff" not in str([t.tags for t in report.tests])


def test_a_strict_tictactoe_course_replays_its_bugs_fail_hard_and_never_takes_its_own_for_one():
    """Under `>` a fail-hard search expands more boards than a fail-soft one (a child's
    clamped answer is the bound, which `>` does not cut on): a bug written fail-hard is
    named from its boards, and the course's fail-hard search is no bug's evidence (None)."""
    from grader.labs.tictactoe.hints import bugs_behind_calls, replayed_bugs
    from reference.tictactoe_bugs import STRICT_RULES, replay

    call = {"function": "maximize", "board": "o../.x./...", "args": [1, 1, 2, 1, 3, 0]}

    def seen(rules):
        done = replay(rules, call["function"], call["board"], call["args"])
        return {"expanded": done.expanded, "expansions": len(done.expanded), "choice": done.choice,
                "points": done.points, "nodes": done.nodes_visited, "error": None}  # fmt: skip

    hard = dataclasses.replace(STRICT_RULES, fail_hard=True)
    assert seen(hard)["expanded"] != seen(STRICT_RULES)["expanded"]
    bug = dataclasses.replace(hard, increment_depth=False)
    assert seen(bug)["expanded"] != seen(dataclasses.replace(STRICT_RULES, increment_depth=False))["expanded"]
    assert "depth_not_incremented" in replayed_bugs(call, seen(bug), by_value=False, strict=True)
    assert bugs_behind_calls([call], [seen(hard)], strict=True) is None


def test_other_tictactoe_bugs_keep_their_names_under_the_strict_convention(grade_tictactoe):
    report = grade_tictactoe("bug_no_pruning")
    assert {d for t in report.tests for d in t.diagnoses} == {"no_pruning"}, explain(report)


AGENTS_EXAMPLE = PROJECT_DIR / "specs" / "examples" / "agents-strict.yaml"
AGENTS = TESTS_DIR / "fixtures" / "agents"


@pytest.fixture(scope="module")
def grade_agents():
    """`grade_agents(name)`: an agents fixture graded once under the strict example."""
    spec = load_spec(AGENTS_EXAMPLE)
    assert spec.conventions.strict and get_lab("agents").verify(spec) == []
    lab = get_lab("agents")
    reports: dict[str, GradeReport] = {}

    def grade_once(name: str) -> GradeReport:
        if name not in reports:
            reports[name] = grade_submission(AGENTS / f"{name}.py", lab, spec, seed=1)
        return reports[name]

    return grade_once


def test_the_chapters_prose_cutoff_gets_full_marks_under_the_strict_convention(grade_agents):
    """bug_strict_cutoff cuts off only when alpha > -beta: the bundled spec's bug, this course's way."""
    report = grade_agents("bug_strict_cutoff")
    assert report.score == report.max_score, explain(report)


@pytest.mark.parametrize("name", ["correct_chapter", "correct_inf_bounds"])
def test_the_chapters_code_gets_the_mirrored_diagnosis_under_the_strict_convention(grade_agents, name):
    report = grade_agents(name)
    assert failing_kinds(report) == {"nodes", "speedup", "random"}, explain(report)
    assert {d for t in report.tests for d in t.diagnoses} == {"inclusive_cutoff"}, explain(report)
    first = next(t.output for t in report.tests if t.kind == "nodes" and not t.passed)
    assert "cut-off when alpha > -beta" in first and "Likely cause: You cut off as soon as alpha >= -beta" in first
    assert "strict_cutoff" not in str([t.tags for t in report.tests])


def test_other_agents_bugs_are_replayed_on_the_strict_search(grade_agents):
    report = grade_agents("bug_no_pruning")
    assert {d for t in report.tests for d in t.diagnoses} == {"no_pruning", "bounds_never_updated"}, explain(report)
    first = next(t.output for t in report.tests if t.kind == "nodes" and not t.passed)
    assert "as soon as alpha > -beta" in first, first


NEGAMAX_EXAMPLE = PROJECT_DIR / "specs" / "examples" / "negamax-strict.yaml"
NEGAMAX = TESTS_DIR / "fixtures" / "negamax"


@pytest.fixture(scope="module")
def grade_negamax():
    """`grade_negamax(name)`: a negamax fixture graded once under the strict example."""
    spec = load_spec(NEGAMAX_EXAMPLE)
    assert spec.conventions.strict and get_lab("negamax").verify(spec) == []
    lab = get_lab("negamax")
    reports: dict[Path, GradeReport] = {}

    def grade_once(name: str | Path) -> GradeReport:
        path = name if isinstance(name, Path) else NEGAMAX / f"{name}.py"
        if path not in reports:
            reports[path] = grade_submission(path, lab, spec, seed=1)
        return reports[path]

    return grade_once


@pytest.mark.parametrize(
    "name", ["strict_cutoff", STRICT / "negamax_textbook_fail_soft.py"], ids=["course", "textbook_fail_soft"]
)
def test_a_strict_negamax_search_gets_full_marks_under_the_strict_convention(grade_negamax, name):
    report = grade_negamax(name)
    assert report.score == report.max_score, explain(report)


@pytest.mark.parametrize("name", ["course", "fail_hard"])
def test_the_course_code_loses_counts_under_the_strict_convention_and_is_told_the_courses_cutoff(grade_negamax, name):
    """Its values, moves and bounds are right; its counts are an inclusive cut-off's. (The
    negamax lab diagnoses sign errors only, so there is no cut-off bug to mirror: the
    direction hint names the course's cut-off.)"""
    report = grade_negamax(name)
    assert failing_kinds(report) == {"nodes", "random"}, explain(report)
    first = next(t.output for t in report.tests if t.kind == "nodes" and not t.passed)
    assert "cut off only when val > beta" in first, first
    ties = next(t.output for t in report.tests if t.name == "tree-ties: nodes")
    assert "it stops at a finished successor worth exactly beta" in ties, ties


@pytest.mark.parametrize(
    ("returns", "passes", "fails"),
    [("fail-hard", "correct_fail_hard", "correct_prints"), ("fail-soft", "correct_prints", "correct_fail_hard")],
)
def test_one_return_convention_at_tictactoe_counts_only_that_one(returns, passes, fails):
    """The bundled tic-tac-toe spec (its large positions left out) with `returns: [...]`:
    the bounds windows demand exactly that convention's result."""
    bundled = load_spec(spec_path("tictactoe"))
    small = [c for c in bundled.cases if c["name"] not in ("empty-board", "course-second-move", "x-answers-corner")]
    spec = dataclasses.replace(bundled, cases=small, conventions=Conventions(returns=frozenset({returns})))
    lab = get_lab("tictactoe")
    good = grade_submission(TICTACTOE / f"{passes}.py", lab, spec, seed=1)
    assert good.score == good.max_score, explain(good)
    bad = grade_submission(TICTACTOE / f"{fails}.py", lab, spec, seed=1)
    assert failing_kinds(bad) == {"bounds", "random"}, explain(bad)
    # it reads what the course's search reads: no classic bug is named for its values
    assert not any(t.diagnoses for t in bad.tests), explain(bad)
    first = next(t.output for t in bad.tests if t.kind == "bounds" and not t.passed)
    assert f"this course's searches {returns.replace('-', ' ')} (the spec's conventions)" in first, first
