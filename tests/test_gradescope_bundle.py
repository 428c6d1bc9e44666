"""The Gradescope autograder: finding the one submission file, load failures written to
results.json (never a crash), the bundle's settings and spec, packaging (every package and
the specs in the wheel), and the whole bundle as Gradescope runs it: setup.sh installs the
built wheel into a fresh venv, run_autograder grades a correct and a buggy submission in a
fake /autograder folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
import tomllib

from grader.commands.common import load_lab
from grader.course.autograder import NoSingleSubmission, find_submission, run_autograder
from grader.course.gradescope_bundle import SETTINGS_FILE, build_wheel
from grader.grading import grade_submission
from grader.paths import PROJECT_DIR
from grader.registry import check_kinds
from grader.results import VISIBILITIES
from grader.spec import spec_path

TREE_SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "tree"
CORRECT = TREE_SUBMISSIONS / "correct_fail_hard.py"
STRICT_CUTOFF = TREE_SUBMISSIONS / "bug_strict_cutoff.py"
TOP_FIELDS = {"score", "output", "execution_time", "tests", "extra_data"}
GRADESCOPE_SCHEMA = json.loads((Path(__file__).resolve().parent / "gradescope_results.schema.json").read_text())
TEST_FIELDS = {"name", "score", "max_score", "status", "output", "visibility", "tags"}

CHECK_KINDS = check_kinds()  # the shared kinds and every installed lab's own


def tree_max_score(kind: str | None = None) -> float:
    """The most specs/tree.yaml gives, in all or in one check kind."""
    lab, spec = load_lab("tree")
    tests = grade_submission(Path("missing.py"), lab, spec, seed=1).tests
    return sum(t.max_score for t in tests if kind in (None, t.kind))


def assert_results_schema(results: dict) -> None:
    """Gradescope's results.json schema, as DESIGN.md fixes it: validated against the JSON
    schema written from Gradescope's documented format, then the sums."""
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    assert set(results) == TOP_FIELDS
    assert isinstance(results["output"], str) and results["execution_time"] >= 0
    for test in results["tests"]:
        assert set(test) == TEST_FIELDS, test
        assert test["status"] in ("passed", "failed") and test["visibility"] in VISIBILITIES
        assert test["tags"][0] in CHECK_KINDS
        assert test["score"] == (test["max_score"] if test["status"] == "passed" else 0)
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))
    assert results["extra_data"]["max_score"] == pytest.approx(sum(t["max_score"] for t in results["tests"]))


def autograder_folder(root: Path, files: dict[str, str], settings: dict | None = None) -> Path:
    """A fake /autograder: submission/ with `files`, source/ with the bundle's settings."""
    (root / "submission").mkdir(parents=True)
    (root / "source").mkdir()
    for name, text in files.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_text(text)
    (root / "source" / SETTINGS_FILE).write_text(json.dumps(settings or {"lab": "tree", "spec": None}))
    return root


# --- finding the submission ------------------------------------------------------------------


def test_the_one_python_file_is_found_in_any_subfolder(tmp_path: Path) -> None:
    for name in (
        "lab/tree.ipynb",
        "README.md",
        ".ipynb_checkpoints/tree-checkpoint.ipynb",
        "__MACOSX/lab/._tree.ipynb",
        "lab/__pycache__/x.py",
        ".hidden.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert find_submission(tmp_path) == tmp_path / "lab" / "tree.ipynb"


def test_none_or_several_files_say_what_was_found(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(NoSingleSubmission, match=r"holds no \.py or \.ipynb file \(only: notes.txt\)"):
        find_submission(tmp_path)
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.ipynb").write_text("")
    with pytest.raises(NoSingleSubmission, match=r"holds 2 Python files \(a.py, b.ipynb\); submit exactly one"):
        find_submission(tmp_path)


@pytest.mark.parametrize(
    "files, message",
    [
        ({}, "your submission holds no .py or .ipynb file"),
        ({"a.py": "", "sub/b.py": ""}, "your submission holds 2 Python files (a.py, sub/b.py)"),
    ],
    ids=["none", "several"],
)
def test_no_single_file_is_a_load_failure_out_of_the_full_score(tmp_path: Path, files: dict, message: str) -> None:
    root = autograder_folder(tmp_path / "autograder", files)
    results = run_autograder(root)
    assert json.loads((root / "results" / "results.json").read_text()) == results
    assert_results_schema(results)
    assert results["score"] == 0 and results["extra_data"]["max_score"] == tree_max_score()
    load = results["tests"][0]
    assert load["tags"] == ["load"] and load["output"].startswith(message)


def test_the_bundles_own_spec_is_used(tmp_path: Path) -> None:
    spec = (PROJECT_DIR / "specs" / "tree.yaml").read_text().replace("value: {points: 2}", "value: {points: 5}")
    root = autograder_folder(
        tmp_path / "autograder", {"tree.py": CORRECT.read_text()}, {"lab": "tree", "spec": "spec.yaml"}
    )
    (root / "source" / "spec.yaml").write_text(spec)
    results = run_autograder(root)
    assert_results_schema(results)
    assert results["score"] == results["extra_data"]["max_score"] == tree_max_score() + tree_max_score("value") * 3 / 2


def test_a_broken_setup_still_writes_results_then_raises(tmp_path: Path) -> None:
    root = autograder_folder(tmp_path / "autograder", {"tree.py": ""}, {"lab": "tre"})
    with pytest.raises(Exception, match="unknown lab 'tre'"):
        run_autograder(root)
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "tell your instructor" in results["output"]
    jsonschema.validate(results, GRADESCOPE_SCHEMA)  # even the autograder's own failure


# --- packaging -------------------------------------------------------------------------------


def test_every_package_is_listed_in_pyproject() -> None:
    """pyproject lists packages by hand (to map specs/ into the wheel): a package missing
    there would be missing on Gradescope."""
    config = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(init.parent.relative_to(PROJECT_DIR).parts)
        for top in ("grader", "reference")
        for init in (PROJECT_DIR / top).rglob("__init__.py")
    }
    listed = set(config["packages"])
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == {"grader.specs"} and config["package-dir"] == {"grader.specs": "specs"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(PROJECT_DIR, tmp_path_factory.mktemp("wheel"))


@pytest.mark.slow
def test_the_wheel_carries_the_specs_templates_and_the_plugin(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for spec in (PROJECT_DIR / "specs").glob("*.yaml"):
            assert archive.read(f"grader/specs/{spec.name}") == spec.read_bytes()
        assert {
            "grader/course/templates/setup.sh",
            "grader/course/templates/run_autograder",
            "grader/course/templates/abgrade-check.yml",
            "reference/solutions/tree.py",
        } <= names
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "[pytest11]\nabgrade = grader.pytest_plugin" in entry_points
    assert not any(name.startswith(("tests/", "specs/")) for name in names)


# --- the bundle, run as Gradescope runs it --------------------------------------------------


def run_script(script: Path, root: Path, python: Path, **extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ABGRADE_AUTOGRADER_ROOT": str(root), "ABGRADE_PYTHON": str(python), **extra}
    return subprocess.run([str(script)], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def unpack(bundle: Path, source: Path) -> None:
    """Unzip as Gradescope does, keeping the scripts' executable bits."""
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            target = Path(archive.extract(info, source))
            target.chmod(info.external_attr >> 16 & 0o777)


def installed_autograder(tmp_path: Path, wheel: Path) -> tuple[Path, Path]:
    """Build the bundle with the CLI, unpack it as Gradescope does into a fake /autograder
    and run its setup.sh into a fresh venv (offline). Returns (root, the venv's python)."""
    bundle = tmp_path / "autograder.zip"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "gradescope",
            "build",
            "--lab",
            "tree",
            "-o",
            str(bundle),
            "--wheel",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    with zipfile.ZipFile(bundle) as archive:
        assert set(archive.namelist()) == {"setup.sh", "run_autograder", wheel.name, SETTINGS_FILE}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    root = tmp_path / "autograder"
    unpack(bundle, root / "source")
    setup = run_script(root / "source" / "setup.sh", root, python, ABGRADE_PIP_OPTIONS="--no-deps --no-index -q")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return root, python


@pytest.mark.slow
def test_bundle_installs_offline_and_grades_in_a_fake_autograder(tmp_path: Path, wheel: Path) -> None:
    root, python = installed_autograder(tmp_path, wheel)
    venv = python.parent.parent
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import grader.paths as p; print(p.IS_CHECKOUT, p.SPECS_DIR, p.PROJECT_DIR, p.PACKAGE_DIR)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    checkout, specs, hidden, package = where
    assert checkout == "False" and specs.startswith(str(venv))  # the installed copy, specs and all
    assert hidden == package  # the sandbox hides the package, not site-packages (numpy, ipykernel)
    (root / "source" / "run_autograder").rename(root / "run_autograder")  # where Gradescope puts it

    seed = json.loads((root / "source" / SETTINGS_FILE).read_text())["seed"]  # drawn when it was built
    scores = {}
    for run, submission in enumerate((CORRECT, STRICT_CUTOFF, STRICT_CUTOFF)):
        (root / "submission").mkdir()
        (root / "submission" / submission.name).write_text(submission.read_text())
        done = run_script(root / "run_autograder", root, python)
        assert done.returncode == 0, done.stdout + done.stderr
        results = json.loads((root / "results" / "results.json").read_text())
        assert_results_schema(results)
        assert results["extra_data"]["max_score"] == tree_max_score()
        assert "seed" not in results["output"] and "isolation" not in results["output"]
        assert "note: random cases drawn from this assignment's own seed" in done.stdout  # the instructor's view
        assert {t["visibility"] for t in results["tests"] if t["tags"][0] == "random"} == {"after_published"}
        assert str(seed) not in json.dumps(results)
        if run == 2:  # the same file again: the bundle's seed, the same cases, tests and score
            assert results["tests"] == scores[submission.name]["tests"]
            assert results["score"] == scores[submission.name]["score"]
        scores[submission.name] = results
        (root / "submission" / submission.name).unlink()
        (root / "submission").rmdir()
    correct, buggy = scores[CORRECT.name], scores[STRICT_CUTOFF.name]
    assert correct["score"] == correct["extra_data"]["max_score"]
    assert buggy["score"] < buggy["extra_data"]["max_score"]
    failed_kinds = {t["tags"][0] for t in buggy["tests"] if t["status"] == "failed"}
    assert {"nodes", "pruned"} <= failed_kinds <= {"nodes", "pruned", "random"}


def test_build_refuses_a_spec_with_a_wrong_stored_expectation(tmp_path: Path) -> None:
    text = spec_path("tree").read_text()
    assert text.count("{value: 4, nodes: 27,") == 1
    spec = tmp_path / "tree.yaml"
    spec.write_text(text.replace("{value: 4, nodes: 27,", "{value: 5, nodes: 27,"))
    line = next(n for n, row in enumerate(spec.read_text().splitlines(), start=1) if "{value: 5, nodes: 27," in row)
    fake_wheel = tmp_path / "abgrade-0-py3-none-any.whl"
    fake_wheel.write_bytes(b"")
    bundle = tmp_path / "autograder.zip"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "gradescope",
            "build",
            "--lab",
            "tree",
            "--spec",
            str(spec),
            "-o",
            str(bundle),
            "--wheel",
            str(fake_wheel),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 2 and not bundle.exists()
    assert built.stderr.startswith(f"abgrade: {spec}: 1 stored expectation(s) disagree with the reference")
    assert f"  {spec}:{line}: cases[0].expect.value: stored 5, the reference computes 4" in built.stderr
    assert "Traceback" not in built.stderr
