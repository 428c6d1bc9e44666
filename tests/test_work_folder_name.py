"""The student's work folder has a random name on every run (a predictable one in a shared
/tmp invites a symlink attack), and a submission may print it: its cwd, `__file__`, HOME,
TMPDIR, or a cell error quoting a path in it. The grader shows the folder as one fixed name
(text.without_work_folder), so the same file gives the same results.json and terminal
output on every run, and nothing the student prints can make that text longer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.spec import load_spec, spec_path
from grader.text import OUTPUT_CHARS, WORK_FOLDER, without_work_folder

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
SOLUTION = (TESTS / "fixtures" / "tree" / "correct_seed_style.py").read_text()

PRINTS_ITS_FOLDER = (
    "import os, tempfile\n"
    "print('cwd', os.getcwd(), 'file', __file__, 'tmp', tempfile.gettempdir(), 'home', os.path.expanduser('~'))\n"
    + SOLUTION
)


def test_the_longest_path_goes_first_and_other_text_stays() -> None:
    folder = "/tmp/abgrade-1234abcd"
    resolved = "/private/tmp/abgrade-1234abcd"
    text = f"cwd {resolved}/lab.py and {folder}/x, not /tmp/abgrade-other"
    assert without_work_folder(text, folder, resolved) == (
        f"cwd {WORK_FOLDER}/lab.py and {WORK_FOLDER}/x, not /tmp/abgrade-other"
    )
    assert without_work_folder(text) == text
    assert without_work_folder("a/b", "a") == "a/b"  # a path no longer than the stand-in is left


@given(st.text(max_size=200), st.text(min_size=14, max_size=40))
def test_the_stand_in_never_makes_text_longer(text: str, folder: str) -> None:
    assert len(without_work_folder(text + folder + text, folder)) <= len(text + folder + text)


def grade_twice(path: Path) -> list[tuple[str, str]]:
    """Two `abgrade grade` runs: (results.json without its time, what the command printed)."""
    runs = []
    for run in range(2):
        out = path.parent / f"{path.stem}-{run}.json"
        done = subprocess.run(
            [sys.executable, "-m", "grader", "grade", str(path), "--lab", "tree", "--json", str(out)],
            capture_output=True,
            text=True,
            cwd=PROJECT,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        results = json.loads(out.read_text())
        results.pop("execution_time")
        runs.append((json.dumps(results, sort_keys=True), done.stdout))
    return runs


def test_a_py_that_prints_its_folder_prints_the_same_text_every_run(tmp_path: Path) -> None:
    submission = tmp_path / "prints_folder.py"
    submission.write_text(PRINTS_ITS_FOLDER)
    first, second = grade_twice(submission)
    assert first == second
    results = json.loads(first[0])
    assert "abgrade-" not in first[0]
    assert f"cwd {WORK_FOLDER} file {WORK_FOLDER}/prints_folder.py" in results["output"], results["output"]
    assert results["score"] == 75


def test_a_notebook_cell_error_quoting_a_path_in_its_folder_reads_the_same_every_run(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import os\nprint('cwd', os.getcwd())"),
        nbformat.v4.new_code_cell(SOLUTION),
        nbformat.v4.new_code_cell("open(os.path.join(os.getcwd(), 'notes.txt'))"),
    ]
    path = tmp_path / "cell_error.ipynb"
    nbformat.write(notebook, path)
    first, second = grade_twice(path)
    assert first == second
    results = json.loads(first[0])
    assert "abgrade-" not in first[0]
    assert f"{WORK_FOLDER}/notes.txt" in results["tests"][0]["output"], results["tests"][0]["output"]
    assert f"cwd {WORK_FOLDER}" in results["output"]


def test_printing_the_folder_many_times_stays_within_the_output_bound(tmp_path: Path) -> None:
    """Hostile: the stand-in is shorter than the path, so replacing grows nothing; a
    student who prints the stand-in itself only prints text."""
    submission = tmp_path / "floods_folder.py"
    submission.write_text(
        f"import os\nfor _ in range(10_000):\n    print(os.getcwd(), {WORK_FOLDER!r}, end=' ')\n" + SOLUTION
    )
    report = grade_submission(submission, get_lab("tree"), load_spec(spec_path("tree")))
    assert report.student_output.count(WORK_FOLDER) > 100
    assert len(report.student_output) <= OUTPUT_CHARS + 200  # the bound and the sandbox's truncation note
    assert "abgrade-" not in report.student_output
