"""A batch whose TMPDIR is not under /tmp (a CI runner's `_temp` in its work folder, or
/var/tmp): the run's and the job's folders are 0700 and the grader's, so the student's
uid needs the way to its own work folder opened, and nothing else on that way shown.
Under /tmp the student's private /tmp hid this (issue found 2026-11-26: every submission
of such a batch was 'not graded: could not be confined')."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.identity import grader_is_root
from tests.notebook_builder import notebook_from_py

FIXTURES = Path(__file__).parent / "fixtures"
OUTSIDE_TMP = Path("/var/tmp")

pytestmark = pytest.mark.skipif(
    not grader_is_root() or not os.access(OUTSIDE_TMP, os.W_OK),
    reason="needs root (student uids) and a writable /var/tmp",
)


@pytest.fixture
def tmpdir_outside_tmp():
    top = Path(tempfile.mkdtemp(prefix="abgrade-test-", dir=OUTSIDE_TMP))
    long = top / ("runner-work-" + "w" * 40) / "_temp"  # long, as a CI runner's
    long.mkdir(parents=True)
    try:
        yield long
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.timing
def test_a_batch_grades_with_tmpdir_outside_tmp_and_shows_no_one_else_on_the_way(tmp_path, tmpdir_outside_tmp):
    correct = FIXTURES / "tree" / "correct_fail_hard.py"
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copyfile(correct, folder / "ann.py")
    notebook_from_py(correct, folder / "bob.ipynb")
    shutil.copyfile(FIXTURES / "tmpdir" / "snoops_up.py", folder / "eve.py")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--lab", "tree", "--out", str(out), "--jobs", "2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmpdir_outside_tmp)},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "could not be confined" not in done.stdout
    with open(out / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert sorted(rows) == ["ann", "bob", "eve"], done.stdout
    scores = {student: float(row["score"]) for student, row in rows.items()}
    # every one gets the full marks a correct search earns: eve saw nothing above its folder
    assert len(set(scores.values())) == 1 and scores["ann"] > 0, scores
    assert not any(tmpdir_outside_tmp.iterdir())  # the run's folder is gone


WRITES_ITS_FOLDER = """
import os
try:
    with open(os.path.join(os.getcwd(), "note.txt"), "w") as handle:
        handle.write("mine")
    print("WORKDIR", "WRITABLE")
except OSError as exc:
    print("WORKDIR", "BLOCKED", exc)
"""


def test_a_single_grade_with_tmpdir_outside_tmp_may_write_its_own_work_folder(tmp_path, monkeypatch):
    """A TMPDIR that every user may pass through (no 0700 folder on the way, so nothing
    covers it): the student's work folder, left where it is, must still be writable (it
    was read-only, EROFS, with the rest of that file system)."""
    from grader.grading import grade_submission
    from grader.labs import get_lab
    from grader.spec import load_spec

    top = Path(tempfile.mkdtemp(prefix="abgrade-test-", dir=OUTSIDE_TMP))
    try:
        os.chmod(top, 0o755)
        monkeypatch.setattr(tempfile, "tempdir", str(top))
        submission = tmp_path / "lab.py"
        submission.write_text(
            WRITES_ITS_FOLDER + (Path(__file__).parent.parent / "reference/solutions/tree.py").read_text()
        )
        report = grade_submission(
            submission, get_lab("tree"), load_spec(FIXTURES / "specs" / "tree_hostile_limits.yaml"), seed=1
        )
        assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]
        said = [line.split()[1] for line in report.student_output.splitlines() if line.startswith("WORKDIR")]
        assert said == ["WRITABLE"], report.student_output
    finally:
        shutil.rmtree(top, ignore_errors=True)
