"""Issue 23, point 5: what students install carries no answer. `abgrade student-wheel`
builds the wheel; unpacked, it holds no reference solution, no correct submission, no
hidden case and no random-case settings; installed into a fresh venv it checks a correct
and a buggy file of every lab with the full package's visible verdicts, writes the same
skeletons as the checkout, and `check --init-ci` points a course repository's workflow at
it (and refuses the full abgrade)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
import yaml

from grader.course.student_build import LEFT_OUT, MARKER, forbidden_entries, student_wheel_problem
from grader.course.student_wheel import KEPT_SEARCHES, student_spec
from grader.exercises import exercise_notebook_path, exercise_path
from grader.spec import spec_path

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures"
LABS = ["agents", "connect4", "negamax", "tictactoe", "tree"]
# a correct and a buggy file of every lab
SUBMISSIONS = {
    "tree": ("tree/correct_fail_hard.py", "tree/bug_strict_cutoff.py"),
    "tictactoe": ("tictactoe/correct_fail_hard.py", "tictactoe/bug_strict_cutoff.py"),
    "negamax": ("negamax/textbook_fail_soft.py", "negamax/strict_cutoff.py"),
    "agents": ("agents/correct_chapter.py", "agents/bug_strict_cutoff.py"),
    "connect4": ("connect4/correct_seed.py", "connect4/bug_no_ordering.py"),
}
DEPENDENCIES = "numpy, yaml, nbformat, nbclient, ipykernel, pip"  # the wheel's, and pip to install it
SPEC_WITH_HIDDEN = """\
lab: tree
checks:
  load: {points: 1}
  value: {points: 2}
  nodes: {points: 1}
  pruned: {points: 2}
  bounds: {points: 1, visibility: after_due_date}
  random: {points: 1, visibility: after_published}
  limits: {points: 1}
random: {count: 2, branching: [1, 3], depth: [2, 3], values: int, value_range: [-9, 9], tie_rate: 0.3}
cases:
  - name: shown
    checks: [value, nodes, pruned]
    graph: {shown_root: [shown_a, shown_b]}
    terminal_nodes: {shown_a: 3, shown_b: 5}
    expect: {value: 5, nodes: 3, pruned: []}
  - name: secret
    visibility: hidden
    graph: {secret_root: [secret_a]}
    terminal_nodes: {secret_a: 7}
    expect: {value: 7, nodes: 2, pruned: []}
  - name: bounded-later
    graph: {later_root: [later_a, later_b]}
    terminal_nodes: {later_a: 1, later_b: 2}
    expect: {value: 2, nodes: 3, pruned: []}
"""


def abgrade(*args: object, cwd: Path = PROJECT, python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student-wheel")
    done = abgrade("student-wheel", "-o", out)
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("*.whl")
    assert built.name == "abgrade-0.1.0+student-py3-none-any.whl"
    assert str(built) in done.stdout
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    """A fresh venv with the student wheel installed (offline: its dependencies come from
    the interpreter's own site-packages). The student's process is given the venv's own
    site-packages only (sandbox/session.py), so numpy is linked in there."""
    base = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True
    ).stdout.strip()
    found = subprocess.run(
        [
            f"{base}/bin/python3",
            "-c",
            f"import {DEPENDENCIES}, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))",
        ],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        pytest.skip(f"the base interpreter lacks one of {DEPENDENCIES} to lend the fresh venv offline")
    root = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for entry in Path(found.stdout.strip()).glob("numpy*"):
        (site / entry.name).symlink_to(entry)
    where = subprocess.run(
        [str(python), "-c", "import grader, reference; print(grader.__file__, reference.__file__)"],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
    ).stdout.split()
    assert all(path.startswith(str(site)) for path in where), where  # the wheel's copy, not a checkout
    return root


# --- what is in it ------------------------------------------------------------------------------


def test_the_wheel_carries_no_solution_no_hidden_case_and_no_random_settings(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        marker = json.loads(archive.read(MARKER))
        shipped = {Path(n).stem: yaml.safe_load(archive.read(n)) for n in names if n.startswith("grader/specs/")}
    assert forbidden_entries(wheel) == [] and student_wheel_problem(wheel) is None
    assert not [n for n in names if n.startswith(("reference/solutions/", "grader/demo/", "tests/", "exercises/"))]
    assert not [n for n in names if n.startswith(LEFT_OUT)]
    assert {f"grader/skeletons/{lab}/lab.{suffix}" for lab in LABS for suffix in ("py", "ipynb")} <= set(names)
    assert sorted(shipped) == LABS
    for lab, spec in shipped.items():
        full = yaml.safe_load(spec_path(lab).read_text())
        assert "random" not in spec and "random" not in spec["checks"]
        # the bundled specs have no hidden case: every case ships, stored expectations untouched
        assert spec["cases"] == full["cases"] and spec["limits"] == full["limits"]
    assert marker["commands"] == ["check", "exercise"]
    assert set(marker["kept_searches"]) == set(KEPT_SEARCHES)
    for path in KEPT_SEARCHES:  # what stays is what the README lists
        assert path in names and f"`{path}`" in (PROJECT / "README.md").read_text()


def test_hidden_cases_and_kinds_leave_the_shipped_spec_whole(tmp_path):
    """A case that is hidden, or one with a check that is not visible (here `bounds`, shown
    after the due date), is left out with its name, inputs and expectations."""
    path = tmp_path / "tree.yaml"
    path.write_text(SPEC_WITH_HIDDEN)
    shipped = student_spec("tree", path)
    assert shipped.dropped_cases == ("secret", "bounded-later") and shipped.dropped_random
    body = "".join(line for line in shipped.text.splitlines(keepends=True) if not line.startswith("#"))
    for word in ("secret", "later_", "random", "tie_rate", "after_published"):
        assert word not in body
    spec = yaml.safe_load(shipped.text)
    assert [c["name"] for c in spec["cases"]] == ["shown"]
    assert spec["cases"][0]["expect"] == {"value": 5, "nodes": 3, "pruned": []}


# --- installed ----------------------------------------------------------------------------------


def verdicts(junit: Path) -> dict[str, bool]:
    return {case.get("name"): case.find("failure") is None for case in ET.parse(junit).getroot().iter("testcase")}


@pytest.mark.slow
def test_installed_it_has_only_check_and_exercise(venv):
    python = str(venv / "bin" / "python")
    commands = abgrade("--help", python=python, cwd=venv)
    assert "check" in commands.stdout and "exercise" in commands.stdout
    for gone in ("batch", "gradebook", "gradescope", "demo", "specs", "cluster", "student-wheel"):
        assert f"    {gone} " not in commands.stdout, commands.stdout
    where = subprocess.run(
        [python, "-c", "import grader, reference; print(grader.__file__); print(reference.__file__)"],
        capture_output=True, text=True, cwd=venv, check=True,
    ).stdout.split()  # fmt: skip
    grader_dir, reference_dir = (Path(path).parent for path in where)
    assert not (reference_dir / "solutions").exists() and not (grader_dir / "demo").exists()
    assert not (reference_dir / "connect4_solver.py").exists() and not (grader_dir / "batch").exists()


def checked_lab(lab: str, submission: Path, folder: Path) -> list[str]:
    """What `check` is given for `lab`: LAB=PATH, or for the agents lab a config whose spec
    plays two games a match instead of twenty (a match costs a minute on a busy machine, and
    two games still need every opponent the wheel must carry)."""
    if lab != "agents":
        return [f"{lab}={submission}"]
    raw = yaml.safe_load(spec_path("agents").read_text())
    for case in raw["cases"]:
        if "match" in case:
            case["match"]["games"] = 2
    (folder / "agents_short.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    config = folder / "abgrade.yaml"
    config.write_text(f"labs:\n  agents: {{submission: {submission.name}, spec: agents_short.yaml}}\n")
    return ["--config", str(config), "agents"]


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS)
def test_installed_it_checks_every_lab_as_the_full_package_does(venv, tmp_path, lab):
    python = str(venv / "bin" / "python")
    for kind, fixture in zip(("correct", "buggy"), SUBMISSIONS[lab]):
        submission = tmp_path / f"{kind}.py"
        submission.write_text((FIXTURES / fixture).read_text())
        checked = checked_lab(lab, submission, tmp_path)
        runs = {  # side by side: the two packages don't share anything but the machine
            side: subprocess.Popen(
                [command, "-m", "grader", "check", *checked, "--junit", str(tmp_path / f"{side}.xml")],
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )  # fmt: skip
            for side, command, cwd in (("student", python, venv), ("full", sys.executable, PROJECT))
        }
        outputs = {side: run.communicate(timeout=600)[0] for side, run in runs.items()}
        codes = {side: run.returncode for side, run in runs.items()}
        assert codes == {side: 0 if kind == "correct" else 1 for side in runs}, outputs
        seen, expected = verdicts(tmp_path / "student.xml"), verdicts(tmp_path / "full.xml")
        assert seen == expected and len(seen) > 10
        assert all(seen.values()) == (kind == "correct")


@pytest.mark.slow
def test_installed_exercise_writes_the_checkouts_skeletons(venv, tmp_path):
    python = str(venv / "bin" / "python")
    for lab in LABS:
        assert abgrade("exercise", lab, "-o", tmp_path / f"{lab}.py", python=python, cwd=venv).returncode == 0
        assert (tmp_path / f"{lab}.py").read_text() == exercise_path(lab).read_text()
        done = abgrade("exercise", lab, "--notebook", "-o", tmp_path / f"{lab}.ipynb", python=python, cwd=venv)
        assert done.returncode == 0
        assert (tmp_path / f"{lab}.ipynb").read_text() == exercise_notebook_path(lab).read_text()
    unknown = abgrade("exercise", "chess", python=python, cwd=venv)
    assert unknown.returncode == 2 and f"known labs: {', '.join(LABS)}" in unknown.stderr


# --- a course repository's workflow -------------------------------------------------------------


def test_init_ci_points_the_workflow_at_the_student_wheel_in_ci(tmp_path, wheel):
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / wheel.name).write_bytes(wheel.read_bytes())
    done = abgrade("check", "--init-ci", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "abgrade-check.yml").read_text())
    assert workflow["env"] == {"ABGRADE_PACKAGE": f"./ci/{wheel.name}"}
    assert f"it installs the student wheel ./ci/{wheel.name}" in done.stdout


def test_init_ci_refuses_the_full_wheel(tmp_path, wheel):
    """The full wheel (Gradescope's) carries the solutions: refused, by path and from ci/."""
    full = tmp_path / "ci" / "abgrade-0.1.0-py3-none-any.whl"
    full.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(full, "w") as copy:
        for name in source.namelist():
            if name != MARKER:
                copy.writestr(name, source.read(name))
        copy.writestr("reference/solutions/tree.py", "def alphabeta(): ...\n")
    done = abgrade("check", "--init-ci", "--package", "./ci/abgrade-0.1.0-py3-none-any.whl", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "the full abgrade (it carries the reference solutions and every hidden case)" in done.stderr
    assert "abgrade student-wheel -o ci" in done.stderr
    assert not (tmp_path / ".github").exists()
