"""The pytest plugin, through a real inner pytest (pytester) on a temporary course
repository: one test per visible check, abgrade's messages as failure text, abgrade.yaml,
-k selection, usage errors, and nothing at all without --abgrade."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from grader.course.config import LabEntry
from grader.course.visible import check_lab
from tests.test_course_check import SPEC_WITH_HIDDEN

pytest_plugins = ["pytester"]

TREE_SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "tree"
CORRECT = TREE_SUBMISSIONS / "correct_fail_hard.py"
STRICT_CUTOFF = TREE_SUBMISSIONS / "bug_strict_cutoff.py"
VISIBLE_TESTS = 45  # specs/tree.yaml: load, limits, and value/nodes/pruned/bounds of its fixed cases
STUDENT_TEST = "def test_students_own():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def course(pytester: pytest.Pytester) -> pytest.Pytester:
    """A course repository with its own pytest test, labs/tree.py (correct) and abgrade.yaml."""
    pytester.makepyfile(test_own=STUDENT_TEST)
    (pytester.path / "labs").mkdir()
    (pytester.path / "labs" / "tree.py").write_text(CORRECT.read_text())
    (pytester.path / "abgrade.yaml").write_text("labs:\n  tree: labs/tree.py\n")
    return pytester


def test_the_plugin_is_loaded_through_pytest11(pytestconfig: pytest.Config) -> None:
    """This very run loaded it as the `abgrade` entry point, as any pytest run after
    `pip install` does."""
    import grader.pytest_plugin

    assert pytestconfig.pluginmanager.get_plugin("abgrade") is grader.pytest_plugin, (
        "the installed metadata lacks the pytest11 entry point: run `pip install -e .[test]` again"
    )


def test_without_the_option_the_plugin_does_nothing(course: pytest.Pytester) -> None:
    result = course.runpytest("-v")
    result.assert_outcomes(passed=1)
    assert "abgrade::" not in result.stdout.str()


def test_one_test_per_visible_check_of_a_correct_lab(course: pytest.Pytester) -> None:
    result = course.runpytest("--abgrade", "tree=labs/tree.py", "-v")
    result.assert_outcomes(passed=VISIBLE_TESTS + 1)
    result.stdout.fnmatch_lines(
        ["*collected 46 items*", "abgrade::tree::load PASSED*", "abgrade::tree::alpha-equals-beta: pruned PASSED*"]
    )
    assert "abgrade::tree::random" not in result.stdout.str()  # hidden cases never run here


def test_failures_carry_abgrades_messages(course: pytest.Pytester) -> None:
    (course.path / "labs" / "tree.py").write_text(STRICT_CUTOFF.read_text())
    result = course.runpytest("--abgrade", "tree=labs/tree.py")
    result.assert_outcomes(passed=VISIBLE_TESTS + 1 - 4, failed=4)
    report = check_lab(LabEntry("tree", course.path / "labs" / "tree.py"))
    failed = [t for t in report.tests if not t.passed]
    assert len(failed) == 4
    for test in failed:
        # the failure section is headed by the check and holds exactly abgrade's output
        result.stdout.fnmatch_lines([f"_* abgrade tree: {test.name} _*", *test.output.splitlines()])
    result.stdout.fnmatch_lines(["FAILED abgrade::tree::sibling-ties: pruned - First difference at read #8*"])


def test_bare_option_reads_abgrade_yaml_and_k_selects(course: pytest.Pytester) -> None:
    result = course.runpytest("--abgrade", "-k", "seed", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        ["*collected 46 items / 42 deselected / 4 selected*", "abgrade::tree::seed: bounds PASSED*"]
    )


def test_hidden_checks_are_not_tests(course: pytest.Pytester) -> None:
    spec = course.path / "course-tree.yaml"
    spec.write_text(SPEC_WITH_HIDDEN)
    (course.path / "abgrade.yaml").write_text("labs:\n  tree: {submission: labs/tree.py, spec: course-tree.yaml}\n")
    result = course.runpytest("--abgrade", "tree", "--collect-only", "-q")
    lines = [line for line in result.stdout.lines if line.startswith("abgrade::")]
    assert lines == [
        "abgrade::tree::load",
        "abgrade::tree::shown: value",
        "abgrade::tree::shown: nodes",
        "abgrade::tree::shown: pruned",
        "abgrade::tree::shown: bounds",
        "abgrade::tree::limits",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--abgrade", "tre=labs/tree.py"], "--abgrade: tre=labs/tree.py: unknown lab 'tre'; known labs: *"),
        (
            ["--abgrade", "negamax"],
            "--abgrade: lab 'negamax' is not in abgrade.yaml (it lists: tree); give it as negamax=PATH",
        ),
        (
            ["--abgrade", "tree=labs/missing.py"],
            "--abgrade: labs/missing.py: no such file; give the path of your .py or .ipynb",
        ),
        (["--abgrade", "tree=labs"], "--abgrade: labs: is a folder; give the path of your .py or .ipynb file in it"),
    ],
    ids=["unknown-lab", "not-configured", "missing", "folder"],
)
def test_usage_errors_stop_pytest_with_one_line(course: pytest.Pytester, args: list[str], message: str) -> None:
    result = course.runpytest_subprocess(*args)
    assert result.ret == 2  # abgrade's usage error, as in `abgrade check`
    lines = [line for line in result.outlines + result.errlines if "abgrade" in line]
    assert len(lines) == 1 and fnmatch.fnmatch(lines[0], f"Exit: abgrade: {message}"), lines
    assert "not run" not in result.stdout.str()


def test_a_broken_course_spec_is_a_collection_error_with_its_line(course: pytest.Pytester) -> None:
    (course.path / "bad.yaml").write_text("lab: tree\nchecks:\n  load: {points: 1}\ncases:\n  - name: x\n")
    (course.path / "abgrade.yaml").write_text("labs:\n  tree: {submission: labs/tree.py, spec: bad.yaml}\n")
    result = course.runpytest("--abgrade")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*bad.yaml:5: cases?0?.checks: *", "ERROR abgrade::tree"])
    assert "Traceback" not in result.stdout.str()
