"""One rule for code that runs too long while a submission loads (issue 22, point 5): a
`.py` import and a notebook cell that run past their limit (CPU time) are interrupted
with a KeyboardInterrupt, and grading goes on with what they had defined by then; code
that goes on after its interrupt is stopped, and then loading fails, in both forms. The
load test names the limit that stopped the code. Real worker processes and kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.spec import load_spec

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"
SPEC = """lab: tree
limits: {case_seconds: 2, cell_seconds: 1, load_seconds: 2, submission_seconds: 30}
checks:
  load: {points: 1}
  value: {points: 1}
  limits: {points: 1}
cases:
  - name: tiny
    checks: [value]
    graph: {a0: [b0, b1]}
    terminal_nodes: {b0: 1, b1: 2}
    expect: {value: 2, nodes: 3, pruned: []}
"""
# limits as short as a loop's interrupt needs: each loop burns its limit's CPU time, and
# the stubborn ones the interrupt's grace on top
LOOP = "while True:\n    pass"
CAUGHT = "try:\n    while True:\n        pass\nexcept KeyboardInterrupt:\n    print('stopped by the grader')"
STUBBORN = "while True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        pass"
PY_LIMIT = "the import ran past the time limit of 2 s of CPU time for loading"
CELL_LIMIT = "cell In [4] ran past the time limit of 1 s of CPU time per notebook cell"  # the solution is 3 code cells

pytestmark = [pytest.mark.slow, pytest.mark.timing]  # kernels, and loops that run to their limits


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "tree.yaml"
    path.write_text(SPEC)
    return load_spec(path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, spec):
    """The tree lab's solution followed by `last` (a second cell in a notebook), graded
    once per form and ending."""
    reports: dict = {}

    def grade(form: str, last: str):
        if (form, last) not in reports:
            folder = tmp_path_factory.mktemp(form)
            source = folder / "lab.py"
            source.write_text(SOLUTION.read_text() + "\n\n" + last + "\n")
            path = source if form == "py" else notebook_from_py(SOLUTION, folder / "lab.ipynb", after=[last])
            reports[form, last] = grade_submission(path, get_lab("tree"), spec, seed=1)
        return reports[form, last]

    return grade


@pytest.mark.parametrize("form", ["py", "ipynb"])
def test_a_loop_after_the_definitions_is_interrupted_and_the_definitions_are_graded(graded, form):
    report = graded(form, LOOP)
    load = report.tests[0].output
    assert report.score == report.max_score, load
    said = PY_LIMIT if form == "py" else CELL_LIMIT
    assert f"{said} and was interrupted (KeyboardInterrupt)" in load, load


@pytest.mark.parametrize("form", ["py", "ipynb"])
def test_a_loop_that_catches_its_interrupt_and_ends_is_graded(graded, form):
    report = graded(form, CAUGHT)
    load = report.tests[0].output
    assert report.score == report.max_score, load
    assert "stopped by the grader" in report.student_output
    said = PY_LIMIT if form == "py" else CELL_LIMIT
    assert said in load and "interrupted" in load, load


@pytest.mark.parametrize("form", ["py", "ipynb"])
def test_a_loop_that_goes_on_after_its_interrupt_fails_load(graded, form):
    report = graded(form, STUBBORN)
    load = report.tests[0]
    assert not load.passed and report.score == 0
    said = "loading (the import of the submission) ran past" if form == "py" else CELL_LIMIT
    assert said in load.output and "went on after its interrupt (KeyboardInterrupt) until it was stopped" in load.output


@pytest.mark.parametrize("last", [LOOP, CAUGHT, STUBBORN], ids=["loop", "caught", "stubborn"])
def test_a_py_and_its_notebook_get_the_same_verdicts(graded, last):
    as_py, as_notebook = graded("py", last), graded("ipynb", last)
    assert [(t.name, t.passed) for t in as_py.tests] == [(t.name, t.passed) for t in as_notebook.tests]
    assert as_py.score == as_notebook.score


def test_a_loop_before_the_definitions_fails_a_py_but_not_the_next_cell(graded, spec, tmp_path):
    """What was defined before the interruption is graded: in a `.py` that is nothing
    when the loop comes first (the rest of the file never runs); in a notebook the next
    cell still runs, as it would in Jupyter."""
    source = tmp_path / "first.py"
    source.write_text(LOOP + "\n\n" + SOLUTION.read_text())
    as_py = grade_submission(source, get_lab("tree"), spec, seed=1)
    notebook = notebook_from_py(SOLUTION, tmp_path / "first.ipynb", before=[LOOP])
    as_notebook = grade_submission(notebook, get_lab("tree"), spec, seed=1)
    assert not as_py.tests[0].passed and "no `alphabeta` is defined" in as_py.tests[0].output
    assert as_notebook.score == as_notebook.max_score
    assert "cell In [1] ran past the time limit of 1 s of CPU time per notebook cell" in as_notebook.tests[0].output
