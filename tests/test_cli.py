"""The `abgrade` command as users run it (`python -m grader ...` in a subprocess): bad
submissions, exit codes, Gradescope's results.json, `demo`, `specs verify` and `exercise`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from grader.exercises import exercise_path, exercise_text
from grader.paths import PROJECT_DIR, SOLUTIONS_DIR
from grader.spec import spec_path

TREE_SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "tree"
SPEC_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "specs"
# Gradescope's documented results.json, with only the fields abgrade's contract allows
GRADESCOPE_SCHEMA = json.loads((Path(__file__).resolve().parent / "gradescope_results.schema.json").read_text())

# DESIGN.md, "Results": the check kinds that may open a test's tags, and Gradescope's fields.
CHECK_KINDS = {"load", "value", "nodes", "pruned", "bounds", "choice", "game_over", "random", "limits"}
VISIBILITIES = {"visible", "hidden", "after_due_date", "after_published"}
TOP_FIELDS = {"score", "output", "execution_time", "tests", "extra_data"}  # max_score: in extra_data
TEST_FIELDS = {"name", "score", "max_score", "status", "output", "visibility", "tags"}


def abgrade(*args: object, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or PROJECT_DIR,
        timeout=timeout,
    )


def no_traceback(run: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in run.stderr + run.stdout, run.stderr


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def strict_json(path: Path) -> dict:
    """results.json, refusing NaN and Infinity (which Gradescope's parser rejects)."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} in results.json")

    return json.loads(path.read_text(), parse_constant=refuse)


# --- submissions that can't be graded -------------------------------------------------------

SYNTAX_ERROR = "graph = {}\n\ndef alphabeta(node, alpha, beta, max_player)\n    return 0\n"
GARBAGE = b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\x00binary" * 16  # no newline: one "line"
FIXTURE = object()  # copy the fixture of the same name


def _wrong_signature_line() -> int:
    return line_of(TREE_SUBMISSIONS / "load_wrong_signature.py", "def alphabeta")


BAD_SUBMISSIONS = [
    # a SyntaxError on every Python (3.11.2, Debian 12's, raises ValueError for a null byte)
    pytest.param(
        "garbage.py", GARBAGE, "garbage.py: SyntaxError: source code string cannot contain null bytes", id="binary"
    ),
    pytest.param("syntax.py", SYNTAX_ERROR, "syntax.py:3: SyntaxError", id="syntax"),
    pytest.param("load_no_alphabeta.py", FIXTURE, "load_no_alphabeta.py: no `alphabeta` is defined", id="no-alphabeta"),
    pytest.param(
        "load_wrong_signature.py",
        FIXTURE,
        f"load_wrong_signature.py:{_wrong_signature_line()}: alphabeta(node, alpha) cannot be called as "
        "alphabeta(node, alpha, beta, max_player)",
        id="signature",
    ),
]


def _place(folder: Path, name: str, content: object) -> Path:
    path = folder / name
    if content is FIXTURE:
        path.write_bytes((TREE_SUBMISSIONS / name).read_bytes())
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    return path


@pytest.mark.parametrize(("name", "content", "reason"), BAD_SUBMISSIONS)
def test_bad_submission_fails_load_with_a_one_line_reason(tmp_path, name, content, reason):
    path = _place(tmp_path, name, content)
    out = tmp_path / "results.json"
    run = abgrade("grade", path, "--lab", "tree", "--json", out, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    no_traceback(run)
    results = strict_json(out)
    assert results["score"] == 0
    load = results["tests"][0]
    assert load["tags"][0] == "load" and load["status"] == "failed"
    assert "\n" not in load["output"], load["output"]
    assert load["output"].startswith(name), load["output"]
    assert reason in load["output"]
    assert reason in run.stdout
    assert all(t["status"] == "failed" for t in results["tests"])


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("missing.py", "no such file; give the path of your .py or .ipynb"),
        ("labs", "is a folder; give the path of your .py or .ipynb file in it"),
        ("notes.txt", "not a .py or .ipynb file; give the path of your .py or .ipynb"),
    ],
    ids=["missing", "folder", "txt"],
)
def test_a_submission_path_that_is_not_a_submission_is_a_usage_error(tmp_path, name, reason):
    (tmp_path / "labs").mkdir()
    (tmp_path / "notes.txt").write_text("def alphabeta(node, alpha, beta, max_player):\n    return 0\n")
    run = abgrade("grade", name, "--lab", "tree", "--json", "out.json", cwd=tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (2, "", f"abgrade: {name}: {reason}\n")
    assert not (tmp_path / "out.json").exists()


def test_q_is_quiet(tmp_path):
    run = abgrade("grade", TREE_SUBMISSIONS / "correct_seed_style.py", "--lab", "tree", "-q", "--seed", 1)
    assert (run.returncode, run.stdout) == (0, "75/75\n"), run.stderr


def test_binary_file_reason_has_no_bogus_line(tmp_path):
    path = _place(tmp_path, "garbage.py", GARBAGE)
    out = tmp_path / "results.json"
    abgrade("grade", path, "--lab", "tree", "--json", out, cwd=tmp_path)
    load = strict_json(out)["tests"][0]["output"]
    assert "None" not in load, load


# --- usage and spec errors: exit 2 -------------------------------------------------------------


def test_unknown_lab_exits_2_naming_the_known_labs():
    run = abgrade("grade", TREE_SUBMISSIONS / "correct_negamax.py", "--lab", "nosuchlab")
    assert run.returncode == 2
    no_traceback(run)
    assert "unknown lab 'nosuchlab'" in run.stderr and "tree" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("unknown_check_kind.yaml", "checks.speed"),  # caught by the spec loader
        ("tree_with_cycle.yaml", "cases[1].graph"),  # caught when the lab reads its cases
    ],
)
def test_broken_spec_exits_2_with_file_line_and_field(spec, field):
    path = SPEC_FIXTURES / spec
    run = abgrade("grade", TREE_SUBMISSIONS / "correct_negamax.py", "--lab", "tree", "--spec", path)
    assert run.returncode == 2
    no_traceback(run)
    assert f"{path}:{line_of(path, 'SpecError here')}: {field}: " in run.stderr


@pytest.mark.parametrize(
    "args",
    [(), ("grade", "x.py"), ("exercise", "nosuchlab", "-o", "x.py")],
    ids=["no-command", "no-lab", "unknown-exercise"],
)
def test_usage_errors_exit_2(tmp_path, args):
    run = abgrade(*args, cwd=tmp_path)
    assert run.returncode == 2
    no_traceback(run)


# --- results.json and exit codes ----------------------------------------------------------------


@pytest.fixture(scope="module")
def strict_cutoff_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("json") / "results.json"
    run = abgrade("grade", TREE_SUBMISSIONS / "bug_strict_cutoff.py", "--lab", "tree", "--seed", 1, "--json", out)
    return run, strict_json(out)


def test_visible_failure_exits_1(strict_cutoff_run):
    run, _ = strict_cutoff_run
    assert run.returncode == 1
    assert "alpha-equals-beta: pruned" in run.stdout


def test_results_json_follows_gradescope_schema(strict_cutoff_run):
    _, results = strict_cutoff_run
    assert set(results) == TOP_FIELDS
    assert isinstance(results["output"], str)
    assert isinstance(results["execution_time"], (int, float)) and results["execution_time"] >= 0
    for test in results["tests"]:
        assert set(test) == TEST_FIELDS, test["name"]
        assert test["status"] in {"passed", "failed"}
        assert test["visibility"] in VISIBILITIES
        assert test["tags"] and test["tags"][0] in CHECK_KINDS
        assert isinstance(test["name"], str) and isinstance(test["output"], str) and test["output"]
        assert test["score"] == (test["max_score"] if test["status"] == "passed" else 0)
    assert results["score"] == sum(t["score"] for t in results["tests"])
    assert results["extra_data"]["max_score"] == sum(t["max_score"] for t in results["tests"])
    assert 0 < results["score"] < results["extra_data"]["max_score"]
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    names = [t["name"] for t in results["tests"]]
    assert len(names) == len(set(names))


def test_results_json_names_the_seed_for_the_instructor_only(strict_cutoff_run):
    _, results = strict_cutoff_run
    assert any("--seed 1" in note for note in results["extra_data"]["instructor_notes"])
    assert "seed" not in results["output"] and "isolation" not in results["output"]  # what students read


def test_full_marks_exit_0(tmp_path):
    run = abgrade("grade", TREE_SUBMISSIONS / "correct_iterative.py", "--lab", "tree", "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stdout
    assert run.stdout.strip() == "75/75"


def test_only_hidden_failures_exit_0(tmp_path):
    text = spec_path("tree").read_text()
    hidden = tmp_path / "tree_hidden_bounds.yaml"
    hidden.write_text(text.replace("bounds: {points: 1}", "bounds: {points: 1, visibility: hidden}"))
    out = tmp_path / "results.json"
    run = abgrade(
        "grade", TREE_SUBMISSIONS / "bug_bounds_midpoint.py", "--lab", "tree", "--spec", hidden, "--json", out
    )
    assert run.returncode == 0, run.stdout
    failed = [t for t in strict_json(out)["tests"] if t["status"] == "failed"]
    assert failed and all(t["visibility"] == "hidden" and t["tags"][0] == "bounds" for t in failed)


# --- demo, specs verify, exercise ---------------------------------------------------------------


def test_demo_exits_0():
    run = abgrade("demo")
    assert run.returncode == 0, run.stdout[-2000:]
    no_traceback(run)


@pytest.mark.parametrize(
    ("stored", "altered", "field"),
    [
        ("{value: 4, nodes: 27,", "{value: 5, nodes: 27,", "cases[0].expect.value"),
        ("pruned: [d4, e7, e8, e14]}", "pruned: [d4, e7, e8]}", "cases[0].expect.pruned"),
    ],
)
def test_specs_verify_catches_an_altered_expectation(tmp_path, stored, altered, field):
    text = spec_path("tree").read_text()
    assert text.count(stored) == 1
    copy = tmp_path / "tree.yaml"
    copy.write_text(text.replace(stored, altered))
    run = abgrade("specs", "verify", "--spec", copy)
    assert run.returncode == 1
    no_traceback(run)
    assert f"{copy}:{line_of(copy, altered)}: {field}: " in run.stdout


def test_checked_in_skeleton_is_generated_from_the_solution():
    assert exercise_path("tree").read_text() == exercise_text("tree")


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory) -> Path:
    """The student's starting file, as `abgrade exercise tree -o X` writes it."""
    target = tmp_path_factory.mktemp("exercise") / "my_tree_lab.py"
    run = abgrade("exercise", "tree", "-o", target)
    assert run.returncode == 0, run.stderr
    return target


def test_exercise_writes_the_skeleton(skeleton):
    assert skeleton.read_text() == exercise_text("tree")


def test_exercise_does_not_overwrite(skeleton):
    run = abgrade("exercise", "tree", "-o", skeleton)
    assert run.returncode == 2
    assert "already exists" in run.stderr
    no_traceback(run)


def test_skeleton_loads_and_fails_everything_else_with_not_implemented(grade, skeleton):
    report = grade(skeleton)
    load = next(t for t in report.tests if t.kind == "load")
    assert load.passed, load.output
    assert "NotImplementedError" in load.output  # the demo line at its bottom calls alphabeta
    judged = [t for t in report.tests if t.kind not in ("load", "limits")]
    assert judged and not any(t.passed for t in judged)
    assert all("NotImplementedError" in t.output for t in judged)
    # Decision: raising is an answer, not a limit; `limits` only counts time, memory, recursion.
    assert next(t for t in report.tests if t.kind == "limits").passed


def test_reference_solution_gets_full_marks(grade):
    report = grade(SOLUTIONS_DIR / "tree.py")
    assert report.score == report.max_score


def test_a_student_process_the_machine_cannot_start_is_said_in_one_line(monkeypatch, capsys) -> None:
    """The worker dies before it reports being confined (here: the isolation prefix is a
    command that fails at once): retried, then exit 3 with one line, never blamed on the
    submission and never a traceback."""
    from grader.cli import main
    from grader.sandbox import isolation

    monkeypatch.setattr(isolation.Isolation, "prefix", lambda self: ["false"])
    monkeypatch.setenv("ABGRADE_CACHE", "0")  # no recipe, no first spawn (its failure: test_first_spawn.py)
    code = main(["grade", str(TREE_SUBMISSIONS / "correct_fail_hard.py"), "--lab", "tree"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("abgrade: this machine could not start the student's process (not the submission's fault")
    assert len(err.splitlines()) == 1 and "3 attempts" in err


def test_a_kernel_that_cannot_start_says_why(monkeypatch, capsys, tmp_path) -> None:
    """KernelStartError carries the reason (the kernel's own last words), and `grade`
    reports it as the machine's problem in one line."""
    from grader.cli import main
    from grader.sandbox import isolation

    def broken(self, argv, plan):
        return [sys.executable, "-c", "import sys; sys.stderr.write('no kernel in this machine'); sys.exit(3)"]

    monkeypatch.setattr(isolation.Isolation, "wrap", broken)
    notebook = tmp_path / "lab.ipynb"
    notebook.write_text(
        '{"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [], '
        '"execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    code = main(["grade", str(notebook), "--lab", "tree"])
    err = capsys.readouterr().err
    assert code == 3 and len(err.splitlines()) == 1
    assert "could not start a Jupyter kernel (3 attempts)" in err and "no kernel in this machine" in err


# --- nothing of the student outlives the command -----------------------------------------------

ESCAPING = """\
import os, sys
if os.fork() == 0:  # a grandchild in a session of its own, out of the worker's process group
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "{marker}"])
    os._exit(0)
os.wait()
"""


def _running_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.mark.skipif(os.geteuid() != 0, reason="the student's uid (and so its every process) is leased by a root grader")
@pytest.mark.parametrize("level", ["", "process"])
def test_no_process_or_work_folder_of_the_student_outlives_grade(tmp_path: Path, level: str) -> None:
    """`grade` removes the work folder and releases the uid on a thread while it prints the
    report (commands/grade.py): both are done by the time the command exits, even for a
    submission that left a process behind in a session of its own."""
    marker = f"abgrade-escape-marker-{os.getpid()}-{level or 'default'}"
    submission = tmp_path / "escaping.py"
    submission.write_text(ESCAPING.format(marker=marker))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "ABGRADE_ISOLATION": level}
    run = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(submission), "--lab", "tree", "-q"],
        capture_output=True,
        text=True,
        cwd=PROJECT_DIR,
        env=env,
        timeout=120,
    )
    no_traceback(run)
    assert run.returncode == 1, run.stderr  # it defines no alphabeta: graded, not crashed
    assert _running_with(marker) == []
    assert [p.name for p in temporary.iterdir() if p.name.startswith("abgrade-")] == []
