"""Notebook submissions run in a real Jupyter kernel (nbclient + ipykernel) and must grade
exactly like the same code submitted as `.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from grader.exercises import exercise_notebook_path, exercise_notebook_text
from grader.grading import grade_submission
from grader.lab_setup import load_lab
from grader.labs import Lab, get_lab
from grader.results import GradeReport
from grader.spec import Spec, load_spec, spec_path

from .notebook_builder import notebook_from_file, notebook_from_py, student_notebook

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
PROJECT = TESTS.parent

pytestmark = pytest.mark.slow  # every test here starts Jupyter kernels


def scores(report) -> dict[str, tuple[float, float]]:
    return report.subtotals()


@pytest.fixture(scope="module")
def tree():
    return get_lab("tree"), load_spec(spec_path("tree"))


@pytest.fixture(scope="module")
def graded_py() -> Callable[[Path, Lab, Spec], GradeReport]:
    """`graded_py(py, lab, spec)`: a `.py` graded once with seed 5 for this module (the
    parity rows grade three fixtures twice, once beside each notebook form; a file graded
    again with the same spec and seed gives the same report, test_same_score.py)."""
    reports: dict[tuple[str, str, str], GradeReport] = {}

    def grade_once(py: Path, lab: Lab, spec: Spec) -> GradeReport:
        key = (str(py), str(spec.path), spec.digest)
        if key not in reports:
            reports[key] = grade_submission(py, lab, spec, seed=5)
        return reports[key]

    return grade_once


PARITY = [
    ("tree", "correct_seed_style"),
    ("tree", "correct_negamax"),
    ("tree", "correct_shadows_builtins"),  # numpy's star import and builtins' names in the kernel
    ("tree", "bug_strict_cutoff"),
    ("tree", "bug_no_pruning"),
    ("tree", "bug_window_swapped"),  # a diagnosis on every kind, bounds included
    ("negamax", "course"),
    ("negamax", "fail_hard"),
    ("negamax", "window_not_swapped"),
    ("negamax", "first_successor"),
    ("tictactoe", "correct_fail_hard"),
    ("tictactoe", "correct_own_helpers"),
    ("tree", "correct_thread_pool"),  # its breakpoint() is ignored in the kernel too
    # (lab, fixture, a habit of notebook_builder.HABITS: the notebook as students leave it, after
    # the course's skeleton notebook's cells)
    ("tree", "bug_strict_cutoff", "messy"),
    ("tictactoe", "correct_fail_hard", "messy"),
    ("negamax", "fail_hard", "colab"),
]  # connect4's and agents' notebooks take habits in their own labs' notebook tests


@pytest.mark.parametrize(("lab_name", "fixture", "habit"), [(*row, "")[:3] for row in PARITY])
def test_notebook_grades_exactly_like_py(tmp_path, graded_py, lab_name, fixture, habit):
    py = FIXTURES / lab_name / f"{fixture}.py"
    if not py.exists():
        pytest.skip(f"no fixture {py.name} for lab {lab_name}")
    lab, spec = get_lab(lab_name), load_spec(spec_path(lab_name))
    target = tmp_path / f"{fixture}.ipynb"
    skeleton = PROJECT / "exercises" / lab_name / "lab.ipynb"
    notebook = student_notebook(py, target, habit, skeleton) if habit else notebook_from_py(py, target)
    as_py = graded_py(py, lab, spec)
    as_nb = grade_submission(notebook, lab, spec, seed=5)
    assert scores(as_nb) == scores(as_py)
    assert [(t.name, t.passed) for t in as_nb.tests] == [(t.name, t.passed) for t in as_py.tests]
    assert [t.diagnoses for t in as_nb.tests] == [t.diagnoses for t in as_py.tests]  # the same likely causes
    if habit == "messy":  # each cell error is said, and the cells after it ran
        load = as_nb.tests[0].output
        for said in ("raised NameError", "raised AssertionError: my own test", "raised SystemExit: stop here"):
            assert said in load, load


FROM_FILE = [  # (lab, submission, how the notebook brings in the file a cell wrote)
    ("tree", "solutions/tree.py", "run"),
    ("tree", "solutions/tree.py", "import"),
    ("tree", "solutions/tree.py", "exec"),
    ("tree", "solutions/tree.py", "exec_dict"),
    ("tree", "tree/bug_strict_cutoff.py", "run"),  # buggy stays buggy: the .py's marks exactly
    ("negamax", "solutions/negamax.py", "run"),  # the counter is read where `global` wrote it
    ("connect4", "solutions/connect4.py", "import"),  # the watched evaluate and the cache in sol
    ("examples/labs/nim", "folder_labs/nim/correct_helpers.py", "run"),  # sol's `import nim` rebound
]


@pytest.mark.parametrize(("lab_name", "submission", "style"), FROM_FILE)
def test_notebook_whose_functions_come_from_a_file_grades_like_the_py(tmp_path, graded_py, lab_name, submission, style):
    """`%%writefile sol.py` then `%run sol.py`, `from sol import *` or `exec` into a dict of
    its own: the functions' globals are not the user namespace, and the observer's game
    and watched globals must reach them there."""
    folder = PROJECT / "reference" if submission.startswith("solutions/") else FIXTURES
    py = folder / submission
    lab, spec = load_lab(str(PROJECT / lab_name) if "/" in lab_name else lab_name)
    report = grade_submission(notebook_from_file(py, tmp_path / f"{style}.ipynb", style), lab, spec, seed=5)
    if "bug" in submission:
        as_py = graded_py(py, lab, spec)
        assert [(t.name, t.passed) for t in report.tests] == [(t.name, t.passed) for t in as_py.tests]
        assert report.score == as_py.score < as_py.max_score
    else:
        assert report.score == report.max_score, [t.output for t in report.tests if not t.passed][:3]


def test_a_load_magic_and_a_module_beside_the_notebook_are_explained(tree, tmp_path):
    """`%load sol.py` run as part of a notebook defines nothing (it only fills the cell in
    a front end), and a module the notebook did not write is not there: the student is
    told both, with what to do."""
    lab, spec = tree
    cells = ["%%writefile sol.py\n" + (PROJECT / "reference" / "solutions" / "tree.py").read_text(), "%load sol.py"]
    timed = "%%timeit -n 1 -r 1\ndef alphabeta(node, alpha, beta, max_player):\n    return 4"
    cells = [*cells, "import helpers", timed]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(notebook, tmp_path / "load.ipynb")
    report = grade_submission(tmp_path / "load.ipynb", lab, spec, seed=1)
    load = report.tests[0].output
    assert report.score == 0 and "no `alphabeta` is defined" in load
    assert "cell In [2] is `%load sol.py`: run as part of the notebook it only puts" in load
    assert "or use `%run sol.py`" in load
    assert "No module named 'helpers' (only the notebook is graded: if helpers.py is a file of yours" in load
    assert "if it is a library, the grader does not have it and a `pip install` cell cannot fetch it" in load
    assert "cell In [4] is `%%timeit`: IPython runs the cell in a namespace of its own" in load


def test_notebook_with_magics_input_widgets_and_missing_run_gets_full_marks(tree, tmp_path):
    lab, spec = tree
    notebook = notebook_from_py(
        PROJECT / "reference" / "solutions" / "tree.py",
        tmp_path / "lab.ipynb",
        before=[
            "%%time\nname = input('Your name? ')",
            "%run Tic-Tac-Toe-Bitboard.ipynb",
            "from ipywidgets import widgets\nfrom IPython.display import display\ndisplay(widgets.Button(description='play'))",
        ],
        # exit() made the kernel stop its loop: the next cell hung (or not, by timing)
        after=["%%capture\nprint('hidden')", "exit()", "%%time\nprint(alphabeta('a0', -inf, inf, True))"],
    )
    report = grade_submission(notebook, lab, spec, seed=2)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    load = report.tests[0].output
    assert "cell In [1] raised StdinNotImplementedError" in load
    assert "Tic-Tac-Toe-Bitboard.ipynb" in load
    assert "ipywidgets" not in load  # widgets import and display fine
    assert "cell In [8] raised SystemExit: exit() or quit() stops the kernel" in load
    assert "value of a0: 4" in report.student_output
    # the kernel's own start-up note (with its connection file's path) is not the student's
    assert "Ctrl-C" not in report.student_output and "kernel.json" not in report.student_output


@pytest.mark.timing
def test_infinite_loop_cell_is_interrupted_and_later_cells_still_run(tmp_path):
    lab = get_lab("tree")
    spec = load_spec(FIXTURES / "specs" / "tree_notebook_limits.yaml")
    notebook = notebook_from_py(
        PROJECT / "reference" / "solutions" / "tree.py", tmp_path / "loop.ipynb", before=["while True:\n    pass"]
    )
    report = grade_submission(notebook, lab, spec, seed=1)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
    assert "KeyboardInterrupt" in report.tests[0].output


def test_kernel_killed_by_os_exit_in_a_cell_is_reported_and_skipped(tree, tmp_path):
    lab, spec = tree
    notebook = notebook_from_py(
        PROJECT / "reference" / "solutions" / "tree.py", tmp_path / "exit.ipynb", after=["import os\nos._exit(3)"]
    )
    report = grade_submission(notebook, lab, spec, seed=1)
    assert report.score == report.max_score
    assert "killed the kernel" in report.tests[0].output


BAD_NOTEBOOKS = {
    "invalid_json.ipynb": ('{"cells": [', "invalid JSON at line 1"),
    "empty.ipynb": ("", "empty"),
    "v3.ipynb": (
        json.dumps({"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}),
        "format version 3",
    ),
    "no_cells.ipynb": (nbformat.writes(nbformat.v4.new_notebook()), "no cells"),
    "markdown_only.ipynb": (
        nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# hi")])),
        "no code cells",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_NOTEBOOKS))
def test_bad_notebooks_are_load_failures(tree, tmp_path, name):
    lab, spec = tree
    content, reason = BAD_NOTEBOOKS[name]
    path = tmp_path / name
    path.write_text(content)
    report = grade_submission(path, lab, spec, seed=1)
    assert report.score == 0
    assert not report.tests[0].passed and report.tests[0].kind == "load"
    assert reason in report.tests[0].output
    assert name in report.tests[0].output


def test_non_python_kernel_is_a_load_failure(tree, tmp_path):
    lab, spec = tree
    path = notebook_from_py(
        PROJECT / "reference" / "solutions" / "tree.py",
        tmp_path / "r.ipynb",
        kernel={"name": "ir", "display_name": "R", "language": "R"},
    )
    report = grade_submission(path, lab, spec, seed=1)
    assert report.score == 0 and "'R'" in report.tests[0].output and "Python 3" in report.tests[0].output


def test_missing_api_in_notebook_names_the_function(tree, tmp_path):
    lab, spec = tree
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def alpha_beta(n, a, b, m):\n    return 0")])
    path = tmp_path / "misnamed.ipynb"
    nbformat.write(notebook, path)
    report = grade_submission(path, lab, spec, seed=1)
    assert report.score == 0
    assert "no `alphabeta` is defined after the last cell" in report.tests[0].output


def test_huge_saved_outputs_are_dropped_before_running(tree, tmp_path):
    lab, spec = tree
    path = notebook_from_py(PROJECT / "reference" / "solutions" / "tree.py", tmp_path / "big.ipynb")
    notebook = nbformat.read(path, 4)
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 20_000_000)]
    nbformat.write(notebook, path)
    report = grade_submission(path, lab, spec, seed=1)
    assert report.score == report.max_score
    assert "x" * 1000 not in report.student_output


@pytest.mark.parametrize("lab", ["tree", "negamax", "tictactoe"])
def test_checked_in_notebook_matches_the_generator(lab):
    if not (PROJECT / "reference" / "solutions" / f"{lab}.py").exists():
        pytest.skip(f"no lab {lab}")
    assert exercise_notebook_path(lab).read_text() == exercise_notebook_text(lab), (
        f"run: abgrade exercise {lab} --notebook -o exercises/{lab}/lab.ipynb --force"
    )


def test_cli_grades_a_notebook(tmp_path):
    path = notebook_from_py(PROJECT / "reference" / "solutions" / "tree.py", tmp_path / "lab.ipynb")
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(path), "--lab", "tree", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert results["score"] == results["extra_data"]["max_score"] > 0


def test_what_the_code_prints_during_the_cases_is_kept_as_for_py(tree, tmp_path):
    lab, spec = tree
    source = FIXTURES / "tree" / "correct_seed_style.py"
    notebook = notebook_from_py(source, tmp_path / "prints.ipynb")
    as_py = grade_submission(source, lab, spec, seed=3)
    as_nb = grade_submission(notebook, lab, spec, seed=3)
    assert as_py.student_output.count("\n") > 100  # the seed style prints every expansion
    assert as_nb.student_output.count("\n") == as_py.student_output.count("\n")
