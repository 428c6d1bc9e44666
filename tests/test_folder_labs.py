"""Labs from a folder of three files (grader/labs/generic, examples/labs/): the Nim and
cat-and-mouse examples grade a correct, a classic-bug and a hostile submission with full
marks, the named bug and containment; the reference never reaches the student's process;
a lab folder pickles as its files. (The tree example against the built-in tree lab:
tests/test_tree_folder_lab.py.)

Everything runs for real: the student's process, the sandbox, the references in the
grader. Random cases come from fixed seeds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grader.exercises import exercise_notebook_text
from grader.grading import grade_submission
from grader.lab_setup import load_lab
from grader.report.html import render_html
from grader.results import GradeReport
from grader.spec import load_spec

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
EXAMPLES = PROJECT / "examples" / "labs"
TREE_FOLDER, NIM, CATMOUSE = EXAMPLES / "tree", EXAMPLES / "nim", EXAMPLES / "catmouse"
FIXTURES = TESTS / "fixtures" / "folder_labs"
SEED = 1


def explain(report: GradeReport) -> str:
    return "\n".join(f"{t.name}: {t.output}" for t in report.tests if not t.passed) or "(no failed test)"


def verdicts(report: GradeReport) -> dict[tuple[str | None, str], bool]:
    return {(test.case, test.kind): test.passed for test in report.tests}


def diagnoses(report: GradeReport) -> set[str]:
    return {name for test in report.tests for name in test.diagnoses}


# --- Nim and cat and mouse: correct, classic bug, hostile -------------------------------------


def grade(fixture: str, lab: Path, seed: int = SEED, spec: Path | None = None, path: Path | None = None) -> GradeReport:
    folder_lab, folder_spec = load_lab(str(lab), spec)
    return grade_submission(path or FIXTURES / lab.name / f"{fixture}.py", folder_lab, folder_spec, seed=seed)


@pytest.mark.parametrize("seed", [SEED, 99])
@pytest.mark.parametrize("lab", [NIM, CATMOUSE], ids=["nim", "catmouse"])
def test_a_correct_submission_in_its_own_style_gets_full_marks(lab: Path, seed: int) -> None:
    report = grade("correct_helpers", lab, seed)
    assert report.score == report.max_score, explain(report)
    assert {t.kind for t in report.tests} >= {"value", "nodes", "pruned", "bounds", "choice", "random"}


@pytest.mark.parametrize("lab", [NIM, CATMOUSE, TREE_FOLDER], ids=["nim", "catmouse", "tree"])
def test_the_reference_itself_gets_full_marks(lab: Path) -> None:
    report = grade("", lab, path=lab / "reference.py")
    assert report.score == report.max_score, explain(report)


@pytest.mark.parametrize(
    ("lab", "fixture", "bug"),
    [(NIM, "bug_depth_first", "depth_before_game_over"), (CATMOUSE, "bug_prunes_on_ties", "prunes_on_equality")],
    ids=["nim", "catmouse"],
)
def test_a_classic_bug_is_named_with_its_hint(lab: Path, fixture: str, bug: str) -> None:
    report = grade(fixture, lab)
    folder_lab, _ = load_lab(str(lab))
    assert report.score < report.max_score
    assert diagnoses(report) == {bug}, explain(report)
    hint = folder_lab.bug_hints[bug]
    carrying = [t for t in report.tests if t.diagnoses]
    assert carrying and all(not t.passed and f"Likely cause: {hint}" in t.output for t in carrying)
    assert any(t.visibility == "visible" for t in carrying)
    assert f'data-name="{bug}"' in render_html(report)


def test_a_search_that_never_calls_the_watched_successors_is_told_so() -> None:
    """Nim counts the positions a search expands through successors(heaps); a right search
    that makes them with moves and play keeps its value, bounds and choice points and loses
    the reads, with a hint that says what the lab watches and which function it never saw."""
    report = grade("unwatched_moves_and_play", NIM)
    assert {t.kind for t in report.tests if not t.passed} == {"nodes", "pruned", "random"}, explain(report)
    first = next(t for t in report.tests if t.kind == "nodes" and not t.passed)
    assert "Hint: Your search never called successors(...) (the reference does, " in first.output, first.output
    assert "only through successors, utility, evaluate" in first.output


def test_the_unwatched_hint_names_only_the_labs_functions() -> None:
    """The search's counts come from the student's process: they only decide whether a
    watched function was called, never what the hint says."""
    from grader.labs.generic.judges import unwatched_hint

    case = type("Case", (), {"watched": ("successors", "utility", "evaluate")})()
    reference = {"counts": {"successors": 14, "utility": 3, "evaluate": 0}}
    forged = {"counts": {"successors": "many", "utility": True, "\x1b[2J": 10**9}}
    hint = unwatched_hint(case, forged, reference)  # type: ignore[arg-type]
    assert hint.startswith("Your search never called successors(...) or utility(...) (the reference does, 17 times")
    assert "\x1b" not in hint and "many" not in hint
    assert unwatched_hint(case, {"counts": {"successors": 1, "utility": 1}}, reference) == ""  # type: ignore[arg-type]
    assert unwatched_hint(case, {"counts": None}, {"counts": []}) == ""  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def short_limits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The examples' specs with a 1 s case limit, for submissions that hang: a request that
    sleeps is stopped by the limit's wall-clock backstop, 15 s instead of the spec's 60 s."""
    folder = tmp_path_factory.mktemp("short")
    specs = {}
    for lab in (NIM, CATMOUSE):
        raw = yaml.safe_load((lab / "spec.yaml").read_text())
        raw["limits"] = {"case_seconds": 1, "submission_seconds": 60}
        specs[lab.name] = folder / f"{lab.name}.yaml"
        specs[lab.name].write_text(yaml.safe_dump(raw, sort_keys=False))
    return specs


@pytest.mark.slow
@pytest.mark.timing
def test_a_hostile_nim_submission_is_contained(tmp_path: Path, short_limits: dict[str, Path]) -> None:
    """It can't read the lab's reference (the folder is hidden from its process), its
    tampering with the game is undone before every call, silencing the grader's watch only
    costs it its reads, and its hang costs only that case."""
    reference = NIM / "reference.py"
    source = (FIXTURES / "nim" / "hostile.py").read_text().replace("REFERENCE_PATH", str(reference))
    path = tmp_path / "hostile_nim.py"
    path.write_text(source)
    report = grade("", NIM, spec=short_limits["nim"], path=path)
    assert "STOLEN" not in report.student_output and "alphabeta" not in report.student_output
    assert "no reference:" in report.student_output and "folder visible: False" in report.student_output
    load = next(t for t in report.tests if t.kind == "load")
    assert load.passed
    # it sleeps in min-to-move's search: the case's wall-clock backstop stops that request,
    # the message names that limit, and the next request (the case's bounds) runs as usual
    hung = [t for t in report.tests if t.case == "min-to-move" and t.kind != "bounds"]
    assert {t.kind for t in hung} == {"value", "nodes", "pruned"}
    assert all(not t.passed and "backstop" in t.output and "1 s of CPU time" in t.output for t in hung)
    bounds = next(t for t in report.tests if t.case == "min-to-move" and t.kind == "bounds")
    assert "not judged:" not in bounds.output, bounds.output
    limits = next(t for t in report.tests if t.kind == "limits")
    assert not limits.passed and "1 request(s) ran into a limit" in limits.output, limits.output
    # the tampered utility (always 1) was put back: one-heap-of-five's value is right
    assert next(t for t in report.tests if t.name == "one-heap-of-five: value").passed
    assert all(not t.passed for t in report.tests if t.kind in ("nodes", "pruned"))
    assert report.score < report.max_score / 2


@pytest.mark.timing
def test_a_hostile_catmouse_submission_is_contained(short_limits: dict[str, Path]) -> None:
    """Its own Board.after is replaced by the game's watched one before every call, the
    boards it vandalises are fresh ones, its os._exit costs one case, and its escape
    sequences reach no report unescaped."""
    report = grade("hostile", CATMOUSE, spec=short_limits["catmouse"])
    exited = [t for t in report.tests if t.case == "cheese-next-door" and t.kind != "choice"]
    assert exited and all(not t.passed and "exited with code 3" in t.output for t in exited)
    passing = {t.name for t in report.tests if t.passed}
    assert {"one-ply: value", "one-ply: bounds", "two-plies: value"} <= passing, explain(report)
    assert "\x1b" not in report.student_output and "␛[31m" in report.student_output
    choices = [t for t in report.tests if t.kind == "choice"]
    assert choices and all("returned 'stay'" in t.output for t in choices)  # judged as the move it is
    assert report.score < report.max_score


def test_a_folder_lab_grades_a_notebook_that_imports_the_game_in_a_cell(tmp_path: Path) -> None:
    """In a notebook the cells import the game before the grader's watch is installed; the
    names bound to it (`import nim`) are rebound to the watched game before every call."""
    notebook = tmp_path / "nim_lab.ipynb"
    notebook.write_text(exercise_notebook_text("nim", (FIXTURES / "nim" / "correct_helpers.py").read_text()))
    report = grade("", NIM, path=notebook)
    assert report.score == report.max_score, explain(report)


def test_the_reference_and_the_bugs_never_enter_the_student_process() -> None:
    """What is shipped: the runtime, the watching code, the game and the observer only."""
    for lab_folder in (TREE_FOLDER, NIM, CATMOUSE):
        lab, spec = load_lab(str(lab_folder))
        shipped = "\n".join(source for _, source in lab.probe.modules())
        secrets = [
            lab_folder / "reference.py",
            *sorted((lab_folder / "bugs").glob("*.py")),
            *sorted(lab_folder.glob("variants/*.py")),
        ]
        for secret in secrets:
            body = secret.read_text().split("def ", 1)[1]
            assert body not in shipped, secret
        names = [name for name, _ in lab.probe.modules()]
        assert names[0] == "_abgrade_runtime" and names[-1] == "_abgrade_generic"
        assert lab_folder.resolve() in lab.private_dirs


def test_a_lab_folder_pickles_as_its_files_and_grades_the_same() -> None:
    import pickle

    lab, spec = load_lab(str(NIM))
    copy = pickle.loads(pickle.dumps(lab))
    assert type(copy).__name__ == type(lab).__name__ and copy.name == "nim"
    plans, again = lab.plans(spec, 5), copy.plans(spec, 5)
    assert [p.request for p in plans] == [p.request for p in again]


def test_a_spec_of_another_lab_folder_with_the_same_files_changes_the_digest(tmp_path: Path) -> None:
    """A batch regrades when the game or a reference changes, not only the spec."""
    copy = tmp_path / "nim"
    shutil.copytree(NIM, copy)
    _, before = load_lab(str(copy))
    (copy / "game.py").write_text((copy / "game.py").read_text() + "\n# changed\n")
    _, after = load_lab(str(copy))
    assert before.digest != after.digest and load_spec(copy / "spec.yaml").digest != after.digest
