"""`limits.load_seconds` (issue 14 item 4): loading (the notebook's cells and the
observer's start) has its own time limit, at most the submission's; the spec loader
checks it with file:line errors like every other limit."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.spec import Limits, SpecError, load_spec

TESTS = Path(__file__).resolve().parent
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"
CASE = """cases:
  - name: tiny
    checks: [value]
    graph: {a0: [b0, b1]}
    terminal_nodes: {b0: 1, b1: 2}
    expect: {value: 2, nodes: 3, pruned: []}
"""


def _spec(tmp_path: Path, limits: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(f"lab: tree\nlimits:\n{limits}checks:\n  load: {{points: 1}}\n  value: {{points: 1}}\n" + CASE)
    return path


def test_the_default_load_limit_never_exceeds_the_submission_budget(tmp_path):
    assert load_spec(_spec(tmp_path, "  case_seconds: 1\n")).limits.load_seconds == Limits.load_seconds == 60
    assert load_spec(_spec(tmp_path, "  submission_seconds: 20\n")).limits.load_seconds == 20
    limits = load_spec(_spec(tmp_path, "  submission_seconds: 50\n  load_seconds: 12.5\n")).limits
    assert (limits.load_seconds, limits.submission_seconds) == (12.5, 50)


@pytest.mark.parametrize(
    ("limits", "line", "problem"),
    [
        ("  submission_seconds: 20\n  load_seconds: 30\n", 4, "must be at most limits.submission_seconds (20), got 30"),
        ("  load_seconds: -1\n", 3, "must be a non-negative number, got -1"),
        ("  load_seconds: soon\n", 3, "must be a non-negative number, got 'soon'"),
    ],
)
def test_a_wrong_load_limit_names_file_line_and_field(tmp_path, limits, line, problem):
    path = _spec(tmp_path, limits)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert str(caught.value).startswith(f"{path}:{line}: limits.load_seconds: {problem}"), str(caught.value)


@pytest.mark.slow
@pytest.mark.timing
def test_cells_after_the_load_limit_are_named_as_not_run(tmp_path):
    """Cells share the load limit (CPU time): a cell past its own limit is interrupted,
    one past what is left of the load limit too, and the cells after it never run."""
    spec = load_spec(_spec(tmp_path, "  cell_seconds: 2\n  load_seconds: 3\n  submission_seconds: 30\n"))
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(SOLUTION.read_text()),  # In [1]
            nbformat.v4.new_code_cell("while True:\n    pass"),  # In [2]: interrupted at 2 s of CPU time
            nbformat.v4.new_code_cell("while True:\n    pass"),  # In [3]: cut at the load limit (3 s in all)
            nbformat.v4.new_code_cell("x = 1"),  # In [4]: never run
        ]
    )
    path = tmp_path / "slow.ipynb"
    nbformat.write(notebook, path)
    report = grade_submission(path, get_lab("tree"), spec, seed=1)
    load = report.tests[0].output
    assert report.score == report.max_score, load
    assert "cell In [2] ran past the time limit of 2 s of CPU time per notebook cell and was interrupted" in load
    assert "cell In [3] ran past the time limit of 3 s of CPU time for loading the notebook and was interrupted" in load
    assert "cell In [4] was not run: the time limit of 3 s of CPU time for loading the notebook ran out" in load


@pytest.mark.timing
def test_a_module_level_loop_costs_the_load_limit_not_the_submission_budget(tmp_path):
    """A `.py` that loops at import is interrupted at `load_seconds` of CPU time (2 s
    here), not at the submission's 60 s, and the load test says which limit it was."""
    looping = tmp_path / "loops.py"
    looping.write_text("while True:\n    pass\n")
    spec = load_spec(_spec(tmp_path, "  submission_seconds: 60\n  load_seconds: 2\n"))
    report = grade_submission(looping, get_lab("tree"), spec, seed=1)
    load = next(t for t in report.tests if t.kind == "load")
    assert not load.passed  # interrupted before it defined anything
    assert "the import ran past the time limit of 2 s of CPU time for loading and was interrupted" in load.output


def test_a_memory_limit_below_the_floor_is_a_spec_error_with_its_line(tmp_path):
    path = _spec(tmp_path, "  memory_mb: 64\n")
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert str(error.value).startswith(f"{path}:3: limits.memory_mb: must be at least 128 (MB), got 64")


def test_a_notebook_kernel_starts_and_grades_under_a_small_memory_limit(tmp_path):
    """Issue 14: a kernel didn't start under an address-space cap of 512 MB; resident
    memory is what is capped now (a memory cgroup where the machine has one)."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SOLUTION.read_text())])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "lab.ipynb"
    nbformat.write(notebook, path)
    report = grade_submission(path, get_lab("tree"), load_spec(_spec(tmp_path, "  memory_mb: 256\n")), seed=1)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
