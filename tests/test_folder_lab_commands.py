"""A lab folder wherever a lab name goes, on the command line as users type it: `abgrade
lab new`, `specs verify`, `exercise`, `grade`, `batch`, `check` (LAB=FOLDER and
abgrade.yaml's `lab:`), the pytest plugin, and `gradescope build` / the bundle's run."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.course.autograder import run_autograder
from grader.course.gradescope_bundle import SETTINGS_FILE, build_bundle

TESTS = Path(__file__).resolve().parent
NIM = TESTS.parent / "examples" / "labs" / "nim"
NIM_FIXTURES = TESTS / "fixtures" / "folder_labs" / "nim"


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course folder with a copy of the Nim lab in labs/nim and two students' files."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(NIM, root / "labs" / "nim")
    (root / "class").mkdir()
    shutil.copyfile(NIM_FIXTURES / "correct_helpers.py", root / "class" / "ada.py")
    shutil.copyfile(NIM_FIXTURES / "bug_depth_first.py", root / "class" / "bob.py")
    return root


def test_lab_new_writes_a_lab_that_verifies_grades_and_makes_an_exercise(tmp_path: Path) -> None:
    made = abgrade("lab", "new", "pebbles", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "pebbles"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "bugs/no_pruning.py",
        "game.py",
        "reference.py",
        "spec.yaml",
    ]
    assert "lab: pebbles" in (folder / "spec.yaml").read_text()
    verified = abgrade("specs", "verify", "pebbles", cwd=tmp_path)
    assert verified.returncode == 0 and "pebbles/spec.yaml: ok (3 fixed cases)" in verified.stdout, verified.stdout
    graded = abgrade("grade", "pebbles/reference.py", "--lab", "pebbles", "-q", cwd=tmp_path)
    assert graded.returncode == 0 and graded.stdout.strip() == "27/27", graded.stdout + graded.stderr
    exercise = abgrade("exercise", "pebbles", "-o", "work/lab.py", cwd=tmp_path)
    assert exercise.returncode == 0, exercise.stderr
    skeleton = (tmp_path / "work" / "lab.py").read_text()
    assert "raise NotImplementedError" in skeleton and "### BEGIN SOLUTION" not in skeleton
    assert "alpha = max(alpha, best)" not in skeleton and "from game import moves, outcome" in skeleton
    assert (tmp_path / "work" / "game.py").read_text() == (folder / "game.py").read_text()
    started = abgrade("grade", "work/lab.py", "--lab", "pebbles", "--json", "out.json", cwd=tmp_path)
    results = json.loads((tmp_path / "out.json").read_text())
    assert started.returncode == 1 and results["tests"][0]["status"] == "passed"  # it loads; nothing more yet


def test_lab_new_refuses_a_folder_that_exists_or_a_bad_name(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    for name, says in (("taken", "already exists"), ("tree", "an installed lab's name"), ("9lives", "not a lab name")):
        done = abgrade("lab", "new", name, cwd=tmp_path)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_exercise_of_a_lab_folder_as_a_notebook(tmp_path: Path) -> None:
    done = abgrade("exercise", NIM, "--notebook", "-o", "nim.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    notebook = json.loads((tmp_path / "nim.ipynb").read_text())
    source = "".join("".join(cell["source"]) for cell in notebook["cells"])
    assert "def alphabeta(heaps, depth, alpha, beta, maximizing):" in source and "NotImplementedError" in source
    assert (tmp_path / "nim.py").is_file()  # the game, beside it
    again = abgrade("exercise", NIM, "--notebook", "-o", "nim.ipynb", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_specs_verify_takes_the_spec_of_a_lab_folder(course: Path) -> None:
    done = abgrade("specs", "verify", "--spec", "labs/nim/spec.yaml", cwd=course)
    assert done.returncode == 0 and "labs/nim/spec.yaml: ok (6 fixed cases)" in done.stdout, done.stdout + done.stderr


def test_batch_grades_a_class_with_a_lab_folder(course: Path) -> None:
    done = abgrade("batch", "class", "--lab", "labs/nim", "--jobs", "2", "--seed", "4", cwd=course)
    assert done.returncode == 0, done.stderr
    with open(course / "class-abgrade" / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["ada"]["score"] == rows["ada"]["max_score"] == "49"
    assert float(rows["bob"]["score"]) < 49
    feedback = (course / "class-abgrade" / "feedback" / "bob.md").read_text()
    assert "Test whether the game is over before testing the depth" in feedback
    assert "depth_before_game_over" in (course / "class-abgrade" / "class.html").read_text()
    again = abgrade("batch", "class", "--lab", "labs/nim", cwd=course)
    assert "0 graded now, 2 up to date" in again.stdout, again.stdout


def test_check_takes_a_lab_folder_as_an_argument_and_in_abgrade_yaml(course: Path) -> None:
    done = abgrade("check", "labs/nim=class/ada.py", cwd=course)
    assert done.returncode == 0 and "every visible check passes" in done.stdout, done.stdout + done.stderr
    (course / "abgrade.yaml").write_text("labs:\n  nim:\n    lab: labs/nim\n    submission: class/bob.py\n")
    done = abgrade("check", cwd=course)
    assert done.returncode == 1 and "FAILED: nim" in done.stdout, done.stdout + done.stderr
    (course / "abgrade.yaml").write_text("labs:\n  nim: class/bob.py\n")
    done = abgrade("check", cwd=course)
    assert done.returncode == 2 and "give its path as `lab:`" in done.stderr
    (course / "abgrade.yaml").unlink()


def test_the_pytest_plugin_takes_a_lab_folder(course: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "0",
            "--abgrade",
            "labs/nim=class/ada.py",
        ],
        capture_output=True,
        text=True,
        cwd=course,
        timeout=300,
    )
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout + done.stderr


def test_a_gradescope_bundle_carries_the_lab_folder_and_grades_from_it(course: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "abgrade-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as fake:
        fake.writestr("placeholder.txt", "the grader's wheel would be here")
    bundle = build_bundle(str(course / "labs" / "nim"), tmp_path / "autograder.zip", wheel=wheel, seed=7)
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        archive.extractall(root / "source")
    assert {"lab/game.py", "lab/reference.py", "lab/spec.yaml", "lab/bugs/no_pruning.py"} <= set(names)
    settings = json.loads((root / "source" / SETTINGS_FILE).read_text())
    assert settings == {"lab": "nim", "spec": None, "seed": 7, "folder": "lab"}
    (root / "submission").mkdir()
    shutil.copyfile(NIM_FIXTURES / "correct_helpers.py", root / "submission" / "nim_lab.py")
    results = run_autograder(root)
    assert results["score"] == 49 and json.loads((root / "results" / "results.json").read_text())["score"] == 49
